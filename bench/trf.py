"""TRF tournament files for bbpPairings, and its pairing read back.

bbpPairings (``--dutch FILE -p``) pairs the round after the last one played
in a TRF(x) / TRF-16 file. What it needs of the file (its
``src/fileformats/trf.cpp``):

* one ``001`` line per player: pairing number (columns 5-8), rating (49-52,
  blank for none), points (81-84, checked against the results: a file whose
  points do not add up is refused), then one 10-column record per round from
  column 92: opponent (4 digits, ``0000`` for none), colour (``w``, ``b``,
  ``-``) and result (``1``, ``=``, ``0`` for a game played; ``+``/``-`` for a
  forfeit won or lost; ``U`` for a pairing-allocated bye, ``F``/``H``/``Z`` for
  a full-point, half-point, zero-point bye: ``0000 - U`` etc.);
* a player who is not to be paired in the round being paired has a record for
  that round already (``0000 - Z``: absent); everyone else has none;
* ``XXR`` the total number of rounds (required when pairing; it decides the
  last round's topscorer exceptions);
* ``XXC white1`` or ``black1``: the initial colour (else inferred from round
  1's colours).

The pairing comes back as a count of pairs, then one line per pair, White's
pairing number then Black's (``0`` for Black: that player has the bye).

Nothing in livegain uses this: it serves ``bench/swiss_pairing_agreement.py``
and ``tests/core/test_swiss_pairing_reference.py``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BBP = Path("/work/build/bbpPairings/bbpPairings.exe")
"""Where ``bench/build_bbp.sh`` builds it in the development setup."""

RESULT_POINTS = {"1": 1.0, "=": 0.5, "0": 0.0, "+": 1.0, "-": 0.0}
BYE_POINTS = {"U": 1.0, "F": 1.0, "H": 0.5, "Z": 0.0}
GAME_CODES = {"1-0": ("1", "0"), "0-1": ("0", "1"), "1/2-1/2": ("=", "=")}


@dataclass(frozen=True)
class Record:
    """One round of a player's line: ``opponent`` 0 when there was no game."""

    opponent: int
    colour: str
    result: str

    def __post_init__(self) -> None:
        if self.opponent:
            ok = self.colour in ("w", "b") and self.result in RESULT_POINTS
        else:
            ok = self.colour == "-" and self.result in BYE_POINTS
        if not ok:
            raise ValueError(f"not a TRF round record: {self}")

    @property
    def points(self) -> float:
        return (RESULT_POINTS if self.opponent else BYE_POINTS)[self.result]

    def text(self) -> str:
        return f"{self.opponent:04d} {self.colour} {self.result}"


ABSENT = Record(0, "-", "Z")


@dataclass(frozen=True)
class Player:
    """A ``001`` line: ``records`` one per round played so far; ``absent``:
    not to be paired in the next round."""

    number: int
    name: str
    records: tuple[Record, ...]
    rating: int = 0
    absent: bool = False

    @property
    def points(self) -> float:
        return sum(r.points for r in self.records)

    def line(self, rank: int) -> str:
        if not 1 <= self.number <= 9999 or not 0 <= self.rating <= 9999:
            raise ValueError(f"player {self.number}: number or rating out of the TRF's range")
        rating = f"{self.rating:4d}" if self.rating else "    "
        head = (
            f"001 {self.number:4d}{'':6}{self.name[:33]:<33} {rating}{'':28}"
            f"{self.points:4.1f} {rank:4d}"
        )
        records = [*self.records, *((ABSENT,) if self.absent else ())]
        return head + "".join(f"  {r.text()}" for r in records)


def write(
    players: Sequence[Player], total_rounds: int, initial_colour: str = "w", name: str = ""
) -> str:
    """The TRF text (lines ending in ``\\n``) for pairing the round after
    the players' records: ``initial_colour`` ``w`` or ``b``."""
    numbers = [p.number for p in players]
    if sorted(numbers) != list(range(1, len(players) + 1)):
        raise ValueError("pairing numbers must be 1..n, each once")
    played = {len(p.records) for p in players}
    if len(played) > 1:
        raise ValueError(f"every player needs a record per round played, got {sorted(played)}")
    if played and played.pop() >= total_rounds:
        raise ValueError(f"no round left to pair of {total_rounds}")
    if initial_colour not in ("w", "b"):
        raise ValueError(f"initial colour is w or b, got {initial_colour!r}")
    ranked = sorted(players, key=lambda p: (-p.points, p.number))
    rank = {p.number: k for k, p in enumerate(ranked, 1)}
    lines = [f"012 {name}".rstrip()]
    lines += [p.line(rank[p.number]) for p in sorted(players, key=lambda p: p.number)]
    lines.append(f"XXR {total_rounds}")
    lines.append(f"XXC {'white1' if initial_colour == 'w' else 'black1'}")
    return "\n".join(lines) + "\n"


def from_rounds(
    order: Sequence[str],
    rounds: Sequence[Collection[tuple[str, str, str]]],
    present: Collection[str],
    total_rounds: int,
    byes: Sequence[Mapping[str, str]] = (),
    initial_colour: str = "w",
    ratings: Mapping[str, int] | None = None,
) -> str:
    """The TRF for pairing round ``len(rounds) + 1``: ``order`` the players in
    initial order (pairing numbers 1..n); ``rounds`` each round's games as
    (White, Black, result ``1-0``/``0-1``/``1/2-1/2``; anything else is
    written as a game both lost); ``byes[k]`` the byes of round k + 1 (player
    to code ``U``/``F``/``H``/``Z``); a player with neither a game nor a bye in
    a round is absent from it (``Z``); ``present`` the players to pair."""
    number = {p: k for k, p in enumerate(order, 1)}
    if len(number) != len(order):
        raise ValueError("a player is listed twice")
    records: dict[str, list[Record]] = {p: [] for p in order}
    for k, games in enumerate(rounds):
        got: dict[str, Record] = {}
        for white, black, result in games:
            for p in (white, black):
                if p not in number:
                    raise ValueError(f"round {k + 1}: {p!r} is not in the initial order")
                if p in got:
                    raise ValueError(f"round {k + 1}: {p!r} plays twice")
            w, b = GAME_CODES.get(result, ("0", "0"))
            got[white] = Record(number[black], "w", w)
            got[black] = Record(number[white], "b", b)
        for p, code in (byes[k] if k < len(byes) else {}).items():
            if p in got:
                raise ValueError(f"round {k + 1}: {p!r} has a game and a bye")
            got[p] = Record(0, "-", code)
        for p in order:
            records[p].append(got.get(p, ABSENT))
    unknown = set(present) - set(number)
    if unknown:
        raise ValueError(f"players to pair not in the initial order: {sorted(unknown)}")
    rating = ratings or {}
    players = [
        Player(number[p], p, tuple(records[p]), rating.get(p, 0), p not in present) for p in order
    ]
    return write(players, total_rounds, initial_colour)


@dataclass(frozen=True)
class Paired:
    """bbp's pairing: ``games`` as (White, Black) pairing numbers, board order."""

    games: tuple[tuple[int, int], ...]
    bye: int | None


def read_pairing(text: str) -> Paired:
    """Parse bbp's ``-p`` output."""
    lines = [x.split() for x in text.splitlines() if x.strip()]
    if not lines or len(lines[0]) != 1 or not lines[0][0].isdigit():
        raise ValueError(f"bbp output: no count of pairs on its first line: {text[:80]!r}")
    count = int(lines[0][0])
    if len(lines) != count + 1:
        raise ValueError(f"bbp output: {count} pairs announced, {len(lines) - 1} lines")
    games: list[tuple[int, int]] = []
    bye: int | None = None
    for k, row in enumerate(lines[1:], 2):
        if len(row) != 2 or not all(x.isdigit() for x in row):
            raise ValueError(f"bbp output line {k}: not two pairing numbers: {row}")
        white, black = int(row[0]), int(row[1])
        if black == 0:
            if bye is not None:
                raise ValueError(f"bbp output line {k}: a second bye")
            bye = white
        else:
            games.append((white, black))
    return Paired(tuple(games), bye)


def find_bbp(path: str | Path | None = None) -> Path | None:
    """The bbpPairings executable: ``path``, else ``$LIVEGAIN_BBP``, else
    :data:`DEFAULT_BBP`; None when that file is not there."""
    chosen = Path(path or os.environ.get("LIVEGAIN_BBP") or DEFAULT_BBP)
    return chosen if chosen.is_file() and os.access(chosen, os.X_OK) else None


class BbpError(RuntimeError):
    """bbp refused the file or found no pairing (its exit status and message)."""


def pair(bbp: Path, trf: str) -> Paired:
    """Pair the next round of ``trf`` with ``bbp --dutch``."""
    with tempfile.TemporaryDirectory(prefix="livegain-trf-") as tmp:
        source = Path(tmp) / "event.trf"
        source.write_text(trf, encoding="ascii", errors="replace")
        out = Path(tmp) / "pairing.txt"
        proc = subprocess.run(
            [str(bbp), "--dutch", str(source), "-p", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if proc.returncode != 0:
            raise BbpError(f"bbp exit status {proc.returncode}: {proc.stderr.strip()}")
        return read_pairing(out.read_text())
