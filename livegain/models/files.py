"""The model files livegain ships and writes (TOML): reading them once per
text, their tables of numbers, provenance, and choosing a model for an
evaluation source (an engine at a limit, or a PGN's own evaluations)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import importlib.resources
import os
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from livegain.core.errors import LivegainError
from livegain.feeds.json_bounds import loads_toml_bounded, read_toml_text


class _Limit(Protocol):
    def describe(self) -> str: ...


LimitLike = _Limit | str | int | None


class CalibrationError(LivegainError, ValueError):
    """The calibration file is unreadable or malformed (names the file and entry)."""


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
# search: models.perceived.read_shipped_files).
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


def read_toml(p: Path) -> dict[str, Any]:
    """A TOML file's tables (not to be changed: they are kept for the next
    read); an empty dict when the file does not exist."""
    try:
        text = read_toml_text(p)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise CalibrationError(f"{p}: cannot read ({exc})") from exc
    except ValueError as exc:  # too large, not UTF-8
        raise CalibrationError(f"{p}: {exc}") from None
    kept = _PARSED.get(p)
    if kept is not None and kept[0] == text:
        return kept[1]
    try:
        data = loads_toml_bounded(text)
    except ValueError as exc:  # not TOML, too deep
        raise CalibrationError(f"{p}: {exc}") from None
    _PARSED[p] = (text, data)
    return data


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(round(value, 1))
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def today() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")


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


def limit_depth(limit: str | None) -> int | None:
    if limit and limit.startswith("depth "):
        try:
            return int(limit.split()[1])
        except (IndexError, ValueError):
            return None
    return None


class FittedModel(Protocol):
    """What :func:`choose_for_source` reads of a model: its name and provenance."""

    @property
    def name(self) -> str: ...

    @property
    def provenance(self) -> Mapping[str, str]: ...


M = TypeVar("M", bound=FittedModel)


def choose_for_source(
    models: Sequence[M],
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
    pgn = [m for m in models if m.provenance.get("evals") == "pgn"]
    engines = [m for m in models if m.provenance.get("evals") == "engine"]
    if evals == "pgn":
        if pgn:
            return pgn[0], f"model {pgn[0].name}"
        return models[0], f"model {models[0].name} (no model for PGN evaluations)"
    wanted = limit_text(limit)
    name = engine_name.strip().casefold() if engine_name else None

    def same_engine(m: M) -> bool:
        return name is None or m.provenance.get("engine", "").casefold() == name

    for m in engines:
        if same_engine(m) and m.provenance.get("limit") == wanted:
            return m, f"model {m.name}"
    for m in engines:
        also = [x.strip() for x in m.provenance.get("validated_also", "").split(",")]
        if same_engine(m) and wanted in also:
            fitted = m.provenance.get("limit")
            return m, f"model {m.name} (fitted at {fitted}, validated at {wanted})"
    depth = limit_depth(wanted)
    for pool in ([m for m in engines if same_engine(m)], engines):
        near = [m for m in pool if limit_depth(m.provenance.get("limit")) is not None]
        if near and depth is not None:
            best = min(
                near, key=lambda m: abs((limit_depth(m.provenance.get("limit")) or 0) - depth)
            )
            return best, (
                f"model {best.name} (nearest to {engine_name or 'this engine'} at {wanted}; "
                "not validated at this limit)"
            )
    fallback = pgn[0] if pgn else models[0]
    return fallback, (
        f"model {fallback.name} (no model for {engine_name or 'this engine'} at {wanted}; "
        "not validated for it)"
    )


def model_file(env_var: str, name: str) -> Path:
    """A model file in use: the one ``$env_var`` names, else the packaged
    ``livegain/data/{name}`` (a copy of ``config/{name}`` in a wheel, a link
    to it in a checkout)."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    return Path(str(importlib.resources.files("livegain") / "data" / name))


Found = TypeVar("Found")


def found_or_none(
    what: str, path: str | Path | None, find: Callable[[], tuple[Found | None, str]]
) -> tuple[Found | None, str]:
    """``find()`` for those that must go on without a model (the service,
    ``analyze``, the demo): a named file that is missing, or a model file that
    cannot be read, gives no model and a line saying why ("no {what} (...)"),
    not an error."""
    if path is not None and not Path(path).is_file():
        return None, f"no {what} ({path}: no such file)"
    try:
        return find()
    except CalibrationError as exc:
        return None, f"no {what} ({exc})"
