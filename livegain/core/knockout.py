"""A knockout mini-match: the chance of going through, tie-breaks included.

A knockout round (the FIDE World Cup) is a mini-match of a few classical
games; when it is level, tie-break stages follow in order (the World Cup's:
two rapid games, two faster rapid games, two blitz games), each a mini-match
of its own that ends the tie when it is not level; when every stage is level,
an **Armageddon** game decides: a draw sends its Black player through.

Given the score of the stage being played, the game in progress (its
win/draw/loss), the games left in that stage and the stages after it, each
game's chances from player A's view (so that colours, a White advantage and
each stage's own time control are the caller's: :class:`Stage` holds one
:class:`~livegain.core.odds.GameOdds` per game), the chance that A goes
through is exact: for each stage, the distribution of the score difference
over its games left (:func:`livegain.core.odds.match_odds_games`) gives
P(A ahead), P(level) and P(B ahead) at its end, and

    P(A through) = P(A ahead) + P(level) x P(A through the stages after).

Without an Armageddon, a tie after the last stage is settled by the last
stage played again until it is not level (a geometric series:
``P(ahead) / (P(ahead) + P(behind))``). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from livegain.core.odds import GameOdds, match_odds_games


@dataclass(frozen=True)
class Stage:
    """A stage of the mini-match: its name and each of its games' chances, A's view."""

    name: str
    games: tuple[GameOdds, ...]


@dataclass(frozen=True)
class Armageddon:
    """The last game: A's chances in it, and whether A has Black (a draw sends
    Black through)."""

    odds: GameOdds
    a_black: bool

    def a_through(self) -> float:
        return self.odds.win + (self.odds.draw if self.a_black else 0.0)


@dataclass(frozen=True)
class Knockout:
    """Where a mini-match stands: the stage being played (its score, the game in
    progress and the games left in it) and the stages after it."""

    stage: Stage
    """The stage being played; its ``games`` are the games not started in it."""
    score_a: float = 0.0
    score_b: float = 0.0
    current: GameOdds | None = None
    """A game of the stage in progress (its chances, A's view), if any."""
    later: tuple[Stage, ...] = ()
    armageddon: Armageddon | None = None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Through:
    """A's chance of going through, and where it is decided."""

    a: float
    """A goes through."""
    in_stage: float
    """Decided in the stage being played (either way)."""
    by_stage: tuple[tuple[str, float], ...]
    """Per later stage (and "Armageddon"): the chance the mini-match reaches it."""

    @property
    def b(self) -> float:
        return 1.0 - self.a


def _level_after(stage: Stage) -> tuple[float, float, float]:
    """A ahead, level, B ahead at the end of a stage played from its start."""
    odds = match_odds_games(list(stage.games))
    return odds.a_wins, odds.draw, odds.b_wins


def through(k: Knockout) -> Through:
    """The exact chance that A goes through (see the module docstring)."""
    left = ([k.current] if k.current is not None else []) + list(k.stage.games)
    now = match_odds_games(left, k.score_a, k.score_b)
    reach = now.draw  # the chance of reaching the next stage
    a = now.a_wins
    by_stage: list[tuple[str, float]] = []
    last: tuple[float, float, float] | None = None
    for stage in k.later:
        by_stage.append((stage.name, reach))
        ahead, level, behind = _level_after(stage)
        a += reach * ahead
        reach *= level
        last = (ahead, level, behind)
    if reach > 1e-15:
        if k.armageddon is not None:
            by_stage.append(("Armageddon", reach))
            a += reach * k.armageddon.a_through()
        elif last is not None and last[0] + last[2] > 0.0:
            # the last stage again, until it is not level
            a += reach * last[0] / (last[0] + last[2])
        else:
            raise ValueError("the mini-match can end level with nothing to break the tie")
    return Through(
        a=min(1.0, max(0.0, a)), in_stage=now.a_wins + now.b_wins, by_stage=tuple(by_stage)
    )


def alternating(
    first_a_white: bool, white: GameOdds, black: GameOdds, n: int
) -> tuple[GameOdds, ...]:
    """``n`` games with colours alternating, A White in the first when
    ``first_a_white``: ``white`` are A's chances with White, ``black`` with Black."""
    return tuple(white if (i % 2 == 0) == first_a_white else black for i in range(n))
