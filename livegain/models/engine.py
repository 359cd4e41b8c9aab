"""The shipped engine calibration: r_e per engine and search limit (seed 002, Algorithm 3).

One file is the source of truth: ``config/calibration.toml`` in the source tree.
The package reaches it as ``livegain/data/calibration.toml``, a symbolic link to
that file, which the wheel build turns into a copy, so an installed livegain
reads the same numbers as a checkout. ``livegain calibrate --write-config``
rewrites it.

Each ``[[engine]]`` entry names an engine (its UCI ``id name``, e.g.
``"Stockfish 15.1"``), a limit (``"depth 12"``), the strength ``rating`` with
its interval, provenance fields, and optionally ``gains``: the measured
distribution of gain of the engine's own best moves (centipawn -> count), for
Algorithm 4 against a measured engine instead of the single peak at 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from livegain.core.histogram import GainHistogram
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.models.files import (
    CalibrationError,
    LimitLike,
    limit_text,
    model_file,
    read_toml,
    toml_value,
)

#: Environment variable naming another calibration file.
ENV_PATH = "LIVEGAIN_CALIBRATION"


@dataclass(frozen=True)
class EngineCalibration:
    """One engine at one limit: its strength and where it came from."""

    name: str
    limit: str
    rating: float
    low: float | None = None
    high: float | None = None
    players: int | None = None
    games: int | None = None
    positions: int | None = None
    source: str | None = None
    date: str | None = None
    command: str | None = None
    gains: Mapping[int, int] = field(default_factory=dict)
    gains_positions: int | None = None
    rating_measured: float | None = None

    def engine_histogram(self) -> GainHistogram | None:
        """The measured engine gain distribution, or None (single peak at 0)."""
        return GainHistogram.from_counts(self.gains) if self.gains else None


def shipped_path() -> Path:
    """The calibration file in use: ``$LIVEGAIN_CALIBRATION`` or the packaged one."""
    return model_file(ENV_PATH, "calibration.toml")


def config_path() -> Path:
    """Where ``--write-config`` writes: the real file behind the packaged name."""
    return shipped_path().resolve()


def load_calibrations(path: str | Path | None = None) -> list[EngineCalibration]:
    """Every entry of the calibration file (an empty list when there is none)."""
    p = Path(path) if path is not None else shipped_path()
    data = read_toml(p)
    entries = data.get("engine", [])
    if not isinstance(entries, list):
        raise CalibrationError(f"{p}: 'engine' must be an array of tables ([[engine]])")
    return [_entry(p, i, e) for i, e in enumerate(entries, start=1)]


def _entry(path: Path, number: int, raw: Any) -> EngineCalibration:
    where = f"{path}: [[engine]] #{number}"
    if not isinstance(raw, dict):
        raise CalibrationError(f"{where}: not a table")
    try:
        name = str(raw["name"])
        limit = " ".join(str(raw["limit"]).split())
        rating = float(raw["rating"])
    except KeyError as exc:
        raise CalibrationError(f"{where}: missing {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise CalibrationError(f"{where}: bad value ({exc})") from exc
    if not math.isfinite(rating):
        raise CalibrationError(f"{where}: rating must be a finite number")
    gains_raw = raw.get("gains", {})
    try:
        gains = {int(k): int(v) for k, v in dict(gains_raw).items()}
    except (TypeError, ValueError) as exc:
        raise CalibrationError(f"{where}: gains must map centipawns to counts ({exc})") from exc

    def opt(key: str, kind: type[Any]) -> Any:
        value = raw.get(key)
        return None if value is None else kind(value)

    return EngineCalibration(
        name=name,
        limit=limit,
        rating=rating,
        low=opt("low", float),
        high=opt("high", float),
        players=opt("players", int),
        games=opt("games", int),
        positions=opt("positions", int),
        source=opt("source", str),
        date=opt("date", str),
        command=opt("command", str),
        gains=gains,
        gains_positions=opt("gains_positions", int),
        rating_measured=opt("rating_measured", float),
    )


def find_calibration(
    engine_name: str | None, limit: LimitLike, path: str | Path | None = None
) -> EngineCalibration | None:
    """The entry for ``engine_name`` at ``limit``.

    ``engine_name=None`` means the default engine: the first entry at that
    limit. Names compare case-insensitively; limits as ``describe()`` text.
    """
    wanted = limit_text(limit)
    for entry in load_calibrations(path):
        if wanted is not None and entry.limit != wanted:
            continue
        if engine_name is None or entry.name.casefold() == engine_name.strip().casefold():
            return entry
    return None


def default_engine_rating(
    engine_name: str | None, limit: LimitLike, path: str | Path | None = None
) -> float:
    """r_e for this engine and limit from the shipped calibration, else 2860 (the paper's)."""
    entry = find_calibration(engine_name, limit, path)
    return entry.rating if entry is not None else PAPER_ENGINE_RATING


#: Where the paper's r_e (2860) comes from, as the lines that name it say.
PAPER_SOURCE = "the paper's Houdini 1.5a depth 20"


def choose_engine_rating(
    engine_name: str | None, limit: LimitLike, given: float | None = None, via: str = ""
) -> tuple[float, str]:
    """(r_e, where it came from), one rule for the service and batch analysis:
    ``given`` (configured), else the shipped calibration of this engine at
    this limit, else the paper's 2860 (also when the file cannot be read: a
    broken calibration file stops neither a service nor an analysis).
    ``via``: how the engine and limit were known, for the line."""
    paper = PAPER_SOURCE
    if given is not None:
        return float(given), "configured"
    try:
        entry = find_calibration(engine_name, limit)
    except Exception:
        return PAPER_ENGINE_RATING, f"{paper} (calibration unreadable)"
    if entry is None:
        return (
            PAPER_ENGINE_RATING,
            f"{paper} (no calibration for {engine_name or 'this engine'} at {limit}{via})",
        )
    return float(entry.rating), f"calibration: {entry.name} {entry.limit}{via}"


def default_engine_histogram(
    engine_name: str | None, limit: LimitLike, path: str | Path | None = None
) -> GainHistogram | None:
    """The measured engine gain distribution for this engine and limit, if shipped."""
    entry = find_calibration(engine_name, limit, path)
    return entry.engine_histogram() if entry is not None else None


# -- writing ---------------------------------------------------------------

_HEADER = """\
# Engine strength r_e (seed 002, Algorithm 3) per engine and search limit.
# Read by livegain.models.engine.default_engine_rating(); written by
#   livegain calibrate FILE.pgn --write-config [--engine-distribution]
# Provenance of every entry: docs/calibration.md.
"""


def dumps(entries: Sequence[EngineCalibration]) -> str:
    """TOML text for ``entries`` (the format :func:`load_calibrations` reads)."""
    out = [_HEADER]
    for e in entries:
        out.append("\n[[engine]]\n")
        for key in (
            "name",
            "limit",
            "rating",
            "low",
            "high",
            "players",
            "games",
            "positions",
            "source",
            "date",
            "command",
            "gains_positions",
            "rating_measured",
        ):
            value = getattr(e, key)
            if value is not None:
                out.append(f"{key} = {toml_value(value)}\n")
        if e.gains:
            out.append("[engine.gains]  # centipawns -> count\n")
            items = sorted(e.gains.items())
            for i in range(0, len(items), 8):
                chunk = items[i : i + 8]
                out.append("".join(f'"{k}" = {v}\n' for k, v in chunk))
    return "".join(out)


def store_calibration(entry: EngineCalibration, path: str | Path | None = None) -> Path:
    """Add ``entry`` to the calibration file, replacing one with the same name and limit.

    Keeps a measured engine distribution already there when ``entry`` has none.
    """
    p = Path(path) if path is not None else config_path()
    entries = load_calibrations(p)
    kept: list[EngineCalibration] = []
    for old in entries:
        same = old.name.casefold() == entry.name.casefold() and old.limit == entry.limit
        if same:
            if not entry.gains and old.gains:
                entry = replace(
                    entry,
                    gains=dict(old.gains),
                    gains_positions=old.gains_positions,
                    rating_measured=old.rating_measured,
                )
            continue
        kept.append(old)
    kept.append(entry)
    p.write_text(dumps(kept), encoding="utf-8")
    return p
