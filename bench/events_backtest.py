"""Back-test of the odds of winning on the real events of the shared data, across formats.

For every event of ``../shared/data/events/`` (Swiss opens, complete and partial
files reported apart; Norway Chess with its Armageddons; the Olympiads; the
World Cups), at each round boundary (before round r, r = 1..last) the odds of
winning the event are scored against who won it (the file's final standings
with the event's scoring and tie-breaks; for a partial file the file's
leader, not the official winner; a knockout's winner from its final):

* ``human``: the product's forecast, the simulation to the end of the event
  (Swiss: ``swiss_win_odds``, later rounds paired in each simulation; round
  robin: ``win_odds``), games not started from the ratings through the human
  W/D/L model's ratings-only prior (classical over the board);
* ``elo``: the same with the plain Elo draw model (draw rate 0.5);
* ``leader``: the current leader(s) on points share 1;
* ``reachable``: every player who can still reach the leader's points alike.

The Olympiads (``team/``): a Swiss of teams (``team_win_odds``: match points
2 / 1 / 0, the Olympiad's tie-breaks, the current round's real boards, later
rounds paired in each simulation, each team's lineup its four highest-rated
players of the file: ``livegain.batch.backtest.team_lineups``), scored against
the first of the file's final team standings; ``leader``: the team(s) first
on match points then tie-breaks; ``reachable``: every team that can still
reach the leader's match points.

The World Cups (``knockout/``): the bracket's exact odds
(``livegain.core.knockout_table``, the World Cup's stages, the final of four
classical games, the bracket ``folded``) before each round, and apart before
each game of each round (``R.G``: the round's earlier games over, game G of
each match on its board, not started); ``higher-rated``: the higher-rated
player wins each match; ``reachable``: every player left alike (each can
still win).

With ``--live-ply N`` also the middle of each round: every game of round r
stopped after ply N (a game over by then counts with its result), its
position evaluated by Stockfish at ``--depth`` through the evaluation cache
(``--cache``, resumable), each game in progress drawn from the human model's
live W/D/L (``live``) against the same moment with those games drawn from the
prior (``mid-prior``).

Unrated players get a rating from round 1's board order (pairing number,
interpolated between rated neighbours: ``livegain.batch.backtest.estimated_ratings``);
players absent from a round (byes, forfeits, withdrawals, boards not
broadcast: not in the files) got nothing for it.

Run: nice .venv/bin/python bench/events_backtest.py [--only qatar,norway,olympiad,world-cup]
        [--swiss-sims 200] [--rr-sims 20000] [--team-sims 2000]
        [--live-ply 40 --depth 10 --cache FILE [--live-only qatar,norway-chess-2024]]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.standings_backtest import human_model, live_evaluations  # noqa: E402
from livegain.batch.backtest import (  # noqa: E402
    LOG_LOSS_FLOOR,
    RELIABILITY_BINS,
    Event,
    brier,
    estimated_ratings,
    event_results,
    event_team_matches,
    higher_rated_forecast,
    knockout_boards,
    knockout_winner,
    leader_forecast,
    outcome_shares,
    reachable_forecast,
    read_event,
    reliability,
    team_lineups,
    team_winners,
    winner_log_loss,
)
from livegain.core.event_table import EventRules  # noqa: E402
from livegain.core.human_wdl import CLASSICAL_OTB, HumanWdlModel, RatingsPrior  # noqa: E402
from livegain.core.knockout import WORLD_CUP_STAGES, KnockoutRules, StageRule  # noqa: E402
from livegain.core.knockout_table import KnockoutTable, knockout_table  # noqa: E402
from livegain.core.scoring import STANDARD, Scoring  # noqa: E402
from livegain.core.standings import Result, Standings  # noqa: E402
from livegain.core.swiss_odds import swiss_win_odds  # noqa: E402
from livegain.core.team_match import MatchPoints  # noqa: E402
from livegain.core.team_odds import team_win_odds  # noqa: E402
from livegain.core.team_standings import TeamStandings  # noqa: E402
from livegain.core.tournament_odds import InProgress, win_odds  # noqa: E402

EVENTS = REPO.parent / "shared" / "data" / "events"
PARTIAL = (
    "european-rapid-ch-2025-partial",
    "norway-chess-open-gm-2025",
    "reykjavik-open-2025-partial",
)
"""Files that hold only the broadcast boards (README of the shared data)."""
SWISS_TIEBREAKS = ("BH-C1", "BH", "SB")
ROUND_ROBIN_TIEBREAKS = ("DE", "SB", "WIN")
KINDS = ("human", "elo", "live", "mid-prior", "leader", "reachable", "higher-rated")
TEAM_BOARDS = 4
"""Boards of an Olympiad match."""
WORLD_CUP_RULES = KnockoutRules(
    round_stages=((7, (StageRule("classical", 4), *WORLD_CUP_STAGES[1:])),),
    bracket="folded",
)
"""The World Cup's stages (``livegain.core.knockout``); the final (round 7 of
128 players) of four classical games (2011, 2013); boards in seeding order."""

Forecast = dict[str, float]


@dataclass
class EventReport:
    name: str
    group: str  # "swiss complete", "swiss partial", "norway"
    players: int
    rounds: int
    winners: list[str]
    ratings_note: str
    names: Mapping[str, str]
    """Key -> name, for the printout."""
    # per kind: per moment (the round before which it is made), the forecast
    forecasts: dict[str, dict[int, Forecast]] = field(default_factory=dict)
    seconds: float = 0.0
    labels: dict[int, str] = field(default_factory=dict)
    """A moment's name when it is not a round boundary (a knockout's "R.G")."""
    pooled: bool = True
    """Counted in the "all" row and the reliability table (False: the same
    event forecast again at more moments)."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated parts of file names")
    ap.add_argument("--swiss-sims", type=int, default=200)
    ap.add_argument("--rr-sims", type=int, default=20_000)
    ap.add_argument("--team-sims", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--live-ply", type=int, default=None)
    ap.add_argument(
        "--live-only",
        default="",
        help="comma-separated parts of file names: the mid-round part for these events only",
    )
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--wdl-models", default=None)
    args = ap.parse_args()
    if not EVENTS.exists():
        print(f"skipped: {EVENTS} not present (the shared data beside the checkout)")
        return
    human = human_model(args)
    if human is None:
        return
    model, prior, why = human
    print(f"human W/D/L: {why}")
    files = [
        *sorted((EVENTS / "swiss").glob("*.pgn")),
        *sorted((EVENTS / "norway").glob("*.pgn")),
        *sorted((EVENTS / "team").glob("olympiad-*.pgn.gz")),
        *sorted((EVENTS / "knockout").glob("world-cup-*.pgn")),
    ]
    wanted = [w for w in args.only.split(",") if w]
    if wanted:
        files = [f for f in files if any(w in f.name for w in wanted)]
    reports: list[EventReport] = []
    for f in files:
        if f.parent.name == "team":
            reports.append(run_team_event(args, f, prior))
        elif f.parent.name == "knockout":
            reports.extend(run_knockout(f, prior))
        else:
            reports.append(run_event(args, f, model, prior))
    print_summary(reports)


def run_event(
    args: argparse.Namespace, path: Path, model: HumanWdlModel | None, prior: RatingsPrior
) -> EventReport:
    start = time.perf_counter()
    event = read_event(path)
    norway = path.parent.name == "norway"
    scoring = Scoring.norway() if norway else STANDARD
    tiebreaks = ROUND_ROBIN_TIEBREAKS if norway else SWISS_TIEBREAKS
    games = event.games
    results = event_results(games, scoring)
    players = sorted({g.white for g in games} | {g.black for g in games})
    est = estimated_ratings(games)
    ratings = est.ratings
    final = Standings.from_results(results, tiebreaks, players, scoring)
    winners = final.leaders()
    last = max(g.round for g in games)
    group = "norway" if norway else ("swiss partial" if path.stem in PARTIAL else "swiss complete")
    estimated = set(est.interpolated) | set(est.default)
    unrated_games = sum(1 for g in games if g.white in estimated or g.black in estimated)
    note = (
        f"ratings: {est.from_file} from the file, {len(est.interpolated)} from round 1's board"
        f" order, {len(est.default)} at the median; {unrated_games} games involve an"
        " estimated rating"
    )
    rep = EventReport(path.stem, group, len(players), last, winners, note, event.names)
    rep.forecasts = {k: {} for k in KINDS}
    live_parts = [w for w in args.live_only.split(",") if w]
    with_live = args.live_ply and (not live_parts or any(w in path.name for w in live_parts))
    live = live_wdl(args, path, event, ratings, model, prior) if with_live else {}
    for r in range(1, last + 1):
        before = [x for x in results if x.round is not None and x.round < r]
        pairs = [(g.white, g.black) for g in games if g.round == r and not g.armageddon]
        points = {p: 0.0 for p in players}
        for p, pts in (
            (row.player, row.points)
            for row in Standings.from_results(before, (), players, scoring).rows
        ):
            points[p] = pts
        rep.forecasts["leader"][r] = leader_forecast(points)
        rep.forecasts["reachable"][r] = reachable_forecast(points, (last - r + 1) * scoring.most)
        for kind, with_prior in (("human", prior), ("elo", None)):
            rep.forecasts[kind][r] = forecast(
                args,
                norway,
                players,
                ratings,
                before,
                [],
                pairs,
                games,
                r,
                last,
                tiebreaks,
                scoring,
                with_prior,
            )
        if live:
            done = list(before)
            in_progress: list[InProgress] = []
            for i, g in enumerate(games):
                if g.round != r or g.armageddon:
                    continue
                wdl = live.get(i)
                if wdl is None:
                    done.append(Result.game(g.white, g.black, g.result, g.round))
                else:
                    in_progress.append((g.white, g.black, wdl))
            rep.forecasts["live"][r] = forecast(
                args,
                norway,
                players,
                ratings,
                done,
                in_progress,
                [],
                games,
                r,
                last,
                tiebreaks,
                scoring,
                prior,
            )
            rep.forecasts["mid-prior"][r] = forecast(
                args,
                norway,
                players,
                ratings,
                done,
                [],
                [(w, b) for w, b, _ in in_progress],
                games,
                r,
                last,
                tiebreaks,
                scoring,
                prior,
            )
    rep.seconds = time.perf_counter() - start
    print_event(rep)
    return rep


def run_team_event(args: argparse.Namespace, path: Path, prior: RatingsPrior) -> EventReport:
    """An Olympiad: before each round, each team's chance of winning (a Swiss
    of teams simulated to its end) against the first of the final standings."""
    start = time.perf_counter()
    event = read_event(path)
    games = event.games
    lineups = team_lineups(games, TEAM_BOARDS)
    teams = sorted(set(lineups.team_of.values()))
    winners = team_winners(games)
    matches = event_team_matches(games)
    results = [Result.game(g.white, g.black, g.result, g.round) for g in games]
    last = max(g.round for g in games)
    estimated = set(lineups.from_team) | set(lineups.default)
    unrated_games = sum(1 for g in games if g.white in estimated or g.black in estimated)
    no_rated = {lineups.team_of[p] for p in lineups.default}
    note = (
        f"ratings: {lineups.from_file} from the file, {len(lineups.from_team)} at their team's"
        f" mean, {len(lineups.default)} at the median ({len(no_rated)} teams without a rated"
        f" player); {len(lineups.stand_ins)} stand-ins; {unrated_games} of {len(games)} games"
        " involve an estimated rating"
    )
    name = path.name.removesuffix(".gz").removesuffix(".pgn")
    rep = EventReport(name, "olympiad", len(teams), last, winners, note, {t: t for t in teams})
    rep.forecasts = {k: {} for k in KINDS}
    most = MatchPoints().win
    for r in range(1, last + 1):
        before = [x for x in results if x.round is not None and x.round < r]
        table = TeamStandings.from_matches([m for m in matches if m.round < r], teams=teams)
        rep.forecasts["leader"][r] = leader_forecast({row.team: -row.rank for row in table.rows})
        rep.forecasts["reachable"][r] = reachable_forecast(
            {row.team: row.match_points for row in table.rows}, (last - r + 1) * most
        )
        boards = [(g.white, g.black) for g in games if g.round == r]
        for kind, with_prior in (("human", prior), ("elo", None)):
            odds = team_win_odds(
                lineups.team_of,
                lineups.ratings,
                before,
                (),
                boards,
                round=r,
                rounds_total=last,
                boards=TEAM_BOARDS,
                sims=args.team_sims,
                seed=args.seed + r,
                prior=with_prior,
            )
            rep.forecasts[kind][r] = {t: c.p_first for t, c in odds.items()}
    rep.seconds = time.perf_counter() - start
    print_event(rep)
    return rep


def run_knockout(path: Path, prior: RatingsPrior) -> list[EventReport]:
    """A World Cup: each player's chance of winning before each round, and
    apart before each game of each round (two reports)."""
    start = time.perf_counter()
    event = read_event(path)
    games = event.games
    rules = EventRules(format="knockout", knockout=WORLD_CUP_RULES)
    priors = {CLASSICAL_OTB: prior}
    final = knockout_table(knockout_boards(games, event.names), rules, priors=priors)
    assert final is not None
    winner = knockout_winner(final)
    rated = {p for g in games for p, e in ((g.white, g.white_elo), (g.black, g.black_elo)) if e}
    players = {g.white for g in games} | {g.black for g in games}
    note = f"ratings: {len(rated)} of {len(players)} players from the file" + (
        "" if rated == players else " (the others at the mean of the rated)"
    )
    name = path.stem
    each_round = EventReport(name, "knockout", len(players), 0, [winner], note, final.names)
    each_game = EventReport(
        f"{name}, each game", "knockout, each game", len(players), 0, [winner], note, final.names
    )
    each_game.pooled = False
    for rep in (each_round, each_game):
        rep.forecasts = {k: {} for k in KINDS}
    moments = sorted({(g.round, g.board or 0) for g in games})
    for i, (rnd, game) in enumerate(moments, start=1):
        boards = knockout_boards(games, event.names, (rnd, game))
        human = knockout_table(boards, rules, priors=priors)
        elo = knockout_table(boards, rules)
        assert human is not None and elo is not None
        left = [row.player for row in human.bracket.rows]
        higher = higher_rated_forecast(human, "folded")
        made = knockout_forecasts(human, elo, higher, left)
        each_game.labels[i] = f"{rnd}.{game}"
        for kind, f in made.items():
            each_game.forecasts[kind][i] = f
            if game == 1:
                each_round.forecasts[kind][rnd] = f
    each_round.rounds = len(each_round.forecasts["human"])
    each_game.rounds = len(moments)
    each_round.seconds = each_game.seconds = time.perf_counter() - start
    print_event(each_round)
    print_event(each_game)
    return [each_round, each_game]


def knockout_forecasts(
    human: KnockoutTable, elo: KnockoutTable, higher: Forecast, left: list[str]
) -> dict[str, Forecast]:
    """The forecasts of one moment, each over the players still in."""
    return {
        "human": {p: human.bracket.win(p) for p in left},
        "elo": {p: elo.bracket.win(p) for p in left},
        "higher-rated": {p: higher.get(p, 0.0) for p in left},
        "reachable": {p: 1.0 / len(left) for p in left},
    }


def forecast(
    args: argparse.Namespace,
    norway: bool,
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: list[Result],
    in_progress: list[InProgress],
    current: list[tuple[str, str]],
    games: Sequence[object],
    r: int,
    last: int,
    tiebreaks: tuple[str, ...],
    scoring: Scoring,
    prior: RatingsPrior | None,
) -> Forecast:
    """The odds of winning with round ``r`` in progress (``in_progress``) or
    not started (``current``), the rounds after it from the ratings."""
    if not norway:
        odds = swiss_win_odds(
            players,
            ratings,
            finished,
            in_progress,
            current,
            round=r,
            rounds_total=last,
            sims=args.swiss_sims,
            seed=args.seed + r,
            tiebreaks=tiebreaks,
            prior=prior,
        )
        return {p: c.p_first for p, c in odds.items()}
    later = [(g.white, g.black) for g in games if g.round > r and not g.armageddon]  # type: ignore[attr-defined]
    # a classical draw of round r already over: its Armageddon is still to come
    arms = [
        (x.white, x.black, None)
        for x in finished
        if x.round == r and x.black is not None and x.white_points == 0.5
    ]
    chances = win_odds(
        players,
        ratings,
        finished,
        in_progress,
        [*current, *later],
        sims=args.rr_sims,
        seed=args.seed + r,
        tiebreaks=tiebreaks,
        prior=prior,
        scoring=scoring,
        armageddons=arms,
    )
    return {p: c.p for p, c in chances.items()}


def live_wdl(
    args: argparse.Namespace,
    path: Path,
    event: Event,
    ratings: Mapping[str, float],
    model: HumanWdlModel | None,
    prior: RatingsPrior,
) -> dict[int, tuple[float, float, float] | None]:
    """Per game: the human model's live W/D/L after ``--live-ply`` (None: over by then)."""
    evs = live_evaluations(path, args.live_ply, args.depth, args.engine, args.cache)
    out: dict[int, tuple[float, float, float] | None] = {}
    for i, ev in evs.items():
        g = event.games[i]
        if ev is None:
            out[i] = None
            continue
        white, black = ratings[g.white], ratings[g.black]
        if model is None:
            out[i] = prior.probabilities(white, black)
        else:
            w, d, lo = model.wdl(ev, args.live_ply, white, black)
            out[i] = (w / 1000.0, d / 1000.0, lo / 1000.0)
    return out


def print_event(rep: EventReport) -> None:
    names = ", ".join(rep.names.get(w, w) for w in rep.winners)
    lead = "leader of the file" if rep.group == "swiss partial" else "winner"
    what = "teams" if rep.group == "olympiad" else "players"
    moments = "moments" if rep.labels else "rounds"
    print(
        f"\n### {rep.name} ({rep.group}): {rep.players} {what}, {rep.rounds} {moments};"
        f" {lead}: {names} ({rep.seconds:.0f} s)"
    )
    print(rep.ratings_note)
    kinds = [k for k in KINDS if rep.forecasts[k]]
    print(
        "| before round | " + " | ".join(f"p(winner) {k}" for k in kinds) + " | human's favourite |"
    )
    print("|---:|" + "---:|" * len(kinds) + "---|")
    for r in sorted({r for k in kinds for r in rep.forecasts[k]}):
        cells = [
            f"{sum(rep.forecasts[k][r].get(w, 0.0) for w in rep.winners):.3f}"
            if r in rep.forecasts[k]
            else "nan"
            for k in kinds
        ]
        human = rep.forecasts["human"].get(r, {})
        top = max(human, key=lambda p: human[p], default=None)
        cells.append("" if top is None else f"{rep.names.get(top, top)} {human[top]:.3f}")
        print(f"| {rep.labels.get(r, str(r))} | " + " | ".join(cells) + " |")


def print_summary(reports: list[EventReport]) -> None:
    kinds = [k for k in KINDS if any(rep.forecasts[k] for rep in reports)]
    print(
        "\n## Mean log-loss of the actual winner (floor"
        f" {LOG_LOSS_FLOOR:g}) and mean Brier score, per event"
    )
    print(
        "| event | group | rounds | "
        + " | ".join(kinds)
        + " | Brier "
        + " | Brier ".join(kinds)
        + " |"
    )
    print("|---|---|---:|" + "---:|" * (2 * len(kinds)))
    groups: dict[str, list[EventReport]] = {}
    for rep in reports:
        groups.setdefault(rep.group, []).append(rep)
        print(
            f"| {rep.name} | {rep.group} | {rep.rounds} | "
            + " | ".join(f"{mean_score(rep, k, 'log'):.3f}" for k in kinds)
            + " | "
            + " | ".join(f"{mean_score(rep, k, 'brier'):.3f}" for k in kinds)
            + " |"
        )
    for name, reps in [*groups.items(), ("all", [r for r in reports if r.pooled])]:
        print(
            f"| **{name}** | | {sum(r.rounds for r in reps)} | "
            + " | ".join(f"**{pooled(reps, k, 'log'):.3f}**" for k in kinds)
            + " | "
            + " | ".join(f"{pooled(reps, k, 'brier'):.3f}" for k in kinds)
            + " |"
        )
    print(
        "\n## Reliability: forecast bins of p(first) against the observed frequency of"
        " winning, over every player, event and round"
    )
    print("| bin | " + " | ".join(f"{k}: n, mean p, observed" for k in kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    tables = {k: reliability(pairs([r for r in reports if r.pooled], k)) for k in kinds}
    for b in range(len(RELIABILITY_BINS) - 1):
        lo, hi = RELIABILITY_BINS[b], RELIABILITY_BINS[b + 1]
        cells = []
        for k in kinds:
            x = tables[k][b]
            cells.append(f"{x.count}, {x.mean_forecast:.3f}, {x.observed:.3f}" if x.count else "0")
        print(f"| {lo:g}-{hi:g} | " + " | ".join(cells) + " |")


def mean_score(rep: EventReport, kind: str, what: str) -> float:
    return pooled([rep], kind, what)


def pooled(reps: list[EventReport], kind: str, what: str) -> float:
    """The mean over every (event, round) forecast of the kind."""
    score = winner_log_loss if what == "log" else brier
    xs = [score(f, rep.winners) for rep in reps for f in rep.forecasts[kind].values()]
    return sum(xs) / len(xs) if xs else math.nan


def pairs(reports: list[EventReport], kind: str) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for rep in reports:
        for f in rep.forecasts[kind].values():
            observed = outcome_shares(f, rep.winners)
            out.extend((f[p], observed[p]) for p in f)
    return out


if __name__ == "__main__":
    main()
