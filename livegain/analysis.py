"""Batch analysis of whole games: from per-position scores to per-game, per-player
and per-tournament reports (Algorithms 1, 2, 3 and 4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from livegain.core.evaluation import Evaluation


@dataclass
class AnnotatedGame:
    """A finished (or partial) game with one score per position.

    ``scores[0]`` is the start position, ``scores[k]`` the position after ply k:
    centipawns from White's view, clipped to +/-3900, so
    ``len(scores) == len(sans) + 1``. ``wdl`` (optional) is per position, per
    mille from White's view. ``evaluations`` is filled in engine mode.
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

    @property
    def white(self) -> str:
        return self.headers.get("White", "?")

    @property
    def black(self) -> str:
        return self.headers.get("Black", "?")

    @property
    def white_elo(self) -> int | None:
        return _elo(self.headers.get("WhiteElo"))

    @property
    def black_elo(self) -> int | None:
        return _elo(self.headers.get("BlackElo"))


def _elo(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        elo = int(value.strip())
    except ValueError:
        return None
    return elo if elo > 0 else None
