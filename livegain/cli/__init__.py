"""The ``livegain`` command.

argparse (standard library) parses; each sub-command lives in its own module
with a ``register(subparsers)`` function. Every error livegain raises on
purpose (:class:`~livegain.core.errors.LivegainError`: a file it cannot read,
an engine that does not start, a store it cannot open; the command line's own,
:class:`~livegain.cli.errors.CliError`, for what a command was given) ends
here, in :func:`main`, as one line on stderr with exit code 2, never a
traceback; so do usage errors (argparse's, without its usage lines).

Exit codes (docs/service.md, "Exit codes"): 0 done; 2 an error the user can
fix (bad input, a usage error); 130 a command that ends on its own,
interrupted by Ctrl-C. A command that runs until it is stopped
(:data:`UNTIL_STOPPED`) ends on Ctrl-C or SIGTERM with "stopped" and 0,
whether it was starting, looking up its sources or running.

Start-up: only the module of the sub-command being run is imported; the others
are listed by name and one-line help (``_COMMANDS``, kept equal to what their
modules register by tests/cli/test_cli_startup.py), so ``livegain --help`` and
``livegain elo ...`` do not pay for the engine, SciPy or the service.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn

from livegain import __version__
from livegain.core.errors import LivegainError

# Sub-commands in the order `livegain --help` lists them: name -> (module, help).
_COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": ("analyze", "perceived Elo ratings of the players of a PGN file"),
    "calibrate": ("calibrate", "engine strength r_e from rated players (Algorithm 3)"),
    "fit": ("validate", "fit the calibrated perceived rating on rated games"),
    "fit-opening": ("opening", "fit the opening table of the perceived rating on rated games"),
    "validate": (
        "validate",
        "measure the perceived ratings against players' ratings on held-out games",
    ),
    "serve": ("serve", "run the live service: feeds -> engine -> WebSocket/MQTT overlays"),
    "watch": (
        "watch",
        "follow a real event: Lichess broadcast or LiveChess Cloud URL/id, PGN URL or file",
    ),
    "worker": (
        "worker",
        "evaluate positions for a service elsewhere: engine jobs from an MQTT broker",
    ),
    "gateway": ("gateway", "serve the overlays and /ws to viewers from the service's MQTT output"),
    "demo": ("demo", "replay a live round through the whole service; prints the URL to open"),
    "replay": (
        "replay",
        "replay a PGN file as a live broadcast (PGN over HTTP, LiveChess Cloud JSON, MQTT)",
    ),
    "elo": (
        "elo",
        "Elo maths: expected score, rating difference, FIDE rating change, performance",
    ),
    "odds": ("odds", "win/draw/loss of a game and exact odds of a match"),
    "rank": ("rank", "rank players by maximum likelihood from head-to-head results"),
}


#: Commands that run until they are stopped: Ctrl-C or SIGTERM is their way
#: to end ("stopped", exit 0), not an interruption (``demo --batch`` excepted).
UNTIL_STOPPED = frozenset({"serve", "watch", "worker", "gateway", "demo", "replay"})


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are one line on stderr, exit 2
    (``livegain odds game: error: argument --rating-a: 'nan' is not a finite
    number (livegain odds game --help)``); the sub-commands' parsers are of
    this class too."""

    #: The sub-command named (the top-level parser reports some of its
    #: errors, such as arguments nobody takes, under that name).
    command = ""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        if len(text) > 300:  # a value of 5,000 digits, quoted back
            text = text[:297] + "..."
        prog = f"livegain {self.command}" if self.command else self.prog
        self.exit(2, f"{prog}: error: {text} ({prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser. ``command=None``: every sub-command complete (imports every
    module). Otherwise only the module of ``command`` is imported and registers
    its sub-commands; the others are listed by name and help only (``""``: all
    of them, for ``livegain --help`` and errors)."""
    parser = _Parser(
        prog="livegain",
        description="Live chess broadcast analyzer: perceived Elo ratings from engine gains.",
    )
    parser.add_argument("--version", action="version", version=f"livegain {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    wanted = _COMMANDS[command][0] if command in _COMMANDS else None
    registered: set[str] = set()
    for name, (module_name, help_text) in _COMMANDS.items():
        if command is None or module_name == wanted:
            if module_name not in registered:
                registered.add(module_name)
                module = importlib.import_module(f"livegain.cli.{module_name}")
                module.register(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def _command_word(words: Sequence[str]) -> str:
    """The sub-command named on the command line ("" when none is): the first
    word that is not an option (the top level has no option taking a value)."""
    for word in words:
        if word == "--":
            return ""
        if not word.startswith("-"):
            return word
    return ""


def runs_until_stopped(words: Sequence[str]) -> bool:
    """Whether the command line names a command that runs until it is stopped."""
    return _command_word(words) in UNTIL_STOPPED and "--batch" not in words


def main(argv: Sequence[str] | None = None) -> int:
    words = list(argv) if argv is not None else sys.argv[1:]
    command = _command_word(words)
    try:
        parser = build_parser(command)
        if isinstance(parser, _Parser) and command in _COMMANDS:
            parser.command = command
        args = parser.parse_args(words)
        args.argv = words  # the command as typed, for provenance records
        code = args.func(args)
    except LivegainError as exc:  # what livegain refuses or cannot do: one line
        from livegain.cli.errors import error_line  # not before it is needed (--help)

        print(f"livegain {command}: error: {error_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted(command or "", runs_until_stopped(words))
    except BrokenPipeError:
        return 0
    return int(code or 0)


def _interrupted(command: str, until_stopped: bool) -> int:
    """Ctrl-C (or SIGTERM, for a command that runs until stopped): one line,
    and nothing more from the half-done work as the process ends (an event
    loop interrupted while it was being made, a coroutine never awaited)."""
    sys.unraisablehook = lambda _unraisable: None
    warnings.simplefilter("ignore")
    name = f"livegain {command}" if command in _COMMANDS else "livegain"
    if until_stopped:
        print(f"{name}: stopped", file=sys.stderr)
        return 0
    print(f"{name}: interrupted", file=sys.stderr)
    return 130


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


#: Commands that end a batch: their files are closed and nothing of theirs
#: runs after them, so their process may skip the interpreter's teardown.
_BATCH_COMMANDS = frozenset({"analyze", "calibrate", "fit", "validate"})


def console() -> None:
    """The ``livegain`` console script: :func:`main`, then exit.

    A batch command leaves a large heap of small objects (a board, a trace
    point, a JSON dict per ply), and the interpreter's teardown frees them one
    by one (``livegain analyze`` of 10 games: interpreter start-up and
    teardown 100 -> 50 ms, docs/benchmarks.md), for nothing, since
    the process ends. When a batch command has returned (its output written,
    its files and engine processes closed), the other exit handlers run, then
    stdout and stderr are flushed and the process exits at once
    (``os._exit``). A command that raised (a bug: no input should make one
    raise) keeps the usual exit and its traceback; :func:`main` itself
    (tests, embedding) never exits.
    """
    words = sys.argv[1:]
    returned: list[int] = []
    if runs_until_stopped(words):
        # SIGTERM stops it as Ctrl-C does, before its own handlers are in
        # place too (while it starts, or looks up its sources).
        signal.signal(signal.SIGTERM, _stop)
    if _command_word(words) in _BATCH_COMMANDS:
        # Registered before the command runs, so it runs after the handlers
        # the command's libraries register (exit handlers run last-in first-out).
        atexit.register(_exit_at_once, returned)
    code = main(words)
    returned.append(code)
    sys.exit(code)


def _exit_at_once(returned: list[int]) -> None:
    if not returned:  # the command raised: the usual teardown and traceback
        return
    for stream in (sys.stdout, sys.stderr):
        # a closed pipe (`| head`): nothing more can be said
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(returned[0])


if __name__ == "__main__":  # pragma: no cover
    console()
