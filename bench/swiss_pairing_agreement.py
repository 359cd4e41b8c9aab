"""How often livegain.core.swiss_pairing reproduces real Swiss pairings.

For each event of ../shared/data/events/swiss/*.pgn and each round r >= 2:
the players present in round r (those with a game in it), their points,
colour history and pairs met from the real results of rounds 1..r-1, paired
with ``pair_round``; reported: the share of the round's real pairings
reproduced, as pairs (either colour) and with the colours. The real
pairings are the reference (no reference Dutch engine is run here).

Initial order (pairing numbers): from round 1's boards (:func:`initial_order`),
as most players have no Elo in these files; players absent from round 1
after them, by Elo. Byes, forfeits and
withdrawals are not in the files, so points are the points over the board
(a player's bye points are missing) and no one is known to have had a bye.
Files whose name says "partial", and the Norway Chess open (27-42 of about 46
boards broadcast), are reported apart: players missing from the file change
the brackets.

Run: .venv/bin/python bench/swiss_pairing_agreement.py [--rounds]
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from livegain.core.swiss_pairing import Entrant, pair_round

SWISS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "events" / "swiss"
PARTIAL = {"norway-chess-open-gm-2025.pgn"}
TAG = re.compile(r'^\[(\w+) "(.*)"\]\s*$')
POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


@dataclass(frozen=True)
class Game:
    round: int
    board: int
    white: str
    black: str
    result: str


def read(path: Path) -> tuple[list[Game], dict[str, float]]:
    games: list[Game] = []
    elo: dict[str, float] = {}
    tags: dict[str, str] = {}

    def flush() -> None:
        if "White" in tags and "Round" in tags:
            rnd, _, board = tags["Round"].partition(".")
            g = Game(int(rnd), int(board or 0), tags["White"], tags["Black"], tags["Result"])
            games.append(g)
            for side in ("White", "Black"):
                value = tags.get(f"{side}Elo", "")
                if value.isdigit() and int(value) > 0:
                    elo[tags[side]] = max(elo.get(tags[side], 0.0), float(value))
        tags.clear()

    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = TAG.match(line)
        if m:
            if m.group(1) == "Event" and tags:
                flush()
            tags[m.group(1)] = m.group(2)
    flush()
    return games, elo


def initial_order(games: list[Game], elo: dict[str, float]) -> list[str]:
    """Pairing numbers from round 1: board k of B boards paired numbers k
    (S1) and k + B (S2); S1 is the player with the initial colour on odd
    boards (the other on even boards), the initial colour being the one that
    best fits the boards where both players have an Elo. Players without a
    round-1 game follow, by Elo then name."""
    first = sorted((g for g in games if g.round == 1), key=lambda g: g.board)
    fits = 0
    for k, g in enumerate(first):
        we, be = elo.get(g.white), elo.get(g.black)
        if we is not None and be is not None and we != be:
            fits += 1 if (we > be) == (k % 2 == 0) else -1
    white_first = fits >= 0
    s1: list[str] = []
    s2: list[str] = []
    for k, g in enumerate(first):
        top_white = (k % 2 == 0) == white_first
        s1.append(g.white if top_white else g.black)
        s2.append(g.black if top_white else g.white)
    order = s1 + s2
    known = set(order)
    rest = {p for g in games for p in (g.white, g.black)} - known
    return order + sorted(rest, key=lambda p: (-elo.get(p, 0.0), p))


def agreement(games: list[Game], elo: dict[str, float]) -> list[tuple[int, int, int, int]]:
    """Per round r >= 2: (r, real pairs, pairs reproduced, with colours)."""
    everyone = initial_order(games, elo)
    out = []
    for r in sorted({g.round for g in games}):
        if r < 2:
            continue
        now = [g for g in games if g.round == r]
        before = [g for g in games if g.round < r]
        present = {p for g in now for p in (g.white, g.black)}
        points = dict.fromkeys(present, 0.0)
        colours = {p: ["-"] * (r - 1) for p in present}
        met = []
        for g in before:
            w, b = POINTS.get(g.result, (0.0, 0.0))
            if g.white in points:
                points[g.white] += w
                colours[g.white][g.round - 1] = "W"
            if g.black in points:
                points[g.black] += b
                colours[g.black][g.round - 1] = "B"
            met.append((g.white, g.black))
        entrants = [Entrant(p, points[p], "".join(colours[p])) for p in everyone if p in present]
        pairing = pair_round(entrants, met)
        mine = set(pairing.games)
        mine_pairs = {frozenset(x) for x in mine}
        same = sum(frozenset((g.white, g.black)) in mine_pairs for g in now)
        coloured = sum((g.white, g.black) in mine for g in now)
        out.append((r, len(now), same, coloured))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", action="store_true", help="a line per round")
    args = parser.parse_args()
    files = sorted(SWISS.glob("*.pgn"))
    if not files:
        raise SystemExit(f"no files under {SWISS}")
    print("| event | rounds | real pairs | pairs reproduced | with colours |")
    print("|---|---:|---:|---:|---:|")
    per_round: list[str] = []
    for group, partial in (("complete", False), ("partial", True)):
        total = [0, 0, 0]
        for path in files:
            is_partial = "partial" in path.name or path.name in PARTIAL
            if is_partial != partial:
                continue
            games, elo = read(path)
            rows = agreement(games, elo)
            n = sum(x[1] for x in rows)
            same = sum(x[2] for x in rows)
            col = sum(x[3] for x in rows)
            total = [total[0] + n, total[1] + same, total[2] + col]
            name = path.stem + (" (partial)" if partial else "")
            print(f"| {name} | 2-{rows[-1][0]} | {n} | {same / n:.1%} | {col / n:.1%} |")
            for r, k, s, c in rows:
                per_round.append(f"| {path.stem} | {r} | {k} | {s / k:.1%} | {c / k:.1%} |")
        print(
            f"| **all {group}** | | {total[0]} | **{total[1] / total[0]:.1%}** | "
            f"**{total[2] / total[0]:.1%}** |"
        )
    if args.rounds:
        print()
        print("| event | round | real pairs | pairs reproduced | with colours |")
        print("|---|---:|---:|---:|---:|")
        print("\n".join(per_round))


if __name__ == "__main__":
    main()
