"""Opening tables (:mod:`livegain.core.opening`): read and written as gzipped
JSON beside the perceived-rating models, which name theirs (``opening =
"opening-lichess.json.gz"`` in a ``[[model]]``). Written by ``livegain
fit-opening``, with its provenance inside."""

from __future__ import annotations

import gzip
import importlib.resources
import json
from pathlib import Path
from typing import Any

from livegain.core.opening import OpeningTable
from livegain.models.files import PROVENANCE_KEYS, CalibrationError

#: The tables read, by resolved path (one read per process).
_READ: dict[Path, OpeningTable] = {}


def opening_file(name: str, beside: Path) -> Path:
    """Where the opening table ``name`` of a model file at ``beside`` lies:
    next to that file, else among the packaged data."""
    near = beside.parent / name
    if near.exists():
        return near
    return Path(str(importlib.resources.files("livegain") / "data" / name))


def load_opening_table(path: str | Path) -> OpeningTable:
    """The table of ``path`` (gzipped JSON); :class:`CalibrationError` names
    the file and what is wrong."""
    p = Path(path).resolve()
    found = _READ.get(p)
    if found is not None:
        return found
    try:
        with gzip.open(p, "rt", encoding="utf-8") as f:
            raw: Any = json.load(f)
        estimates = {str(k): float(v) for k, v in raw["estimates"].items()}
        table = OpeningTable(
            name=str(raw["name"]),
            scale=str(raw["scale"]),
            plies=int(raw["plies"]),
            m=float(raw["m"]),
            sd=float(raw["sd"]),
            estimates=estimates,
            provenance={k: str(v) for k, v in raw.get("provenance", {}).items()},
            file=p.name,
        )
    except FileNotFoundError as exc:
        raise CalibrationError(f"{p}: opening table not found") from exc
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CalibrationError(f"{p}: not an opening table ({type(exc).__name__}: {exc})") from exc
    _READ[p] = table
    return table


def write_opening_table(table: OpeningTable, path: str | Path) -> Path:
    """Write ``table`` to ``path`` as gzipped JSON (keys sorted, estimates to
    a tenth of a point; the same table gives the same bytes)."""
    p = Path(path)
    body = {
        "name": table.name,
        "scale": table.scale,
        "plies": table.plies,
        "m": table.m,
        "sd": round(table.sd, 1),
        "provenance": {k: table.provenance[k] for k in PROVENANCE_KEYS if k in table.provenance},
        "estimates": {k: round(v, 1) for k, v in sorted(table.estimates.items())},
    }
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    p.write_bytes(gzip.compress(data, mtime=0))
    _READ.pop(p.resolve(), None)
    return p
