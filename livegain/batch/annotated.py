"""A game with one evaluation per position: what the engine (or a PGN's
``[%eval]`` comments) produced, before any report is built from it.

Its own module, free of NumPy, so that reading and evaluating games
(``livegain.batch.pgnio``, ``livegain.batch.engine_analysis``) does not load the report's
maths (``livegain.batch.analysis``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import official_rating


@dataclass
class AnnotatedGame:
    """A finished (or partial) game with one score per position.

    ``scores[0]`` is the start position, ``scores[k]`` the position after ply k:
    centipawns from White's view, clipped to +/-3900, so
    ``len(scores) == len(sans) + 1``. ``wdl`` (optional) is per position, per
    mille from White's view. ``evaluations`` is filled in engine mode.
    ``counted_from_ply``: gains of earlier plies are not counted (2 when the
    start position's score is unknown; ``scores[0]`` is then a placeholder).
    """

    headers: dict[str, str]
    sans: list[str]
    ucis: list[str]
    scores: list[int]
    start_fen: str | None = None
    wdl: list[tuple[int, int, int] | None] | None = None
    evaluations: list[Evaluation] | None = None
    first_mover_is_white: bool = True
    extra: dict[str, str] = field(default_factory=dict)
    counted_from_ply: int = 1

    @property
    def white(self) -> str:
        return self.headers.get("White", "?")

    @property
    def black(self) -> str:
        return self.headers.get("Black", "?")

    @property
    def white_elo(self) -> int | None:
        return official_rating(self.headers.get("WhiteElo"))

    @property
    def black_elo(self) -> int | None:
        return official_rating(self.headers.get("BlackElo"))

    def move_label(self, ply: int) -> str:
        """``11.Bg5`` / ``11...Na4`` for ply ``ply`` (1-based)."""
        fullmove = 1
        if self.start_fen:
            try:
                fullmove = int(self.start_fen.split()[5])
            except (IndexError, ValueError):
                fullmove = 1
        offset = 0 if self.first_mover_is_white else 1
        k = ply - 1 + offset
        number = fullmove + k // 2
        dots = "." if k % 2 == 0 else "..."
        return f"{number}{dots}{self.sans[ply - 1]}"


#: ``Stockfish 15.1 depth 10``, ``Stockfish 16 nodes 100000``, ``Komodo 14 depth 12 nodes 5000``:
#: an engine's name, then its search limit as ``SearchLimit.describe()`` writes it.
_ANNOTATOR = re.compile(
    r"^\s*(?P<name>\S.*?)\s+(?P<limit>depth\s+\d+(?:\s+nodes\s+\d+)?|nodes\s+\d+)\s*$",
    re.IGNORECASE,
)


def annotator_engine(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """(engine name, search limit) from a game's ``Annotator`` tag when it
    names an engine and a limit (``[Annotator "Stockfish 15.1 depth 10"]`` ->
    ``("Stockfish 15.1", "depth 10")``: the file's ``[%eval]`` comments are that
    engine's at that limit); None for any other annotator (a person, a site)
    or none. The limit is normalised as ``SearchLimit.describe()`` writes it
    (lower case, single spaces), so it compares with the calibration files'."""
    match = _ANNOTATOR.match(headers.get("Annotator", ""))
    if match is None:
        return None
    limit = " ".join(match["limit"].lower().split())
    return " ".join(match["name"].split()), limit
