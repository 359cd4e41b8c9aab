"""JSON Schema files of the wire messages: rendering and the write/check command.

The WebSocket/MQTT protocol (:mod:`livegain.publish.schema`) and the remote
engine protocol (:mod:`livegain.remote.protocol`) each name their files and
their ``$id`` prefix; both are written and checked the same way (stable text:
sorted keys, 2-space indent, final newline).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter


def render(files: Mapping[str, Any], id_prefix: str) -> dict[str, str]:
    """File name -> JSON Schema text of each type in ``files``; ``$id`` is
    ``{id_prefix}/{name}``."""
    out: dict[str, str] = {}
    for name, tp in files.items():
        schema = TypeAdapter(tp).json_schema(mode="serialization")
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"{id_prefix}/{name}"
        out[name] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def main(prog: str, description: str, schemas: dict[str, str], argv: list[str] | None) -> int:
    """Write ``schemas`` into a directory (default docs/protocol), or with
    ``--check`` say which files differ (exit status 1)."""
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(prog=f"python -m {prog}", description=description)
    ap.add_argument("dir", nargs="?", default="docs/protocol", help="output directory")
    ap.add_argument("--check", action="store_true", help="fail if the files differ")
    args = ap.parse_args(argv)
    root = Path(args.dir)
    stale = []
    for name, text in schemas.items():
        path = root / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            root.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print("out of date: " + ", ".join(stale) + f" (run python -m {prog})")
        return 1
    return 0
