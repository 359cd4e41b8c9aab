"""A team event's table from its boards: team standings and the matches in progress.

The boards of an event whose games carry ``WhiteTeam``/``BlackTeam`` make a
team event when the tags name teams, not federations: within each round no
game is between two players of one team, and each team meets one other team
(:func:`team_event`; some individual events write the player's federation
there: players of one federation then meet several others in a round, or each
other). The table is:

* the team standings of the finished matches
  (:class:`~livegain.core.team_standings.TeamStandings`: match points, game
  points, the tie-breaks);
* each match of the latest round, board by board: a finished board's result,
  a board in progress with its shown W/D/L, a board not started with the
  ratings-only W/D/L (the boards' human model's prior, else the draw-rate
  model; an unrated player at the field's mean rating); and the match's exact
  chances (:func:`~livegain.core.team_match.team_match_odds`), team A being
  the team with White on the match's first board (the first-named team, as
  team events pair them), whatever order the boards come in.

Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from livegain.core.event_table import GameEntry, round_number
from livegain.core.human_wdl import RatingsPrior
from livegain.core.odds import GameOdds, game_probabilities
from livegain.core.team_match import MatchPoints, TeamBoard, TeamMatchOdds, team_match_odds
from livegain.core.team_standings import (
    OLYMPIAD_TIEBREAKS,
    TeamGame,
    TeamStandings,
    team_matches,
)


@dataclass(frozen=True)
class TeamBoardLine:
    """One board of a match: its players, who has White, its result or chances."""

    board: int | None
    white: str
    black: str
    a_white: bool
    result: str
    wdl: tuple[float, float, float] | None
    """While not over: W/D/L, White's view (probabilities); None once finished."""
    live: bool


@dataclass(frozen=True)
class TeamMatchLine:
    round: int
    a: str
    b: str
    odds: TeamMatchOdds
    boards: tuple[TeamBoardLine, ...]


@dataclass(frozen=True)
class TeamTable:
    standings: TeamStandings
    round: int | None
    matches: tuple[TeamMatchLine, ...]
    """The latest round's matches."""
    why: str


def team_event(games: Sequence[GameEntry]) -> tuple[bool, str]:
    """Whether the boards' team tags name teams of a team event, and why."""
    tagged = [g for g in games if g.white_team and g.black_team]
    if not tagged:
        return False, "no WhiteTeam/BlackTeam tags"
    if len(tagged) < len(games):
        return False, "some games have no team tags"
    opponents: dict[tuple[int | None, str], set[str]] = defaultdict(set)
    for g in tagged:
        assert g.white_team is not None and g.black_team is not None
        if g.white_team == g.black_team:
            return False, f"a game within {g.white_team!r}: the tags name federations"
        rnd = round_number(g.round)
        opponents[(rnd, g.white_team)].add(g.black_team)
        opponents[(rnd, g.black_team)].add(g.white_team)
    several = [k for k, v in opponents.items() if len(v) > 1]
    if several:
        rnd, team = several[0]
        return False, f"{team!r} meets several teams in round {rnd}: the tags name federations"
    return True, "WhiteTeam/BlackTeam: each team meets one team per round"


def team_table(
    games: Sequence[GameEntry],
    *,
    prior: RatingsPrior | None = None,
    draw_rate: float = 0.5,
    tiebreaks: Sequence[str] = OLYMPIAD_TIEBREAKS,
    points: MatchPoints | None = None,
) -> TeamTable | None:
    """The table of a team event's boards (None: not a team event)."""
    is_team, why = team_event(games)
    if not is_team:
        return None
    rounds = [r for g in games if (r := round_number(g.round)) is not None]
    latest = max(rounds) if rounds else None
    # in board order: a match's first team is the one with White on its first board
    ordered = sorted(
        games, key=lambda g: (round_number(g.round) or 0, g.board is None, g.board or 0, g.board_id)
    )
    team_games = [
        TeamGame(round_number(g.round) or 0, g.white_team or "", g.black_team or "", g.result)
        for g in ordered
    ]
    matches = team_matches(team_games)
    standings = TeamStandings.from_matches(matches, tiebreaks, points=points)
    rated = [r for g in games for r in (g.white.rating, g.black.rating) if r is not None]
    mean = sum(rated) / len(rated) if rated else None
    lines = []
    for m in matches:
        if m.round != (latest or 0):
            continue
        boards = [
            g
            for g in games
            if (round_number(g.round) or 0) == m.round
            and {g.white_team, g.black_team} == {m.a, m.b}
        ]
        boards.sort(key=lambda g: (g.board is None, g.board or 0, g.board_id))
        shown = tuple(_board(g, m.a, prior, draw_rate, mean) for g in boards)
        odds = team_match_odds(
            [
                TeamBoard(b.a_white, b.result if b.wdl is None else None, _odds(b.wdl))
                for b in shown
            ],
            points,
        )
        lines.append(TeamMatchLine(m.round, m.a, m.b, odds, shown))
    return TeamTable(standings, latest, tuple(lines), why)


def _odds(wdl: tuple[float, float, float] | None) -> GameOdds | None:
    return None if wdl is None else GameOdds(*wdl)


def _board(
    g: GameEntry, team_a: str, prior: RatingsPrior | None, draw_rate: float, mean: float | None
) -> TeamBoardLine:
    a_white = g.white_team == team_a
    if g.result != "*":
        return TeamBoardLine(g.board, g.white.name, g.black.name, a_white, g.result, None, False)
    if g.wdl is not None and sum(g.wdl) > 0:
        total = sum(g.wdl)
        wdl = (g.wdl[0] / total, g.wdl[1] / total, g.wdl[2] / total)
    else:
        white = g.white.rating if g.white.rating is not None else mean
        black = g.black.rating if g.black.rating is not None else mean
        model = prior or g.prior
        if model is not None:
            wdl = model.probabilities(white, black)
        else:
            odds = game_probabilities((white or 0.0) - (black or 0.0), draw_rate)
            wdl = (odds.win, odds.draw, odds.loss)
    return TeamBoardLine(g.board, g.white.name, g.black.name, a_white, "*", wdl, g.plies > 0)
