"""What live standings cost the service (prints figures, asserts nothing).

Two costs:

1. On the event loop, per board publication: ``LiveStandings.touch`` (reads
   what the standings depend on from the board and marks its event when that
   changed). Baseline, in the same run: building the board's state
   (``convert.board_state``), which a publication needs anyway.
2. Off the event loop (in the service, a child process), per computation
   (at most one every 2 s per event):
   ``event_table`` with 100,000 simulations, for three events: the demo's
   round 5 of a 12-player Swiss (3 games finished, 3 in progress, points of
   rounds 1-4 carried in); a 14-player round robin after six and a half rounds
   (45 finished, 4 in progress, 42 not started); round 7 of a 200-player open
   Swiss (40 boards finished, 60 in progress, points of rounds 1-6 carried
   in). Baseline: ``win_odds`` alone on the same games (what the table adds:
   reading the boards, the standings and their tie-breaks).

Best and median of five runs each. Run: .venv/bin/python bench/standings_live.py
"""

from __future__ import annotations

import functools
import random
import statistics
import time
from collections.abc import Callable
from itertools import pairwise

from livegain.app.live_standings import LiveStandings
from livegain.cli.demo import data_path, demo_points_before
from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.event_table import EventRules, GameEntry, event_table
from livegain.core.snapshot import PlayerInfo
from livegain.core.standings import Result
from livegain.core.tournament_odds import win_odds
from livegain.publish import convert
from livegain.relay.replay import Replay

SIMS = 100_000


def timed(fn: Callable[[], object], runs: int = 5) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def loop_costs() -> None:
    replay = Replay.from_pgn(data_path("demo-round.pgn").read_text())
    t = BoardRegistry(engine_rating=2860.0)
    ids = []
    for g in replay.games:
        bid = t.apply(g.full).board_id
        assert bid is not None
        board = t.board(bid)
        for ply in range(board.plies + 1):
            t.record_eval(bid, ply, board.fen_at(ply), Evaluation(cp=20, wdl=(300, 600, 100)))
        ids.append(bid)
    standings = LiveStandings([], lambda e, d: None, boards=t.boards)
    for bid in ids:
        standings.touch(bid)  # first sight: every later call finds nothing changed
    n = 20_000
    t0 = time.perf_counter()
    for k in range(n):
        standings.touch(ids[k % len(ids)])
    per_touch = (time.perf_counter() - t0) / n
    m = 200
    t0 = time.perf_counter()
    for k in range(m):
        convert.board_state(t.board(ids[k % len(ids)]), engine="bench")
    per_state = (time.perf_counter() - t0) / m
    plies = sum(t.board(b).plies for b in ids) / len(ids)
    print(f"event loop, per publication ({len(ids)} demo boards, {plies:.0f} plies on average):")
    print(f"  LiveStandings.touch: {per_touch * 1e6:.1f} us")
    print(f"  baseline, convert.board_state of the same boards: {per_state * 1e6:.0f} us")
    print(f"  touch / board_state: {per_touch / per_state:.1%}")


def demo_event() -> tuple[str, list[GameEntry], EventRules]:
    import chess.pgn

    entries = []
    with data_path("demo-round.pgn").open() as f:
        k = 0
        while (h := chess.pgn.read_headers(f)) is not None:
            k += 1
            w = PlayerInfo(h["White"], rating=int(h["WhiteElo"]))
            b = PlayerInfo(h["Black"], rating=int(h["BlackElo"]))
            done = k % 2 == 1
            wdl = None if done else (350.0, 450.0, 200.0)
            res = h["Result"] if done else "*"
            entries.append(GameEntry(f"b{k}", w, b, "5", res, 60, wdl))
    rules = EventRules(format="swiss", points_before=tuple(demo_points_before().items()), sims=SIMS)
    return "demo Swiss (12 players, round 5)", entries, rules


def round_robin() -> tuple[str, list[GameEntry], EventRules]:
    rng = random.Random(2022)
    names = [f"Player {k:02d}" for k in range(1, 15)]
    ratings = {n: 2600 + 20 * k for k, n in enumerate(names)}
    rot = list(names)
    entries = []
    for r in range(7):
        for k in range(7):
            a, b = rot[k], rot[13 - k]
            w, bl = PlayerInfo(a, rating=ratings[a]), PlayerInfo(b, rating=ratings[b])
            if r < 6 or k < 3:
                res = rng.choice(["1-0", "1/2-1/2", "1/2-1/2", "0-1"])
                entries.append(GameEntry(f"r{r}b{k}", w, bl, str(r + 1), res, 80))
            else:
                entries.append(GameEntry(f"r{r}b{k}", w, bl, "7", "*", 40, (300.0, 500.0, 200.0)))
        rot = [rot[0], rot[-1], *rot[1:-1]]
    return "round robin (14 players, round 7)", entries, EventRules(format="round-robin", sims=SIMS)


def open_swiss() -> tuple[str, list[GameEntry], EventRules]:
    rng = random.Random(7)
    names = [f"Open {k:03d}" for k in range(200)]
    carried = {n: rng.choice([1.0, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5]) for n in names}
    order = sorted(names, key=lambda n: -carried[n])
    entries = []
    for k, (a, b) in enumerate(pairwise(order)):
        if k % 2:
            continue
        w = PlayerInfo(a, rating=1800 + rng.randrange(800))
        bl = PlayerInfo(b, rating=1800 + rng.randrange(800))
        if k // 2 < 40:
            res = rng.choice(["1-0", "1/2-1/2", "0-1"])
            entries.append(GameEntry(f"b{k}", w, bl, "7", res, 80))
        else:
            entries.append(GameEntry(f"b{k}", w, bl, "7", "*", 40, (300.0, 450.0, 250.0)))
    rules = EventRules(format="swiss", points_before=tuple(carried.items()), sims=SIMS)
    return "open Swiss (200 players, round 7)", entries, rules


def odds_alone(entries: list[GameEntry], rules: EventRules) -> Callable[[], object]:
    """``win_odds`` on the same games and carried points, keyed by name."""
    from livegain.core.event_table import _byes

    players = sorted({e.white.name for e in entries} | {e.black.name for e in entries})
    ratings = {e.white.name: float(e.white.rating or 0) for e in entries}
    ratings.update({e.black.name: float(e.black.rating or 0) for e in entries})
    first = min(int(e.round or 1) for e in entries)
    finished = [r for name, pts in rules.points_before for r in _byes(name, pts, first - 1)] + [
        Result.game(e.white.name, e.black.name, e.result) for e in entries if e.result != "*"
    ]
    live = [(e.white.name, e.black.name, e.wdl) for e in entries if e.wdl is not None]
    met = {frozenset((e.white.name, e.black.name)) for e in entries}
    upcoming = []
    if rules.format == "round-robin":
        upcoming = [
            (a, b)
            for i, a in enumerate(players)
            for b in players[i + 1 :]
            if frozenset((a, b)) not in met
        ]

    def run() -> object:
        return win_odds(
            players,
            ratings,
            finished,
            live,
            upcoming,
            sims=rules.sims,
            seed=0,
            tiebreaks=rules.order,
            playoff=rules.playoff,
            draw_rate=rules.draw_rate,
        )

    return run


def main() -> None:
    loop_costs()
    print(f"per computation, off the loop ({SIMS:,} simulations):")
    for name, entries, rules in (demo_event(), round_robin(), open_swiss()):
        best, median = timed(functools.partial(event_table, "E", entries, rules))
        base_best, base_median = timed(odds_alone(entries, rules))
        print(f"  {name}: event_table best {best:.3f} s, median {median:.3f} s")
        print(
            f"    baseline win_odds alone: best {base_best:.3f} s, median {base_median:.3f} s; "
            f"event_table / win_odds (best): {best / base_best:.2f}x"
        )


if __name__ == "__main__":
    main()
