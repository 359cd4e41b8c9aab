"""Engine processes launched ahead of their pool.

An engine spends its first 0.1-0.2 s loading (Stockfish reads its network)
before it answers ``uci``. A command that will need a pool can launch the
processes first, before it imports the rest of itself and reads its input, so
that the two overlap; the pool then adopts them (``EnginePool(launched=...)``)
and talks to them as to processes it started. This module uses the standard
library only, so that importing it costs nothing.

An engine ends with the process that started it, whatever ends that one
(SIGKILL, the OOM killer included), in two ways. Its standard input is a pipe
whose only write end is that process's: at its death the engine reads EOF,
which Stockfish takes as ``quit``. And on Linux, an engine started from the
main thread asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``, set in the child between fork and exec:
:func:`_die_with_parent`), which ends any engine, busy or not, whether it
reads its input or not.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from livegain.engine.errors import EngineStartError

DEFAULT_ENGINE = "/usr/games/stockfish"


def default_workers() -> int:
    """One engine process per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def lower_priority(pid: int, nice: int) -> None:
    """Schedule process ``pid`` ``nice`` steps below this process (0: as it);
    where that is not permitted, it stays as it is."""
    if nice > 0:
        with contextlib.suppress(OSError):
            mine = os.getpriority(os.PRIO_PROCESS, 0)
            os.setpriority(os.PRIO_PROCESS, pid, min(19, mine + nice))


PR_SET_PDEATHSIG = 1
"""prctl(2)'s option: the signal a process gets when its parent thread ends."""


@functools.cache
def _prctl() -> Callable[[int, int, int, int, int], int] | None:
    """libc's ``prctl`` (Linux), looked up once, in this process: the child
    calls it between fork and exec and must find it ready. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, not at the top: 2-3 ms that most imports never need

    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return fn


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` after which the child gets SIGKILL when this process
    dies; None where that cannot be had.

    ``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child ends,
    not the process: only a child of the main thread gets it (the service
    starts its engines from its event loop, which runs in the main thread);
    one forked from another thread, which may end long before the service
    does, would be killed with that thread. Such a child relies on its input
    reaching EOF (module docstring).

    The function runs in the child between fork and exec, with the
    interpreter in the state fork left it; it only calls ``prctl``, looked up
    beforehand, and ``getppid``. Starting a process with a ``preexec_fn``
    forks instead of using ``vfork``: 3 ms in a process of 300 MB, against
    0.2-0.3 ms (measured on this project's 2-core machine).
    """
    prctl = _prctl()
    if prctl is None or threading.current_thread() is not threading.main_thread():
        return None
    parent = os.getpid()

    def in_child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before that: no signal comes
            os._exit(1)

    return in_child


def spawn(path: str, nice: int = 0) -> subprocess.Popen[bytes]:
    """Start the engine at ``path`` with pipes, in its own process group
    (Ctrl-C in a terminal does not reach it: its pool ends it), ``nice``
    steps below this process's priority, and send it ``uci`` at once: the
    engine answers as soon as it has loaded, and the answer waits in the pipe,
    so the handshake adds no round trip after the engine's start-up
    (:meth:`~livegain.engine.uci.UciProcess.handshake`). The engine ends when
    this process does, however it ends (module docstring)."""
    proc = subprocess.Popen(
        [path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        process_group=0,
        preexec_fn=_die_with_parent(),  # main thread only: see there
    )
    lower_priority(proc.pid, nice)
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # exited already: its reader says so
        proc.stdin.write(b"uci\n")
        proc.stdin.flush()
    return proc


class Launched:
    """Up to ``count`` processes of the engine ``path``, started now.

    Launching is an optimisation only: when ``path`` cannot be started, none
    is, and the pool's own start reports why. Processes no pool took are
    killed by :meth:`close` (``with Launched(...) as launched:``).
    """

    def __init__(self, path: str, count: int) -> None:
        self.path = path
        self._procs: list[subprocess.Popen[bytes]] = []
        resolved = shutil.which(path)
        if resolved is None:
            return
        for _ in range(count):
            try:
                self._procs.append(spawn(resolved))
            except OSError:
                break

    def take(self, path: str) -> subprocess.Popen[bytes] | None:
        """One of the processes, if ``path`` is the engine they run (and any is left)."""
        if path != self.path or not self._procs:
            return None
        return self._procs.pop(0)

    def __len__(self) -> int:
        return len(self._procs)

    @property
    def pids(self) -> list[int]:
        """The process ids of those not taken yet."""
        return [p.pid for p in self._procs]

    def close(self) -> None:
        """Kill and reap the processes nobody took."""
        procs, self._procs = self._procs, []
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.kill()
        for proc in procs:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            proc.wait()

    def __enter__(self) -> Launched:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_engine_path(path: str) -> str:
    """The engine executable: a path, or a bare name looked up on PATH.

    Raises :class:`EngineStartError` naming ``path`` when it is missing, a
    directory or not executable.
    """
    if os.sep not in path:
        found = shutil.which(path)
        if found is None:
            raise EngineStartError(path, "not found on PATH")
        return found
    p = Path(path)
    if not p.exists():
        raise EngineStartError(path, "no such file")
    if p.is_dir():
        raise EngineStartError(path, "is a directory")
    if not os.access(p, os.X_OK):
        raise EngineStartError(path, "not executable")
    return path
