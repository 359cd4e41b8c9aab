"""Fan-out helpers: other processes that write a frame to part of the clients.

Writing one update to a thousand WebSocket clients is a thousand ``send``
system calls, and on loopback each one also runs the receiving side's TCP
code: several microseconds each, almost all of it in the kernel. One Python
process makes them one after the other (threads would too: each ``send``
takes the GIL back). Each helper process holds a duplicate of every client
socket's file descriptor (passed once, with ``SCM_RIGHTS``, when the client
connects) and is pinned to one core. For a large fan-out the server writes
one share of the clients itself and gives one share to each helper pinned to
another core than the one it is running on (a helper woken on the server's
own core would only take turns with it: the kernel runs it there at once,
and the server waits).

The server stays the only owner of every connection. For each fan-out it
hands a helper only clients whose write buffer is empty and whose connection
is open, waits (without returning to the event loop) until the helper has
written, and finishes any partial write itself; so nothing else is written to
those sockets meanwhile and every client's frames stay in order. A helper
writes with ``MSG_DONTWAIT`` and never changes a socket's flags (they are
shared with the server's descriptor).

Control messages on a ``SOCK_SEQPACKET`` socket pair, one per datagram:

- ``A`` + uint32 ids, with as many descriptors: add clients;
- ``R`` + uint32 ids: forget clients (close the duplicates);
- ``S`` + uint32 frame length + frame + uint32 ids: write the frame to each,
  answered by ``D`` + (uint32 index, int32 written) for each client not
  written in full (written is -1 after an error other than would-block);
- ``Q``: exit. The helper also exits when the server's end closes.

Run as ``python -m livegain.publish.fanout FD [CPU]`` by :class:`FanoutHelpers`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from array import array
from collections.abc import Callable, Sequence

ADD, REMOVE, SEND, DONE, QUIT, READY = b"A", b"R", b"S", b"D", b"Q", b"!"
MAX_FRAME = 64 * 1024
"""Frames above this size are written by the server alone."""
MAX_SHARE = 65536
"""Most clients in one helper's share of one write."""
_BUF = 5 + MAX_FRAME + 4 * MAX_SHARE
_FDS_SPACE = socket.CMSG_SPACE(64 * array("i").itemsize)
_ID = "I"
_RESULT = struct.Struct("=Ii")


def _ids(data: bytes | memoryview) -> array[int]:
    out = array(_ID)
    out.frombytes(bytes(data))
    return out


def worker(fd: int, cpu: int | None = None) -> int:
    """The helper's loop (blocking, no event loop): add, forget, write."""
    ctrl = socket.socket(fileno=fd)
    # Ctrl-C in a terminal reaches the whole process group: the server shuts
    # down and closes its end, which ends this loop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if cpu is not None:
        with contextlib.suppress(OSError):  # not allowed here: the kernel places it
            os.sched_setaffinity(0, {cpu})
    socks: dict[int, socket.socket] = {}
    ctrl.send(READY)
    buf = bytearray(_BUF)
    view = memoryview(buf)
    while True:
        try:
            n, anc, _flags, _addr = ctrl.recvmsg_into([buf], _FDS_SPACE)
        except OSError:
            break
        if n == 0:
            break
        msg = view[:n]
        fds = array("i")
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        op = bytes(msg[:1])
        if op == SEND:
            (size,) = struct.unpack_from("=I", msg, 1)
            frame = bytes(msg[5 : 5 + size])
            out = bytearray(DONE)
            flags = socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL
            for i, cid in enumerate(_ids(msg[5 + size :])):
                sock = socks.get(cid)
                if sock is None:
                    out += _RESULT.pack(i, -1)
                    continue
                try:
                    written = sock.send(frame, flags)
                except (BlockingIOError, InterruptedError):
                    written = 0
                except OSError:
                    written = -1
                if written != size:
                    out += _RESULT.pack(i, written)
            ctrl.send(out)
        elif op == ADD:
            for cid, cfd in zip(_ids(msg[1:]), fds, strict=False):
                old = socks.pop(cid, None)
                if old is not None:
                    old.close()
                socks[cid] = socket.socket(fileno=cfd)
        elif op == REMOVE:
            for cid in _ids(msg[1:]):
                sock = socks.pop(cid, None)
                if sock is not None:
                    sock.close()
        elif op == QUIT:
            break
        for extra in fds if op != ADD else ():
            os.close(extra)
    for sock in socks.values():
        sock.close()
    return 0


def _cpu_reader() -> Callable[[], int] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (AttributeError, OSError):  # pragma: no cover - not glibc/Linux
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = []
    reader: Callable[[], int] = fn
    return reader


_SCHED_GETCPU = _cpu_reader()


def current_cpu() -> int:
    """The CPU this thread is running on now (-1 when unknown)."""
    if _SCHED_GETCPU is None:  # pragma: no cover - not glibc/Linux
        return -1
    return int(_SCHED_GETCPU())


def usable_cpus() -> list[int]:
    """The CPUs this process may run on, in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return []


def default_count() -> int:
    """One helper per usable CPU, at most 4; none on a single CPU."""
    n = len(usable_cpus()) or (os.cpu_count() or 1)
    return 0 if n < 2 else min(n, 4)


class HelperFailed(RuntimeError):
    """A helper did not answer: the clients of its share are in an unknown state."""


class FanoutHelpers:
    """Helper processes, started with :meth:`start`, each a share of every fan-out.

    Each client socket is registered with every helper (:meth:`add`), so the
    shares can be cut anew for each fan-out. Blocking calls on the control
    sockets have a timeout: a helper that dies or stops answering makes
    :meth:`send`/:meth:`wait` raise :class:`HelperFailed` and the caller stops
    using helpers (:attr:`broken`).
    """

    def __init__(
        self, count: int = 1, *, cpus: Sequence[int] | None = None, timeout: float = 2.0
    ) -> None:
        self.count = count
        self.cpus = list(cpus) if cpus is not None else usable_cpus()
        """CPUs the helpers are pinned to, one each in turn (none: not pinned)."""
        self.timeout = timeout
        self.broken: str | None = None
        self._ctrl: list[socket.socket] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        self._next_id = 1
        self._pending: list[tuple[int, int]] = []

    @property
    def active(self) -> bool:
        return bool(self._ctrl) and self.broken is None

    def cpu_of(self, i: int) -> int:
        """The CPU helper ``i`` is pinned to (-1: not pinned)."""
        return self.cpus[i % len(self.cpus)] if self.cpus else -1

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def start(self) -> None:
        """Start the helpers and wait until each is ready (a blocking call)."""
        for i in range(self.count):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            cmd = [sys.executable, "-m", "livegain.publish.fanout", str(theirs.fileno())]
            if self.cpus:
                cmd.append(str(self.cpus[i % len(self.cpus)]))
            proc = subprocess.Popen(
                cmd,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
            theirs.close()
            ours.settimeout(30.0)
            self._ctrl.append(ours)
            self._procs.append(proc)
        for ours in self._ctrl:
            try:
                if ours.recv(16) != READY:
                    raise HelperFailed("fan-out helper did not start")
            except OSError as exc:
                self.close()
                raise HelperFailed(f"fan-out helper did not start: {exc}") from exc
            ours.settimeout(self.timeout)

    def add(self, sock: socket.socket) -> int | None:
        """Register a client socket with every helper; its id, or None when not active."""
        if not self.active:
            return None
        cid = self._next_id
        self._next_id += 1
        msg = ADD + array(_ID, [cid]).tobytes()
        try:
            for ctrl in self._ctrl:
                socket.send_fds(ctrl, [msg], [sock.fileno()])
        except OSError as exc:
            self._fail(f"add: {exc}")
            return None
        return cid

    def remove(self, cid: int) -> None:
        """Forget a client (its duplicates are closed)."""
        if not self.active:
            return
        msg = REMOVE + array(_ID, [cid]).tobytes()
        try:
            for ctrl in self._ctrl:
                ctrl.send(msg)
        except OSError as exc:
            self._fail(f"remove: {exc}")

    def send(self, helper: int, frame: bytes, ids: Sequence[int]) -> int:
        """Ask ``helper`` to write ``frame`` to the clients ``ids`` (no wait).

        Several jobs may be sent before :meth:`wait`; the number of this one
        is returned (0, 1, ... since the last wait).
        """
        if len(frame) > MAX_FRAME:
            raise ValueError("frame too large for the helpers")
        if len(ids) > MAX_SHARE:
            raise ValueError("share too large for one helper write")
        msg = SEND + struct.pack("=I", len(frame)) + frame + array(_ID, ids).tobytes()
        try:
            self._ctrl[helper].send(msg)
        except OSError as exc:
            self._fail(f"send: {exc}")
            raise HelperFailed(self.broken) from exc
        self._pending.append((helper, 1 + _RESULT.size * len(ids)))
        return len(self._pending) - 1

    def wait(self) -> list[tuple[int, int, int]]:
        """Wait for every job sent since the last wait: (job, index in its ids,
        bytes written) for each client not written in full."""
        out: list[tuple[int, int, int]] = []
        pending, self._pending = self._pending, []
        for job, (i, most) in enumerate(pending):
            try:
                msg = self._ctrl[i].recv(most)
            except OSError as exc:
                self._fail(f"wait: {exc}")
                raise HelperFailed(self.broken) from exc
            if msg[:1] != DONE:
                self._fail("wait: the helper closed its end" if not msg else "wait: bad reply")
                raise HelperFailed(self.broken)
            for idx, n in _RESULT.iter_unpack(msg[1:]):
                out.append((job, idx, n))
        return out

    def _fail(self, why: str) -> None:
        if self.broken is None:
            self.broken = why

    def close(self) -> None:
        for ctrl in self._ctrl:
            with contextlib.suppress(OSError):
                ctrl.send(QUIT)
            ctrl.close()
        # A helper that stopped answering is not waited for.
        deadline = time.monotonic() + (0.0 if self.broken else 2.0)
        for proc in self._procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._ctrl = []
        self._procs = []


if __name__ == "__main__":
    raise SystemExit(worker(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None))
