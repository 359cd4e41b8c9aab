"""Mean accuracy (lichess's method, livegain.core.accuracy) by 200-point rating
band on the shared lichess rapid games, beside lichess's own ACPL of the same
player-games. Reads ../shared/data/lichess-rapid/lichess-rapid-dev.pgn.gz (or
--pgn); exits 0 with a line saying so when the file is absent.

Each game's scores are its ``[%eval]`` comments (White's view; ``#n`` as
+/-3900), from the start position scored 15 cp as lichess does, up to the
first ply without one (lichess evaluates at most 200 plies). A player-game
counts in the band of the player's own rating. Asserts nothing.

    .venv/bin/python bench/accuracy_by_band.py [--pgn FILE] [--games N]
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from livegain.core.accuracy import game_accuracy

DEFAULT = Path(__file__).resolve().parents[2] / "shared/data/lichess-rapid/lichess-rapid-dev.pgn.gz"
LICHESS_START_CP = 15
EVAL = re.compile(r"\[%eval (#?-?[\d.]+)\]")
TAG = re.compile(r'^\[(\w+) "(.*)"\]$')


def score(text: str) -> int:
    if text.startswith("#"):
        return 3900 if not text.startswith("#-") else -3900
    return max(-3900, min(3900, round(float(text) * 100)))


def games(path: Path) -> Iterator[tuple[dict[str, str], list[int]]]:
    """(tags, scores after each ply) per game, read with regular expressions."""
    tags: dict[str, str] = {}
    moves: list[str] = []
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            m = TAG.match(line.strip())
            if m:
                if moves:
                    yield tags, [score(x) for x in EVAL.findall(" ".join(moves))]
                    tags, moves = {}, []
                tags[m.group(1)] = m.group(2)
            elif line.strip():
                moves.append(line)
    if moves:
        yield tags, [score(x) for x in EVAL.findall(" ".join(moves))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgn", type=Path, default=DEFAULT)
    ap.add_argument("--games", type=int, default=0, help="at most this many games (0: all)")
    args = ap.parse_args(argv)
    if not args.pgn.exists():
        print(f"{args.pgn} not found: nothing to report")
        return 0
    acc: dict[int, list[float]] = defaultdict(list)
    acpl: dict[int, list[float]] = defaultdict(list)
    n = 0
    for tags, evals in games(args.pgn):
        if len(evals) < 2:
            continue
        n += 1
        g = game_accuracy([LICHESS_START_CP, *evals])
        for color, side in (("White", g.white), ("Black", g.black)):
            try:
                band = int(tags.get(f"{color}Elo", "")) // 200 * 200
            except ValueError:
                continue
            if side.overall is not None:
                acc[band].append(side.overall)
            if tags.get(f"{color}ACPL", "").isdigit():
                acpl[band].append(float(tags[f"{color}ACPL"]))
        if args.games and n >= args.games:
            break
    print(f"{n} games from {args.pgn.name}")
    print(f"{'band':>11} {'player-games':>12} {'accuracy %':>10} {'lichess ACPL':>12}")
    for band in sorted(acc):
        a, c = acc[band], acpl.get(band, [])
        mean_acpl = f"{sum(c) / len(c):12.1f}" if c else f"{'-':>12}"
        print(f"{band:>5}-{band + 199:<5} {len(a):>12} {sum(a) / len(a):>10.1f} {mean_acpl}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
