"""Documents read within bounds: every JSON document a feed, a lookup, a
gateway or a remote engine reads (LiveChess Cloud's, Lichess's, an MQTT move
event, a standings message, a worker's message) goes through
:func:`loads_bounded`, and every TOML file livegain reads (the configuration,
the model files) through :func:`loads_toml_bounded`, its text read by
:func:`read_toml_text`.

A document nested deeper than :data:`MAX_DEPTH` levels is refused, whether
the parser's own recursion limit stops it (a document nested 100,000 deep)
or it parses and is then found too deep; either way one :class:`ValueError`
says what was wrong, never a ``RecursionError`` traceback. The size of a
JSON document is bounded by whoever fetched the bytes (``max_body``,
``max_bytes``); a TOML file is read up to :data:`MAX_TOML_BYTES`.

Messages parsed straight into pydantic models (WebSocket clients' messages,
the service's messages on a gateway, the remote engine protocol) are bounded
by their size limit and by pydantic's JSON parser, which refuses nesting
deeper than 200 levels with a ``ValidationError`` (a ``ValueError``).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Deepest nesting of lists and objects accepted in a source's JSON document.
MAX_DEPTH = 32
#: Largest TOML file read, bytes (the shipped configuration is 12 KiB, the
#: largest model file 22 KiB).
MAX_TOML_BYTES = 1024 * 1024


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
        raise ValueError(f"invalid JSON: {_one_line(exc)}") from None
    if depth_exceeds(data, max_depth):
        raise ValueError(f"invalid JSON: nested deeper than {max_depth} levels")
    return data


def loads_toml_bounded(text: str, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """Parse a TOML document; ValueError ("not valid TOML (...)") when it is not
    TOML, is longer than :data:`MAX_TOML_BYTES` or nests tables and arrays
    deeper than ``max_depth``."""
    if len(text) > MAX_TOML_BYTES:
        raise ValueError(f"larger than {MAX_TOML_BYTES} bytes, the most read of a TOML file")
    if _dotted_key_exceeds(text, max_depth):
        # tomllib's time grows with the square of a dotted key's length: refused unread
        raise ValueError(f"not valid TOML (nested deeper than {max_depth} levels)")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ValueError(f"not valid TOML (nested deeper than {max_depth} levels)") from None
    except ValueError as exc:  # TOMLDecodeError, and an integer of over 4300 digits
        raise ValueError(f"not valid TOML ({_one_line(exc)})") from None
    if depth_exceeds(data, max_depth):
        raise ValueError(f"not valid TOML (nested deeper than {max_depth} levels)")
    return data


def read_toml_bounded(path: Path, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """A TOML file, parsed: :func:`loads_toml_bounded` of
    :func:`read_toml_text`. OSError when it cannot be read
    (``FileNotFoundError`` included); ValueError for everything else, naming
    what is wrong (not UTF-8, too large, not TOML, too deep) but not the file."""
    return loads_toml_bounded(read_toml_text(path), max_depth)


def read_toml_text(path: Path) -> str:
    """A TOML file's text, of which at most :data:`MAX_TOML_BYTES` are read:
    OSError when it cannot be read, ValueError when it is larger or not UTF-8."""
    with path.open("rb") as f:
        raw = f.read(MAX_TOML_BYTES + 1)
    if len(raw) > MAX_TOML_BYTES:
        raise ValueError(f"larger than {MAX_TOML_BYTES} bytes, the most read of a TOML file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None


#: A TOML word: a bare key (or number), a one-line quoted string, or one character.
_TOML_TOKEN = re.compile(r"""[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|\S""")


def _dotted_key_exceeds(text: str, limit: int) -> bool:
    """Whether the text holds a dotted key (``a.b.c = 1``, ``[a.b.c]``, in an
    inline table too) of more than ``limit`` dots, each a level of nesting.
    Read word by word, in time linear in the text (a float such as ``1.5``
    is a chain of one dot; text in multi-line strings and comments is read as
    words too, so 33 dotted words in a row there are refused as well)."""
    dots = 0
    after = ""  # "key" after a key segment, "dot" after a dot that follows one
    for match in _TOML_TOKEN.finditer(text):
        word = match.group()
        if word == ".":
            if after == "key":
                dots += 1
                if dots > limit:
                    return True
                after = "dot"
            else:
                dots, after = 0, ""
        elif word[0] in "\"'_-" or word[0].isalnum():
            if after != "dot":
                dots = 0
            after = "key"
        else:
            dots, after = 0, ""
    return False


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]
