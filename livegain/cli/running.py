"""How a command runs and ends: its event loop (``--loop``), cancelled by
Ctrl-C or SIGTERM, and the one line of a command that was stopped."""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from livegain.cli.errors import CliError

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")


def stopped(command: str) -> int:
    """A command that runs until it is stopped, stopped (Ctrl-C, SIGTERM):
    one line on stderr, exit code 0 (docs/service.md, "Exit codes")."""
    print(f"livegain {command}: stopped", file=sys.stderr)
    return 0


def cancel_on_signals(task: asyncio.Task[Any]) -> list[int]:
    """SIGINT and SIGTERM cancel ``task`` (from the running event loop); the
    list returned gets each signal that came."""
    import asyncio
    import contextlib
    import signal

    loop = asyncio.get_running_loop()
    came: list[int] = []

    def on_signal(sig: int) -> None:
        came.append(sig)
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    return came


def run_async(main: Coroutine[Any, Any, T], loop: str | None) -> T:
    """``asyncio.run(main)``, on uvloop when ``loop`` is ``"uvloop"``."""
    import asyncio  # not at start-up: `livegain analyze` launches its engines first

    if loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            main.close()
            raise CliError(
                "--loop uvloop: uvloop is not installed (pip install 'livegain[uvloop]')"
            ) from None
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main)
    return asyncio.run(main)
