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
  team events pair them), whatever order the boards come in;
* with the event's rules (its ``[[events]]`` entry: ``format``, ``rounds``,
  ``sims``, ``seed``, ``top``), each team's chance of winning the event and of
  a place in the top ``top``: :func:`~livegain.core.team_odds.team_win_odds`
  over every match left, from the boards (finished games, games in progress
  with their shown W/D/L, games not started from the ratings). A round robin
  of teams plays the pairs of teams that have not met (``cycles`` times),
  grouped into rounds in the order found (the order does not change who wins);
  a Swiss of teams needs its ``rounds`` (else no odds, and the table says so).
  Each team fields, in the matches left, its strongest players on as many
  boards as the largest match so far had (at most as many as the smallest
  team has shown). Games not started are drawn from the ratings-only model
  the match odds use (``prior``, else the boards' human model's, else the
  draw-rate model); players without a rating count at the field's mean
  (:func:`~livegain.core.event_table.field_ratings`, as for the players'
  odds). No odds (and the table's ``note`` says why) when a board has no
  round number, a board of an earlier round has no result yet, the current
  round is past the last, or the simulation cannot read the boards.

Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from livegain.core.event_table import (
    SWISS_SIMS,
    EventRules,
    GameEntry,
    field_ratings,
    round_number,
)
from livegain.core.human_wdl import RatingsPrior
from livegain.core.odds import GameOdds, game_probabilities
from livegain.core.scoring import outcome
from livegain.core.snapshot import PlayerInfo, player_key
from livegain.core.standings import Result
from livegain.core.swiss_odds import SwissChance
from livegain.core.team_match import MatchPoints, TeamBoard, TeamMatchOdds, team_match_odds
from livegain.core.team_standings import (
    OLYMPIAD_TIEBREAKS,
    TeamGame,
    TeamMatch,
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
    odds: dict[str, SwissChance] | None = None
    """Each team's chances of first place and of the top ``top_k`` (None: no odds)."""
    sims: int = 0
    top_k: int | None = None
    rounds: int | None = None
    """Rounds in all, when known."""
    note: str | None = None
    """Why there are no odds, when the rules ask for them and they cannot be had."""


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
    rules: EventRules | None = None,
) -> TeamTable | None:
    """The table of a team event's boards (None: not a team event); with the
    event's ``rules`` (a format), each team's chances of winning it."""
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
    table = TeamTable(standings, latest, tuple(lines), why)
    if rules is None or rules.format not in ("round-robin", "swiss"):
        return table
    return _with_odds(table, games, rules, prior, tiebreaks, points, matches)


def _with_odds(
    table: TeamTable,
    games: Sequence[GameEntry],
    rules: EventRules,
    prior: RatingsPrior | None,
    tiebreaks: Sequence[str],
    points: MatchPoints | None,
    matches: Sequence[TeamMatch],
) -> TeamTable:
    """The table with each team's chances of winning the event (see the module);
    without them, the table's ``note`` says why."""
    teams = sorted({t for g in games for t in (g.white_team, g.black_team) if t})
    n = len(teams)
    rounds: int | None = None
    if rules.format == "round-robin":
        rounds = rules.cycles * (n - 1 if n % 2 == 0 else n)
    elif rules.rounds is not None:
        rounds = rules.rounds
    current = table.round
    if current is None or any(round_number(g.round) is None for g in games):
        note = "The boards carry no round numbers: no odds of winning the event."
        return replace(table, rounds=rounds, note=note)
    unfinished = sorted(
        {r for g in games if (r := round_number(g.round) or 0) < current and not _over(g.result)}
    )
    if unfinished:
        which = ", ".join(str(r) for r in unfinished)
        has = f"Rounds {which} have" if len(unfinished) > 1 else f"Round {which} has"
        note = f"{has} boards without a result: no odds of winning the event until they have one."
        return replace(table, rounds=rounds, note=note)
    schedule: list[list[tuple[str, str]]] | None = None
    if rules.format == "round-robin":
        met = Counter(frozenset((m.a, m.b)) for m in matches)
        left = [
            (a, b)
            for i, a in enumerate(teams)
            for b in teams[i + 1 :]
            for _ in range(max(0, rules.cycles - met[frozenset((a, b))]))
        ]
        schedule = _grouped(left)
        total = current + len(schedule)
    elif rules.rounds is None:
        note = "A Swiss of teams without its number of rounds: no odds of winning it."
        return replace(table, note=note)
    else:
        total = rules.rounds
    if current > total:
        return replace(table, rounds=rounds, note=f"Round {current} is past the {total} rounds.")
    team_of: dict[str, str] = {}
    infos: dict[str, PlayerInfo] = {}
    for g in games:
        for info, team in ((g.white, g.white_team), (g.black, g.black_team)):
            key = player_key(info)
            team_of[key] = team or ""
            infos[key] = info
    ratings = field_ratings(infos)[0]  # an unrated player at the field's mean, as for players
    finished: list[Result] = []
    live: list[tuple[str, str, tuple[float, float, float]]] = []
    upcoming: list[tuple[str, str]] = []
    # in board order: a match's first board gives the teams' colours
    for g in sorted(games, key=lambda g: (g.board is None, g.board or 0, g.board_id)):
        wk, bk = player_key(g.white), player_key(g.black)
        if _over(g.result):
            finished.append(Result.game(wk, bk, g.result, round_number(g.round)))
        elif g.plies > 0 and g.wdl is not None and sum(g.wdl) > 0:
            live.append((wk, bk, g.wdl))
        else:  # not started, or no position evaluated yet: from the ratings
            upcoming.append((wk, bk))
    # the lineup's size: the most boards of one match so far, at most the smallest roster
    per_match = Counter(
        (round_number(g.round), frozenset((g.white_team, g.black_team))) for g in games
    )
    roster = Counter(team_of.values())
    boards = min(max(per_match.values()), min(roster.values()))
    top_k = min(rules.top_k, n)
    sims = rules.sims or SWISS_SIMS
    if prior is None:  # as the match odds and the players' table: the boards' human model
        prior = next((g.prior for g in games if g.prior is not None), None)
    from livegain.core.team_odds import team_win_odds  # NumPy, imported when first used

    try:
        odds = team_win_odds(
            team_of,
            ratings,
            finished,
            live,
            upcoming,
            round=current,
            rounds_total=total,
            schedule=schedule,
            boards=boards,
            points=points,
            tiebreaks=[tb for tb in tiebreaks if tb != "MP"],
            sims=sims,
            seed=rules.seed,
            top_k=top_k,
            draw_rate=rules.draw_rate,
            prior=prior,
            precision=rules.precision,
        )
    except ValueError as exc:  # boards the simulation cannot read: the table without odds
        return replace(table, rounds=rounds, note=f"No odds of winning the event: {exc}.")
    return replace(table, odds=odds, sims=odds.sims, top_k=top_k, rounds=rounds)


def _over(result: str) -> bool:
    """A finished board: a result, or a forfeit (as the team standings count them)."""
    try:
        outcome(result)
    except ValueError:
        return False
    return True


def _grouped(pairs: Sequence[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The pairs as rounds: each pair in the first round where neither team plays yet."""
    rounds: list[list[tuple[str, str]]] = []
    busy: list[set[str]] = []
    for a, b in pairs:
        for k, playing in enumerate(busy):
            if a not in playing and b not in playing:
                rounds[k].append((a, b))
                playing.update((a, b))
                break
        else:
            rounds.append([(a, b)])
            busy.append({a, b})
    return rounds


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
