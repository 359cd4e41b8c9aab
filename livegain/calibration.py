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

import contextlib
import dataclasses
import datetime as _dt
import importlib.resources
import math
import os
import tomllib
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from livegain.core.histogram import GainHistogram
from livegain.core.perceived import (
    EXTRAPOLATED,
    FORM_TAU,
    ForwardBin,
    MoveBin,
    MoveClasses,
    PerceivedModel,
)
from livegain.core.rating import PAPER_ENGINE_RATING

#: Environment variable naming another calibration file.
ENV_PATH = "LIVEGAIN_CALIBRATION"


class _Limit(Protocol):
    def describe(self) -> str: ...


LimitLike = _Limit | str | int | None


class CalibrationError(ValueError):
    """The calibration file is unreadable or malformed (names the file and entry)."""


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
    env = os.environ.get(ENV_PATH)
    if env:
        return Path(env)
    resource = importlib.resources.files("livegain") / "data" / "calibration.toml"
    return Path(str(resource))


def config_path() -> Path:
    """Where ``--write-config`` writes: the real file behind the packaged name."""
    return shipped_path().resolve()


def limit_text(limit: LimitLike) -> str | None:
    """``"depth 12"`` from a SearchLimit, a string, or a bare depth."""
    if limit is None:
        return None
    if isinstance(limit, int):
        return f"depth {limit}"
    if isinstance(limit, str):
        return " ".join(limit.split())
    return limit.describe()


# The tables of each file read, by path, with the text they were parsed from:
# the same text is not parsed twice. A command picks its engine rating and its
# model from the same files (`livegain analyze` reads them while its engines
# search: read_shipped_files).
_PARSED: dict[Path, tuple[str, dict[str, Any]]] = {}


Numbers = TypeVar("Numbers")


def numbers_from_table(cls: type[Numbers], raw: Mapping[str, Any], **given: Any) -> Numbers:
    """A frozen dataclass of numbers (``MoveBin``, ``ForwardBin``,
    ``RatingsPrior``...) from a TOML table: each field not in ``given`` is
    read by its name as its declared type (``int`` or ``float``). A missing
    key raises KeyError, a bad value ValueError or TypeError."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = dict(given)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in given or not f.init:
            continue
        kind = hints[f.name]
        if kind in (int, float):
            values[f.name] = kind(raw[f.name])
    return cls(**values)


def numbers_to_table(value: Any, skip: Sequence[str] = ()) -> dict[str, Any]:
    """The ``int`` and ``float`` fields of a dataclass, as a TOML table."""
    return {
        f.name: getattr(value, f.name)
        for f in dataclasses.fields(value)
        if f.init and f.name not in skip and isinstance(getattr(value, f.name), int | float)
    }


@contextlib.contextmanager
def reading_table(where: str, raw: Any) -> Iterator[dict[str, Any]]:
    """A TOML table of a model file, read in a ``with`` block: a table that is
    not one, a missing key or a bad value becomes one CalibrationError naming
    ``where``."""
    if not isinstance(raw, dict):
        raise CalibrationError(f"{where}: not a table")
    try:
        yield raw
    except KeyError as exc:
        raise CalibrationError(f"{where}: missing {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise CalibrationError(f"{where}: bad value ({exc})") from exc


def _read_toml(p: Path) -> dict[str, Any]:
    """A TOML file's tables (not to be changed: they are kept for the next
    read); an empty dict when the file does not exist."""
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise CalibrationError(f"{p}: cannot read ({exc})") from exc
    kept = _PARSED.get(p)
    if kept is not None and kept[0] == text:
        return kept[1]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"{p}: not valid TOML ({exc})") from exc
    _PARSED[p] = (text, data)
    return data


def read_shipped_files() -> None:
    """Read the calibration and model files in use now, so that the next
    lookups (:func:`find_calibration`, :func:`pick_perceived_model`) parse
    nothing. Raises :class:`CalibrationError` as they would."""
    _read_toml(shipped_path())
    _read_toml(perceived_path())


def load_calibrations(path: str | Path | None = None) -> list[EngineCalibration]:
    """Every entry of the calibration file (an empty list when there is none)."""
    p = Path(path) if path is not None else shipped_path()
    data = _read_toml(p)
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
# Read by livegain.calibration.default_engine_rating(); written by
#   livegain calibrate FILE.pgn --write-config [--engine-distribution]
# Provenance of every entry: docs/calibration.md.
"""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(round(value, 1))
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


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
                out.append(f"{key} = {_toml_value(value)}\n")
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


def today() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")


# -- the calibrated perceived-rating models ------------------------------------

#: Environment variable naming another perceived-rating model file.
PERCEIVED_ENV_PATH = "LIVEGAIN_PERCEIVED_MODELS"

_PERCEIVED_HEADER = """\
# Calibrated perceived-rating models (docs/maths.md, docs/validity.md), one
# [[model]] per evaluation source. Written by
#   livegain fit FILE.pgn [--evals pgn|engine] --write-config
# Each entry's provenance (command, data, date, evaluations) is kept beside it.
"""

#: Provenance keys of a model entry, written in this order.
PROVENANCE_KEYS = (
    "evals",
    "engine",
    "limit",
    "source",
    "part",
    "games",
    "player_games",
    "base",
    "date",
    "command",
    "validated_also",
)


def perceived_path() -> Path:
    """The model file in use: ``$LIVEGAIN_PERCEIVED_MODELS`` or the packaged one."""
    env = os.environ.get(PERCEIVED_ENV_PATH)
    if env:
        return Path(env)
    resource = importlib.resources.files("livegain") / "data" / "perceived.toml"
    return Path(str(resource))


def load_perceived_models(path: str | Path | None = None) -> list[PerceivedModel]:
    """Every model of the file (an empty list when there is none)."""
    p = Path(path) if path is not None else perceived_path()
    data = _read_toml(p)
    entries = data.get("model", [])
    if not isinstance(entries, list):
        raise CalibrationError(f"{p}: 'model' must be an array of tables ([[model]])")
    return [_model(p, i, e) for i, e in enumerate(entries, start=1)]


def _model(path: Path, number: int, raw: Any) -> PerceivedModel:
    with reading_table(f"{path}: [[model]] #{number}", raw):
        classes = MoveClasses(
            phase_edges=tuple(int(x) for x in raw["phase_edges"]),
            eval_edges=tuple(int(x) for x in raw["eval_edges"]),
            loss_edges=tuple(int(x) for x in raw["loss_edges"]),
            clip_cp=int(raw["clip_cp"]),
        )
        bins = tuple(numbers_from_table(MoveBin, b) for b in raw["bins"])
        provenance = {k: str(raw[k]) for k in PROVENANCE_KEYS if k in raw}
        forward = tuple(numbers_from_table(ForwardBin, b) for b in raw.get("forward", []))
        return PerceivedModel(
            name=str(raw["name"]),
            classes=classes,
            move_scores=tuple(float(x) for x in raw["move_scores"]),
            bins=bins,
            prior=float(raw["prior"]),
            prior_low=float(raw["prior_low"]),
            prior_high=float(raw["prior_high"]),
            min_moves=int(raw.get("min_moves", 5)),
            rating_low=None if raw.get("rating_low") is None else float(raw["rating_low"]),
            rating_high=None if raw.get("rating_high") is None else float(raw["rating_high"]),
            provenance=provenance,
            forward=forward,
            scale=str(raw.get("scale", "lichess")),
            pop_mean=None if raw.get("pop_mean") is None else float(raw["pop_mean"]),
            pop_sd=None if raw.get("pop_sd") is None else float(raw["pop_sd"]),
            below_label=str(raw.get("below_label", EXTRAPOLATED)),
            tau=float(raw.get("tau", FORM_TAU)),
        )


def _depth(limit: str | None) -> int | None:
    if limit and limit.startswith("depth "):
        try:
            return int(limit.split()[1])
        except (IndexError, ValueError):
            return None
    return None


M = TypeVar("M")


def choose_for_source(
    models: Sequence[M],
    provenance: Callable[[M], Mapping[str, str]],
    label: Callable[[M], str],
    evals: str,
    engine_name: str | None = None,
    limit: LimitLike = None,
) -> tuple[M | None, str]:
    """The model of an evaluation source among ``models``, and a line saying
    why it was chosen (one rule for every kind of fitted model).

    ``evals="pgn"``: the model fitted on evaluations read from PGN files.
    ``evals="engine"``: the model of this engine at this limit; else one
    validated at that limit too (``validated_also``); else the same engine's
    model at the nearest depth; else any engine model at the nearest depth;
    else the PGN model. The line says which fallback was taken.
    """
    if not models:
        return None, "no calibrated model shipped"
    pgn = [m for m in models if provenance(m).get("evals") == "pgn"]
    engines = [m for m in models if provenance(m).get("evals") == "engine"]
    if evals == "pgn":
        if pgn:
            return pgn[0], f"model {label(pgn[0])}"
        return models[0], f"model {label(models[0])} (no model for PGN evaluations)"
    wanted = limit_text(limit)
    name = engine_name.strip().casefold() if engine_name else None

    def same_engine(m: M) -> bool:
        return name is None or provenance(m).get("engine", "").casefold() == name

    for m in engines:
        if same_engine(m) and provenance(m).get("limit") == wanted:
            return m, f"model {label(m)}"
    for m in engines:
        also = [x.strip() for x in provenance(m).get("validated_also", "").split(",")]
        if same_engine(m) and wanted in also:
            fitted = provenance(m).get("limit")
            return m, f"model {label(m)} (fitted at {fitted}, validated at {wanted})"
    depth = _depth(wanted)
    for pool in ([m for m in engines if same_engine(m)], engines):
        near = [m for m in pool if _depth(provenance(m).get("limit")) is not None]
        if near and depth is not None:
            best = min(near, key=lambda m: abs((_depth(provenance(m).get("limit")) or 0) - depth))
            return best, (
                f"model {label(best)} (nearest to {engine_name or 'this engine'} at {wanted}; "
                "not validated at this limit)"
            )
    fallback = pgn[0] if pgn else models[0]
    return fallback, (
        f"model {label(fallback)} (no model for {engine_name or 'this engine'} at {wanted}; "
        "not validated for it)"
    )


def find_perceived_model(
    evals: str,
    engine_name: str | None = None,
    limit: LimitLike = None,
    path: str | Path | None = None,
    scale: str | None = None,
) -> tuple[PerceivedModel | None, str]:
    """The perceived-rating model for this evaluation source, and why
    (:func:`choose_for_source`). With a ``scale`` ("fide" or "lichess"), the
    models of that rating scale are preferred (one at another limit of the
    same engine too, labelled so); with none for the source on that scale,
    the other scale's model is taken and the line says so."""
    models = load_perceived_models(path)
    if scale is not None:
        same = [m for m in models if m.scale == scale]
        found = choose_for_source(same, _provenance, _name, evals, engine_name, limit)
        if found[0] is not None and "no model for" not in found[1]:
            return found
        anywhere = choose_for_source(models, _provenance, _name, evals, engine_name, limit)
        other, why = anywhere
        if other is not None and other.scale != scale:
            return other, f"{why}; on the {other.scale} scale, no {scale}-scale model for it"
        if other is not None:
            return other, why
        return found
    return choose_for_source(models, _provenance, _name, evals, engine_name, limit)


def _provenance(m: PerceivedModel) -> dict[str, str]:
    return m.provenance


def _name(m: PerceivedModel) -> str:
    return m.name


def pick_perceived_model(
    evals: str,
    engine_name: str | None = None,
    limit: LimitLike = None,
    path: str | Path | None = None,
    scale: str | None = None,
) -> tuple[PerceivedModel | None, str]:
    """:func:`find_perceived_model` for those that must go on without a model
    (the service, ``analyze``, the demo): a named file that is missing or a
    model file that cannot be read gives no model and says why, not an error."""
    if path is not None and not Path(path).is_file():
        return None, f"no calibrated model ({path}: no such file)"
    try:
        return find_perceived_model(evals, engine_name, limit, path, scale)
    except CalibrationError as exc:
        return None, f"no calibrated model ({exc})"


def perceived_model_toml(model: PerceivedModel) -> dict[str, Any]:
    """One ``[[model]]`` table."""
    out: dict[str, Any] = {"name": model.name}
    for key in PROVENANCE_KEYS:
        if key in model.provenance:
            out[key] = model.provenance[key]
    c = model.classes
    out.update(
        {
            "prior": model.prior,
            "prior_low": model.prior_low,
            "prior_high": model.prior_high,
            "min_moves": model.min_moves,
            **(
                {"rating_low": model.rating_low, "rating_high": model.rating_high}
                if model.rating_low is not None and model.rating_high is not None
                else {}
            ),
            "scale": model.scale,
            "below_label": model.below_label,
            "tau": model.tau,
            **(
                {"pop_mean": model.pop_mean, "pop_sd": model.pop_sd}
                if model.pop_mean is not None and model.pop_sd is not None
                else {}
            ),
            "clip_cp": c.clip_cp,
            "phase_edges": list(c.phase_edges),
            "eval_edges": list(c.eval_edges),
            "loss_edges": list(c.loss_edges),
            "move_scores": [round(m, 2) for m in model.move_scores],
            "bins": [numbers_to_table(b) for b in model.bins],
            "forward": [numbers_to_table(f) for f in model.forward],
        }
    )
    return out


def store_perceived_model(model: PerceivedModel, path: str | Path | None = None) -> Path:
    """Add ``model`` to the model file, replacing one of the same name."""
    import tomli_w

    p = Path(path) if path is not None else perceived_path().resolve()
    kept = [m for m in load_perceived_models(p) if m.name != model.name]
    kept.append(model)
    body = tomli_w.dumps({"model": [perceived_model_toml(m) for m in kept]})
    p.write_text(_PERCEIVED_HEADER + "\n" + body, encoding="utf-8")
    return p
