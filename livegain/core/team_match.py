"""A team match in progress: its score board by board, and its odds.

A team match (an Olympiad round, a league fixture) is played on k boards
between two teams; each board is a game between a player of each. The match
is won by the team with more than half the game points (board points), drawn
at exactly half; the usual match points are 2 for a win, 1 for a draw, 0 for a
loss (FIDE's team competitions: configurable).

Each board is one of:

* **finished**: its result (White's view, ``1-0``, ``0-1``, ``1/2-1/2``; a
  forfeit ``+/-``, ``-/+``, ``-/-`` counts as the win, the loss, or nothing
  for both);
* **in progress** or **not started**: its win/draw/loss, White's view (the
  board's shown W/D/L while in progress, the ratings-only prior before the
  first move).

Team A has White on some boards and Black on others (``a_white``): each
board's chances are turned to team A's view, and the distribution of team A's
game points over the boards left is exact (the boards are independent:
:func:`livegain.core.odds.match_odds_games` convolves them), so the match's
win, draw and loss for team A, its expected game points and expected match
points are exact too. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from livegain.core.odds import GameOdds, match_odds_games
from livegain.core.scoring import outcome


@dataclass(frozen=True)
class TeamBoard:
    """One board of a team match: who has White, and where its game stands."""

    a_white: bool
    """Team A's player has White on this board."""
    result: str | None = None
    """The finished game's result (White's view); None while it is not over."""
    wdl: GameOdds | None = None
    """While not over: its win/draw/loss, White's view (None with a result)."""

    def __post_init__(self) -> None:
        if self.result is not None:
            outcome(self.result)  # ValueError: not a finished result
        if (self.result is None) == (self.wdl is None):
            raise ValueError("a board has either a result or a win/draw/loss, not both")

    def points_a(self) -> tuple[float, float]:
        """A finished board's game points, team A's then team B's."""
        assert self.result is not None
        white, black, _ = outcome(self.result)
        return (white, black) if self.a_white else (black, white)

    def odds_a(self) -> GameOdds:
        """A board not over: its chances from team A's view."""
        assert self.wdl is not None
        return self.wdl if self.a_white else self.wdl.swapped()


@dataclass(frozen=True)
class MatchPoints:
    """Match points for a match won, drawn and lost (FIDE: 2, 1, 0)."""

    win: float = 2.0
    draw: float = 1.0
    loss: float = 0.0


@dataclass(frozen=True)
class TeamMatchOdds:
    """A team match's score so far and its chances, team A's view."""

    score_a: float
    """Game points of the finished boards, team A."""
    score_b: float
    boards_left: int
    win: float
    draw: float
    loss: float
    expected_a: float
    """Expected final game points of team A."""
    expected_match_points_a: float

    @property
    def decided(self) -> bool:
        """No board left can change who wins the match."""
        return max(self.win, self.draw, self.loss) >= 1.0 - 1e-12


def team_match_odds(
    boards: Sequence[TeamBoard], points: MatchPoints | None = None
) -> TeamMatchOdds:
    """The match's score and exact chances from its boards (see the module docstring)."""
    if not boards:
        raise ValueError("a team match has at least one board")
    mp = points or MatchPoints()
    score_a = score_b = 0.0
    left: list[GameOdds] = []
    for board in boards:
        if board.result is not None:
            a, b = board.points_a()
            score_a += a
            score_b += b
        else:
            left.append(board.odds_a())
    # Boards left: A's share of each is a win, a draw or a loss of one point in all;
    # double forfeits give nobody anything, so the comparison is of the points given.
    odds = match_odds_games(left, score_a, score_b)
    expected = score_a + sum(g.expected_score for g in left)
    return TeamMatchOdds(
        score_a=score_a,
        score_b=score_b,
        boards_left=len(left),
        win=odds.a_wins,
        draw=odds.draw,
        loss=odds.b_wins,
        expected_a=expected,
        expected_match_points_a=odds.a_wins * mp.win + odds.draw * mp.draw + odds.b_wins * mp.loss,
    )
