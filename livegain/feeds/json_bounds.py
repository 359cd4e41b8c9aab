"""JSON from a source, read within bounds: every JSON document a feed or a
lookup reads (LiveChess Cloud's, Lichess's) goes through :func:`loads_bounded`.

A document nested deeper than :data:`MAX_DEPTH` levels is refused, whether
the parser's own recursion limit stops it (a document nested 100,000 deep)
or it parses and is then found too deep; either way one :class:`ValueError`
says what was wrong, never a ``RecursionError`` traceback. The size is
bounded by whoever fetched the bytes (``max_body``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: Deepest nesting of lists and objects accepted in a source's JSON document.
MAX_DEPTH = 32


def depth_exceeds(data: object, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON value nests lists/objects deeper than ``limit`` (no recursion)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, Mapping):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def loads_bounded(body: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a JSON document; ValueError ("invalid JSON: ...") when it is not
    JSON or nests deeper than ``max_depth``."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise ValueError(f"invalid JSON: nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise ValueError(f"invalid JSON: {' '.join(str(exc).split())[:200]}") from None
    if depth_exceeds(data, max_depth):
        raise ValueError(f"invalid JSON: nested deeper than {max_depth} levels")
    return data
