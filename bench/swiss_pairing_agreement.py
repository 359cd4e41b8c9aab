"""How often Swiss pairers agree with bbpPairings (a FIDE-endorsed Dutch engine) on real events.

For each event of ../shared/data/events/swiss/*.pgn and each round r >= 2,
the state before round r is built from the file: the players present in
round r (those with a game in it), their points, colours and pairs met from
the real results of rounds 1..r-1. That state is paired by bbpPairings
(``--dutch``, through a TRF file: ``bench/trf.py``) and by each pairer under
test (``module:function`` with the contract of
``livegain.core.swiss_pairing.pair_round``: ``f(entrants, met) -> Pairing``).
Reported per event (and per round with ``--rounds``):

* against bbp: the rounds a pairer pairs exactly as bbp (every pair, its
  colours and the bye), and the share of bbp's pairs it reproduces, as pairs
  and with colours;
* against the real pairings: the share of the real round's pairs reproduced
  by bbp and by each pairer. What bbp misses of the real pairings is the
  data's gaps (and the arbiters' choices), not a pairer's errors.

Initial order (pairing numbers): from round 1's boards (:func:`initial_order`),
as most players have no Elo in these files; players absent from round 1
after them, by Elo. Byes, forfeits and withdrawals are not in the files: a
player without a game in a round is written as absent (zero-point bye, ``Z``)
for bbp and with ``-`` for the pairers, so points are the points over the
board and no one is known to have had a pairing-allocated bye. Both engines
see the same state. Files whose name says "partial", and the Norway Chess
open (27-42 of about 46 boards broadcast), are reported apart.

bbp: ``--bbp PATH``, else $LIVEGAIN_BBP, else /work/build/bbpPairings/bbpPairings.exe
(``bench/build_bbp.sh`` builds it); without it only the real pairings are
compared.

Run: .venv/bin/python bench/swiss_pairing_agreement.py [--rounds] [--bbp PATH]
     [--pairer module:function ...]
"""

from __future__ import annotations

import argparse
import importlib
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trf

from livegain.core.swiss_pairing import Entrant, Pairing

SWISS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "events" / "swiss"
PARTIAL = {"norway-chess-open-gm-2025.pgn"}
TAG = re.compile(r'^\[(\w+) "(.*)"\]\s*$')
POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}
DEFAULT_PAIRERS = (
    "livegain.core.swiss_pairing:pair_round",
    "livegain.core.swiss_batch:pair_round_batch",
)

Pairer = Callable[[Sequence[Entrant], Collection[tuple[str, str]]], Pairing]


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


def initial_order(games: list[Game], elo: dict[str, float]) -> tuple[list[str], str]:
    """Pairing numbers from round 1, and the initial colour (``w``/``b``):
    board k of B boards paired numbers k (S1) and k + B (S2); S1 is the
    player with the initial colour on odd boards (the other on even boards),
    the initial colour being the one that best fits the boards where both
    players have an Elo. Players without a round-1 game follow, by Elo then
    name."""
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
    return order + sorted(rest, key=lambda p: (-elo.get(p, 0.0), p)), "w" if white_first else "b"


def state(
    order: Sequence[str],
    rounds: Sequence[Collection[tuple[str, str, str]]],
    present: Collection[str],
    byes: Sequence[Mapping[str, str]] = (),
) -> tuple[list[Entrant], list[tuple[str, str]]]:
    """The pairers' view of what :func:`trf.from_rounds` writes for bbp: the
    players of ``present`` in initial order with their points, colours (``-``
    for a round without a game), whether they had a pairing-allocated bye
    (``U``) and their floats (``D`` against a player on fewer points or a bye
    with points, as bbp counts them; ``U`` against one on more), and the
    pairs that met."""
    points = dict.fromkeys(order, 0.0)
    colours = {p: ["-"] * len(rounds) for p in order}
    floats = {p: ["-"] * len(rounds) for p in order}
    had_bye = dict.fromkeys(order, False)
    met: list[tuple[str, str]] = []
    for k, games in enumerate(rounds):
        before = dict(points)
        for white, black, result in games:
            w, b = POINTS.get(result, (0.0, 0.0))
            points[white] += w
            points[black] += b
            colours[white][k] = "W"
            colours[black][k] = "B"
            if before[white] != before[black]:
                up, down = (white, black) if before[white] < before[black] else (black, white)
                floats[up][k] = "U"
                floats[down][k] = "D"
            met.append((white, black))
        for p, code in (byes[k] if k < len(byes) else {}).items():
            points[p] += trf.BYE_POINTS[code]
            had_bye[p] = had_bye[p] or code == "U"
            if trf.BYE_POINTS[code] > 0:
                floats[p][k] = "D"
    entrants = [
        Entrant(p, points[p], "".join(colours[p]), had_bye[p], "".join(floats[p]))
        for p in order
        if p in present
    ]
    return entrants, met


def load_pairer(spec: str) -> Pairer | None:
    """``module:function``; None when the module is not there."""
    module, _, name = spec.partition(":")
    if not name:
        raise SystemExit(f"--pairer {spec!r}: expected module:function")
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and module.startswith(e.name):
            return None
        raise
    f = getattr(found, name, None)
    if not callable(f):
        raise SystemExit(f"--pairer {spec!r}: {module} has no function {name}")
    return f  # type: ignore[no-any-return]


@dataclass
class RoundRow:
    """One round of one event: counts (pairs) and, per pairer, its figures."""

    round: int
    real: int
    bbp_pairs: int = 0  # bbp's games (0: bbp not run or failed)
    bbp_real: int = 0  # real pairs bbp reproduces
    bbp_real_col: int = 0
    bbp_error: str = ""
    # per pairer: [identical round, bbp pairs reproduced, with colours, real pairs, with colours]
    mine: dict[str, list[int]] = field(default_factory=dict)


def compare(ours: set[tuple[str, str]], ref: Collection[tuple[str, str]]) -> tuple[int, int]:
    """(pairs of ``ref`` in ``ours`` either way round, with the same colours)."""
    pairs = {frozenset(g) for g in ours}
    return sum(frozenset(g) in pairs for g in ref), sum(g in ours for g in ref)


def agreement(
    games: list[Game],
    elo: dict[str, float],
    pairers: Mapping[str, Pairer],
    bbp: Path | None,
    timing: dict[str, float],
) -> list[RoundRow]:
    """Per round r >= 2 of one event: bbp and each pairer against bbp and the real round."""
    order, initial = initial_order(games, elo)
    total = max(g.round for g in games)
    by_round: list[list[tuple[str, str, str]]] = [[] for _ in range(total)]
    for g in games:
        by_round[g.round - 1].append((g.white, g.black, g.result))
    out = []
    for r in range(2, total + 1):
        now = {(w, b) for w, b, _ in by_round[r - 1]}
        if not now:
            continue
        present = {p for g in now for p in g}
        row = RoundRow(r, len(now))
        ref: set[tuple[str, str]] | None = None
        bye: str | None = None
        if bbp is not None:
            text = trf.from_rounds(order, by_round[: r - 1], present, total, initial_colour=initial)
            t0 = time.perf_counter()
            try:
                paired = trf.pair(bbp, text)
            except trf.BbpError as e:
                row.bbp_error = str(e)
            else:
                ref = {(order[w - 1], order[b - 1]) for w, b in paired.games}
                bye = None if paired.bye is None else order[paired.bye - 1]
                row.bbp_pairs = len(ref)
                row.bbp_real, row.bbp_real_col = compare(ref, now)
            timing["bbp"] = timing.get("bbp", 0.0) + time.perf_counter() - t0
        entrants, met = state(order, by_round[: r - 1], present)
        for name, pairer in pairers.items():
            t0 = time.perf_counter()
            pairing = pairer(entrants, met)
            timing[name] = timing.get(name, 0.0) + time.perf_counter() - t0
            mine = set(pairing.games)
            same, col = compare(mine, ref) if ref is not None else (0, 0)
            identical = ref is not None and mine == ref and pairing.bye == bye
            real, real_col = compare(mine, now)
            row.mine[name] = [int(identical), same, col, real, real_col]
        out.append(row)
    return out


def pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", action="store_true", help="a line per event and round")
    parser.add_argument("--bbp", help="the bbpPairings executable")
    parser.add_argument(
        "--pairer",
        action="append",
        metavar="MODULE:FUNCTION",
        help="a pairer to test (repeatable); default: "
        + ", ".join(DEFAULT_PAIRERS)
        + " (the latter when it exists)",
    )
    args = parser.parse_args()
    files = sorted(SWISS.glob("*.pgn"))
    if not files:
        raise SystemExit(f"no files under {SWISS}")
    bbp = trf.find_bbp(args.bbp)
    if bbp is None:
        where = args.bbp or "$LIVEGAIN_BBP or " + str(trf.DEFAULT_BBP)
        print(f"bbpPairings not found ({where}; bench/build_bbp.sh builds it):")
        print("only the real pairings are compared.\n")
        if args.bbp:
            raise SystemExit(1)
    pairers: dict[str, Pairer] = {}
    for spec in args.pairer or DEFAULT_PAIRERS:
        f = load_pairer(spec)
        if f is None:
            if args.pairer:
                raise SystemExit(f"--pairer {spec}: module not found")
            continue
        short = spec.partition(":")[2]
        clash = [x for x in args.pairer or DEFAULT_PAIRERS if x.partition(":")[2] == short]
        pairers[spec.removeprefix("livegain.core.") if len(clash) > 1 else short] = f
    timing: dict[str, float] = {}
    results: list[tuple[str, bool, list[RoundRow]]] = []
    for path in files:
        partial = "partial" in path.name or path.name in PARTIAL
        games, elo = read(path)
        results.append((path.stem, partial, agreement(games, elo, pairers, bbp, timing)))

    def table(title: str, head: list[str], cells: Callable[[list[RoundRow]], list[str]]) -> None:
        print(f"{title}\n")
        print("| event | rounds | " + " | ".join(head) + " |")
        print("|---|---:|" + "---:|" * len(head))
        for partial in (False, True):
            rows_all: list[RoundRow] = []
            for name, is_partial, rows in results:
                if is_partial != partial:
                    continue
                rows_all += rows
                label = name + (" (partial)" if partial else "")
                span = f"{rows[0].round}-{rows[-1].round}"
                print(f"| {label} | {span} | " + " | ".join(cells(rows)) + " |")
            group = "partial" if partial else "complete"
            print(
                f"| **all {group}** | | " + " | ".join(f"**{c}**" for c in cells(rows_all)) + " |"
            )
        print()

    def against_bbp(name: str) -> Callable[[list[RoundRow]], list[str]]:
        def cells(rows: list[RoundRow]) -> list[str]:
            n = sum(x.bbp_pairs for x in rows)
            ran = [x for x in rows if x.bbp_pairs]
            ident = sum(x.mine[name][0] for x in ran)
            same = sum(x.mine[name][1] for x in ran)
            col = sum(x.mine[name][2] for x in ran)
            return [f"{ident}/{len(ran)}", str(n), pct(same, n), pct(col, n)]

        return cells

    def against_real(rows: list[RoundRow]) -> list[str]:
        n = sum(x.real for x in rows)
        cells = [str(n)]
        if bbp is not None:
            cells += [
                pct(sum(x.bbp_real for x in rows), n),
                pct(sum(x.bbp_real_col for x in rows), n),
            ]
        for name in pairers:
            cells += [
                pct(sum(x.mine[name][3] for x in rows), n),
                pct(sum(x.mine[name][4] for x in rows), n),
            ]
        return cells

    if bbp is not None:
        for name in pairers:
            table(
                f"{name} against bbpPairings --dutch ({bbp})",
                ["rounds identical", "bbp pairs", "pairs reproduced", "with colours"],
                against_bbp(name),
            )
    head = ["real pairs"]
    for name in (["bbp"] if bbp is not None else []) + list(pairers):
        head += [f"{name}: pairs", "with colours"]
    table("Real pairings reproduced", head, against_real)
    failed = [(n, x.round, x.bbp_error) for n, _, rows in results for x in rows if x.bbp_error]
    for name, r, why in failed:
        print(f"bbp failed on {name} round {r}: {why}")
    if args.rounds:
        width = max(len(rows) for _, _, rows in results)
        print("Per round, share of bbp's pairs reproduced with colours (= : the round identical)")
        for name in pairers if bbp is not None else []:
            print(f"\n{name}\n")
            print("| event | " + " | ".join(f"r{k + 2}" for k in range(width)) + " |")
            print("|---|" + "---:|" * width)
            for event, _, rows in results:
                cells = [
                    "=" if x.mine[name][0] else pct(x.mine[name][2], x.bbp_pairs).rstrip("%")
                    for x in rows
                ]
                print(f"| {event} | " + " | ".join(cells) + " |")
        print("\nPer round, share of the real pairs reproduced with colours: bbp / pairers\n")
        print("| event | " + " | ".join(f"r{k + 2}" for k in range(width)) + " |")
        print("|---|" + "---:|" * width)
        for event, _, rows in results:
            cells = []
            for x in rows:
                figs = ([x.bbp_real_col] if bbp is not None else []) + [
                    x.mine[n][4] for n in pairers
                ]
                cells.append("/".join(f"{100 * f / x.real:.0f}" for f in figs))
            print(f"| {event} | " + " | ".join(cells) + " |")
    print("\ntime: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timing.items()))


if __name__ == "__main__":
    main()
