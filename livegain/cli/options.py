"""Options and option types the sub-commands share (argparse ``type``
functions, the engine options, the event loop option)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from livegain.cli.errors import CliError


def finite_float(text: str) -> float:
    """An option's number (argparse ``type``): a finite float; ``nan``, ``inf``
    and ``1e999`` are a usage error naming the option."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number")
    return value


def count(text: str) -> int:
    """A count given as an option (argparse ``type``): games, years. A whole
    number of at most nine digits: ``1e999`` and a number of 400 digits are a
    usage error naming the option (a sign is kept for the command to refuse)."""
    import argparse

    digits = text.strip().removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number")
    if len(digits) > 9:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is too large (at most 9 digits)")
    return int(text)


#: Most engine processes one command starts (``--workers``).
MAX_WORKERS = 1024


def processes(text: str) -> int:
    """``--workers`` (argparse ``type``): a whole number 1..:data:`MAX_WORKERS`."""
    import argparse

    n = count(text)
    if not 1 <= n <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{n} is not a number of processes 1-{MAX_WORKERS}")
    return n


def existing_file(path: str) -> Path:
    """Return ``path`` as a Path, or raise a CliError naming it."""
    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: no such file")
    if p.is_dir():
        raise CliError(f"{path}: is a directory, expected a file")
    return p


def add_engine_options(p: Any, engine_default: str | None = None) -> None:
    """The engine options shared by the batch commands: search limit,
    processes, binary and evaluation cache."""
    p.add_argument("--depth", type=int, default=None, metavar="D", help="engine depth (12)")
    p.add_argument("--nodes", type=int, default=None, metavar="N", help="engine node limit")
    p.add_argument("--workers", type=processes, default=None, metavar="W", help="engine processes")
    p.add_argument("--engine", default=engine_default, metavar="PATH", help="UCI engine")
    p.add_argument("--cache", default=None, metavar="PATH", help="SQLite evaluation cache")


#: Event loops the long-running commands can run on.
LOOPS = ("asyncio", "uvloop")


def add_loop_option(p: Any) -> None:
    p.add_argument(
        "--loop",
        choices=LOOPS,
        default=None,
        help="event loop: asyncio (the default) or uvloop (pip install 'livegain[uvloop]');"
        " docs/benchmarks.md compares them",
    )
