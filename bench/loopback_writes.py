"""The floor under a fan-out on this machine: one ``os.write()`` to each of N
loopback TCP sockets, no Python framework in between.

Rows: by message size (one thread), then the same writes split over two
threads (``os.write`` releases the GIL) and over two processes (the sockets
shared by ``fork``), against one thread in the same run. The receiving
sockets are not read during a timed round (they are drained between rounds),
as the lazy clients of ``bench/latency.py``; on loopback the sender's system
call also does the receiver's part of TCP.

    .venv/bin/python bench/loopback_writes.py [--clients 1000] [--rounds 15]

Each row gives the median round and the slowest (over 50 rounds, what a p99
of 50 moves reads).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import socket
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection


def pairs(n: int) -> tuple[list[socket.socket], list[socket.socket]]:
    """``n`` connected pairs: (the receivers, the senders), non-blocking."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(n)
    port = listener.getsockname()[1]
    receivers, senders = [], []
    for _ in range(n):
        receiver = socket.create_connection(("127.0.0.1", port))
        sender, _ = listener.accept()
        sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for s in (receiver, sender):
            s.setblocking(False)
        receivers.append(receiver)
        senders.append(sender)
    listener.close()
    return receivers, senders


def drain(receivers: list[socket.socket]) -> None:
    for s in receivers:
        try:
            while s.recv(1 << 20):
                pass
        except BlockingIOError:
            pass


def write_all(fds: list[int], data: bytes) -> None:
    for fd in fds:
        os.write(fd, data)


def helper(fds: list[int], data: bytes, conn: Connection) -> None:
    while conn.recv():
        write_all(fds, data)
        conn.send(True)


def timed(
    receivers: list[socket.socket], rounds: int, way: Callable[[], None]
) -> tuple[float, float]:
    """Wall ms of ``way`` over ``rounds``, the receivers drained between: the
    median and the slowest round (what a p99 over 50 rounds reads)."""
    times = []
    for _ in range(rounds):
        drain(receivers)
        time.sleep(0.02)
        t0 = time.perf_counter()
        way()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (args.clients * 2 + 100,) * 2)
    receivers, senders = pairs(args.clients)
    fds = [s.fileno() for s in senders]
    print(f"{args.clients} loopback sockets, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    print(f"ms per round over {args.rounds} rounds: median / slowest")
    timed(receivers, args.rounds, lambda: write_all(fds, b"x" * 200))  # warm-up, not shown
    for size in (200, 1100, 2200, 4400, 8800):
        ms, worst = timed(receivers, args.rounds, lambda d=b"x" * size: write_all(fds, d))
        print(f"  {size:>5} bytes, one thread      {ms:6.2f} / {worst:6.2f}")
    data = b"x" * 4400
    half = len(fds) // 2
    one, one_worst = timed(receivers, args.rounds, lambda: write_all(fds, data))
    with ThreadPoolExecutor(1) as pool:

        def threads() -> None:
            other = pool.submit(write_all, fds[:half], data)
            write_all(fds[half:], data)
            other.result()

        two_threads, threads_worst = timed(receivers, args.rounds, threads)
    parent, child = mp.get_context("fork").Pipe()
    proc = mp.get_context("fork").Process(target=helper, args=(fds[:half], data, child))
    proc.start()

    def processes() -> None:
        parent.send(True)
        write_all(fds[half:], data)
        parent.recv()

    two_procs, procs_worst = timed(receivers, args.rounds, processes)
    parent.send(False)
    proc.join(10)
    rows = (
        ("one thread", one, one_worst),
        ("two threads", two_threads, threads_worst),
        ("two processes", two_procs, procs_worst),
    )
    for name, ms, worst in rows:
        print(f"  4400 bytes, {name:<16}{ms:6.2f} / {worst:6.2f}   ratio {ms / one:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
