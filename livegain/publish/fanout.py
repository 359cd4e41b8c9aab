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
- ``S`` + uint32 job + uint32 frame length + frame + uint32 ids: write the
  frame to each, answered by ``D`` + uint32 job + (uint32 index, int32
  written) for each client not written in full (written is -1 after an error
  other than would-block, or for an id the helper does not hold);
- ``Q``: exit. The helper also exits when the server's end closes.

The helper answers its start with ``!`` + int32: the CPU it is pinned to
(-1: not pinned). Run as ``python -P -m livegain.publish.fanout FD [CPU]``
by :class:`FanoutHelpers`, in its own process group (signals meant for the
server's group, such as a terminal's Ctrl-C, do not reach it).
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
MAX_SHARE = 4096
"""Most clients in one job."""
MAX_JOBS = 32
"""Most jobs in flight per helper and fan-out (its answers must fit in its
socket's buffer while the server is still sending jobs)."""
_HEAD = struct.Struct("=II")
_BUF = 1 + _HEAD.size + MAX_FRAME + 4 * MAX_SHARE
_FDS_SPACE = socket.CMSG_SPACE(64 * array("i").itemsize)
_ID = "I"
_RESULT = struct.Struct("=Ii")
_CTRL_BUFFER = 1 << 20
"""Socket buffer asked for on both ends of a control socket (the kernel may
grant less: :attr:`FanoutHelpers.max_message` follows what it granted)."""


def _ids(data: bytes | memoryview) -> array[int]:
    out = array(_ID)
    out.frombytes(bytes(data))
    return out


def worker(fd: int, cpu: int | None = None) -> int:
    """The helper's loop (blocking, no event loop): add, forget, write."""
    ctrl = socket.socket(fileno=fd)
    # The server shuts down (and closes its end, which ends this loop) on
    # SIGINT; a Ctrl-C meant for it must not end this process first.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        ctrl.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _CTRL_BUFFER)
        ctrl.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _CTRL_BUFFER)
    pinned = -1
    if cpu is not None:
        with contextlib.suppress(OSError):  # not allowed here: the kernel places it
            os.sched_setaffinity(0, {cpu})
            pinned = cpu
    socks: dict[int, socket.socket] = {}
    buf = bytearray(_BUF)
    view = memoryview(buf)
    try:
        ctrl.send(READY + struct.pack("=i", pinned))
        while True:
            n, anc, flags, _addr = ctrl.recvmsg_into([buf], _FDS_SPACE)
            if n == 0:
                break
            msg = view[:n]
            fds = array("i")
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            op = bytes(msg[:1])
            if op == SEND:
                job, size = _HEAD.unpack_from(msg, 1)
                start = 1 + _HEAD.size
                frame = bytes(msg[start : start + size])
                out = bytearray(DONE) + struct.pack("=I", job)
                send_flags = socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL
                for i, cid in enumerate(_ids(msg[start + size :])):
                    sock = socks.get(cid)
                    if sock is None:
                        out += _RESULT.pack(i, -1)
                        continue
                    try:
                        written = sock.send(frame, send_flags)
                    except (BlockingIOError, InterruptedError):
                        written = 0
                    except OSError:
                        written = -1
                    if written != size:
                        out += _RESULT.pack(i, written)
                ctrl.send(out)
            elif op == ADD:
                ids = _ids(msg[1:])
                if flags & socket.MSG_CTRUNC or len(fds) < len(ids):
                    # Out of file descriptors: the server writes to these
                    # clients itself (each comes back as -1).
                    print(
                        f"livegain fan-out helper: {len(ids) - len(fds)} client socket(s) "
                        "not received (open-files limit?)",
                        file=sys.stderr,
                    )
                for cid, cfd in zip(ids, fds, strict=False):
                    old = socks.pop(cid, None)
                    if old is not None:
                        old.close()
                    socks[cid] = socket.socket(fileno=cfd)
                fds = fds[len(ids) :]
            elif op == REMOVE:
                for cid in _ids(msg[1:]):
                    sock = socks.pop(cid, None)
                    if sock is not None:
                        sock.close()
            elif op == QUIT:
                break
            for extra in fds:  # any descriptor no ADD took
                os.close(extra)
    except OSError:
        pass  # the server is gone
    finally:
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
    """A helper did not take a message or did not answer in time."""


class FanoutHelpers:
    """Helper processes, started with :meth:`start`, each a share of every fan-out.

    Each client socket is registered with every helper (:meth:`add`), so the
    shares can be cut anew for each fan-out. Blocking calls on the control
    sockets have a timeout. A helper that cannot take a message or does not
    answer in time is marked failed (:attr:`failed`, :attr:`broken`); the
    others' jobs are still answered, and the caller stops using helpers.
    """

    def __init__(
        self, count: int = 1, *, cpus: Sequence[int] | None = None, timeout: float = 2.0
    ) -> None:
        self.count = count
        self.cpus = list(cpus) if cpus is not None else usable_cpus()
        """CPUs to pin the helpers to, one each in turn (empty: not pinned)."""
        self.timeout = timeout
        self.broken: str | None = None
        self.failed: set[int] = set()
        self.max_message = 1 + _HEAD.size + MAX_FRAME + 4 * MAX_SHARE
        """Largest job message every control socket takes (set at start)."""
        self._ctrl: list[socket.socket] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        self._pinned: list[int] = []
        self._next_id = 1
        self._job = 0
        self._pending: list[tuple[int, int, int]] = []

    @property
    def active(self) -> bool:
        return bool(self._ctrl) and self.broken is None

    def cpu_of(self, i: int) -> int:
        """The CPU helper ``i`` is pinned to (-1: not pinned)."""
        return self._pinned[i] if i < len(self._pinned) else -1

    def elsewhere(self, cpu: int) -> list[int]:
        """The helpers that can write beside a process running on ``cpu``: those
        not pinned to it (all when ``cpu`` is unknown, -1). One pinned to the
        same core would only take turns with that process."""
        return [
            i for i in range(self.count) if cpu < 0 or self.cpu_of(i) < 0 or self.cpu_of(i) != cpu
        ]

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def running(self) -> int:
        """Helper processes still alive."""
        return sum(1 for p in self._procs if p.poll() is None)

    def start(self) -> None:
        """Start the helpers and wait until each is ready (a blocking call).

        On any failure every helper started so far is stopped, then
        :class:`HelperFailed` is raised.
        """
        try:
            for i in range(self.count):
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                with contextlib.suppress(OSError):
                    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _CTRL_BUFFER)
                    ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _CTRL_BUFFER)
                cmd = [sys.executable, "-P", "-m", "livegain.publish.fanout"]
                cmd.append(str(theirs.fileno()))
                if self.cpus:
                    cmd.append(str(self.cpus[i % len(self.cpus)]))
                self._ctrl.append(ours)
                try:
                    proc = subprocess.Popen(
                        cmd,
                        pass_fds=(theirs.fileno(),),
                        stdin=subprocess.DEVNULL,
                        process_group=0,
                    )
                finally:
                    theirs.close()
                self._procs.append(proc)
            for ours in self._ctrl:
                ours.settimeout(30.0)
                hello = ours.recv(16)
                if len(hello) != 5 or hello[:1] != READY:
                    raise HelperFailed("fan-out helper did not start")
                (pinned,) = struct.unpack("=i", hello[1:])
                self._pinned.append(pinned)
                ours.settimeout(self.timeout)
            # A job must fit in every control socket's send buffer.
            sndbuf = min(c.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) for c in self._ctrl)
            self.max_message = min(self.max_message, sndbuf // 2)
        except BaseException as exc:
            self.broken = f"start: {exc}"
            self.close()
            if isinstance(exc, OSError | HelperFailed):
                raise HelperFailed(f"fan-out helper did not start: {exc}") from exc
            raise

    def add(self, sock: socket.socket) -> int | None:
        """Register a client socket with every helper; its id, or None when not active."""
        if not self.active:
            return None
        cid = self._next_id
        self._next_id += 1
        msg = ADD + array(_ID, [cid]).tobytes()
        for i, ctrl in enumerate(self._ctrl):
            try:
                socket.send_fds(ctrl, [msg], [sock.fileno()])
            except OSError as exc:
                self._fail(i, f"add: {exc}")
                return None
        return cid

    def remove(self, cid: int) -> None:
        """Forget a client (its copies are closed)."""
        if not self.active:
            return
        msg = REMOVE + array(_ID, [cid]).tobytes()
        for i, ctrl in enumerate(self._ctrl):
            try:
                ctrl.send(msg)
            except OSError as exc:
                self._fail(i, f"remove: {exc}")
                return

    def fits(self, frame_size: int, clients: int) -> bool:
        """Whether a job of ``clients`` ids with this frame fits in one message."""
        return 1 + _HEAD.size + frame_size + 4 * clients <= self.max_message

    def send(self, helper: int, frame: bytes, ids: Sequence[int]) -> int:
        """Ask ``helper`` to write ``frame`` to the clients ``ids`` (no wait).

        Several jobs may be sent before :meth:`wait`; the number of this one
        (0, 1, ... since the last wait) is returned. Raises
        :class:`HelperFailed` when the helper cannot take it (nothing of this
        job is written then).
        """
        if helper in self.failed:
            raise HelperFailed(self.broken or "helper failed")
        if len(ids) > MAX_SHARE or not self.fits(len(frame), len(ids)):
            raise ValueError("job too large for one helper message")
        self._job = (self._job + 1) & 0xFFFFFFFF
        msg = SEND + _HEAD.pack(self._job, len(frame)) + frame + array(_ID, ids).tobytes()
        try:
            self._ctrl[helper].send(msg)
        except OSError as exc:
            self._fail(helper, f"send: {exc}")
            raise HelperFailed(self.broken) from exc
        self._pending.append((helper, self._job, 1 + 4 + _RESULT.size * len(ids)))
        return len(self._pending) - 1

    def wait(self) -> tuple[list[tuple[int, int, int]], set[int]]:
        """Wait for every job sent since the last wait.

        Returns (job, index in its ids, bytes written) for each client not
        written in full, and the jobs whose helper failed before answering
        (what it wrote of them is unknown). Never raises: a helper that does
        not answer in time is marked failed and not waited for again.
        """
        short: list[tuple[int, int, int]] = []
        lost: set[int] = set()
        pending, self._pending = self._pending, []
        for job, (i, number, most) in enumerate(pending):
            if i in self.failed:
                lost.add(job)
                continue
            try:
                msg = self._ctrl[i].recv(most)
            except OSError as exc:
                self._fail(i, f"wait: {exc}")
                lost.add(job)
                continue
            if len(msg) < 5 or msg[:1] != DONE or struct.unpack_from("=I", msg, 1)[0] != number:
                self._fail(i, "wait: the helper closed its end" if not msg else "wait: bad reply")
                lost.add(job)
                continue
            for idx, n in _RESULT.iter_unpack(msg[5:]):
                short.append((job, idx, n))
        return short, lost

    def _fail(self, i: int, why: str) -> None:
        self.failed.add(i)
        if self.broken is None:
            self.broken = f"helper {i}: {why}"

    def close(self) -> None:
        """Stop every helper (a blocking call, at most about 2 s; at once when broken)."""
        for ctrl in self._ctrl:
            with contextlib.suppress(OSError):
                ctrl.send(QUIT, socket.MSG_DONTWAIT)
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
