"""The ``livegain`` command.

argparse (standard library) parses; each sub-command lives in its own module
with a ``register(subparsers)`` function. Errors the user can fix raise
:class:`CliError` and end as one line on stderr with a non-zero exit, never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from livegain import __version__
from livegain.cli._common import CliError

# Sub-command modules, in the order `livegain --help` lists them.
_COMMANDS = (
    "analyze",
    "calibrate",
    "validate",
    "serve",
    "demo",
    "replay",
    "elo",
    "odds",
    "rank",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="livegain",
        description="Live chess broadcast analyzer: perceived Elo ratings from engine gains.",
    )
    parser.add_argument("--version", action="version", version=f"livegain {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMANDS:
        module = importlib.import_module(f"livegain.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(argv) if argv is not None else sys.argv[1:]
    args = parser.parse_args(words)
    args.argv = words  # the command as typed, for provenance records
    try:
        code = args.func(args)
    except CliError as exc:
        print(f"livegain {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
