"""Matching snapshots to boards: BoardRegistry's index against a scan of every board.

The baseline is the same ``BoardRegistry`` with its candidate set replaced by
every board (what matching did before the index), measured in the same run.
For three kinds of round (one PGN feed; two sources of one event group, with
game ids, FIDE ids and board numbers; an LCC round whose players are not
entered yet), 1,000 new games of 4 plies each are applied one by one; at
100, 500 and 1,000 boards the bench prints the time to apply one new game
(mean of the last 20) and to match the next new game (mean of 300 calls).
Best of ``--reps`` runs. Prints figures and ratios; asserts nothing.

    .venv/bin/python bench/match_index.py [--games 1000] [--reps 3]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable, Iterable

from livegain.core.board.board import BoardGame
from livegain.core.board.registry import BoardRegistry
from livegain.core.snapshot import GameSnapshot, PlayerInfo

MOVES = ("e4", "e5", "Nf3", "Nc6")
AT = (100, 500, 1000)


class ScanAll(BoardRegistry):
    """Matching against every board (the baseline)."""

    def _candidates(self, src: str, group: str | None, ident: object) -> Iterable[BoardGame]:
        return self.boards.values()


def one_feed(k: int) -> list[GameSnapshot]:
    """One PGN feed: rounds ``1.k``, no game ids."""
    white, black = PlayerInfo(f"White, {k}"), PlayerInfo(f"Black, {k}")
    return [GameSnapshot(source="pgn", white=white, black=black, moves=MOVES, round=f"1.{k}")]


def two_sources(k: int) -> list[GameSnapshot]:
    """One event group, two relays: LCC-like (ids, board numbers) and a mirror."""
    w, b = str(100000 + k), str(200000 + k)
    return [
        GameSnapshot(
            source="lcc",
            white=PlayerInfo(f"W{k}, A", fide_id=w),
            black=PlayerInfo(f"B{k}, A", fide_id=b),
            moves=MOVES,
            game_id=f"lcc:t:1:{k}",
            round="1",
            board=k,
            group="ev",
            priority=0,
        ),
        GameSnapshot(
            source="mirror",
            white=PlayerInfo(f"A W{k}", fide_id=w),
            black=PlayerInfo(f"A B{k}", fide_id=b),
            moves=MOVES,
            game_id=str(8000 + k),
            round=f"1.{k}",
            group="ev",
            priority=1,
        ),
    ]


def not_paired(k: int) -> list[GameSnapshot]:
    """LCC before the pairings are entered: no players, a game id and a board."""
    unknown = PlayerInfo("?")
    return [
        GameSnapshot(
            source="lcc", white=unknown, black=unknown, game_id=f"lcc:t:1:{k}", round="1", board=k
        )
    ]


def run(
    cls: type[BoardRegistry], make: Callable[[int], list[GameSnapshot]], n: int
) -> dict[str, float]:
    t = cls(2800.0, max_boards=None)
    per: list[float] = []
    out: dict[str, float] = {}
    for k in range(1, n + 1):
        snaps = make(k)
        t0 = time.perf_counter()
        for s in snaps:
            t.apply(s)
        per.append(time.perf_counter() - t0)
        if k in AT:
            following = make(k + 1)
            t1 = time.perf_counter()
            for _ in range(300):
                for s in following:
                    t.match(s)
            out[f"match {k}"] = (time.perf_counter() - t1) / 300 * 1e6
            out[f"apply {k}"] = statistics.mean(per[k - 20 : k]) * 1e6
    assert len(t.boards) == n, len(t.boards)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    gc.disable()
    at = [k for k in AT if k <= args.games]
    print(f"{args.games} new games; µs per new game at {', '.join(map(str, at))} boards")
    for name, make in (
        ("one feed", one_feed),
        ("two sources", two_sources),
        ("not paired", not_paired),
    ):
        best = {}
        for cls in (ScanAll, BoardRegistry):
            rows = [run(cls, make, args.games) for _ in range(args.reps)]
            best[cls] = {key: min(r[key] for r in rows) for key in rows[0]}
        for what in ("apply", "match"):
            scan = " / ".join(f"{best[ScanAll][f'{what} {k}']:7.1f}" for k in at)
            index = " / ".join(f"{best[BoardRegistry][f'{what} {k}']:7.1f}" for k in at)
            last = f"{what} {at[-1]}"
            print(
                f"  {name:<12} {what}: scan {scan}   index {index}"
                f"   scan/index at {at[-1]}: {best[ScanAll][last] / best[BoardRegistry][last]:.1f}x"
            )


if __name__ == "__main__":
    main()
