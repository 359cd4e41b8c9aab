"""Fan-out helpers: real helper processes writing to real websockets clients.

The helpers hold copies of the client sockets and write part of each large
fan-out. What every client receives must be exactly what it would receive
from the server alone: every message, once, in order, as valid frames; a
helper that dies or hangs costs at most its own share of clients, never the
others; a client that leaves is closed promptly (the helper's copy of its
socket too); and no helper outlives the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import pytest

from livegain.publish.fanout import FanoutHelpers, current_cpu, usable_cpus
from livegain.publish.server import LiveServer, ServerLimits

from .helpers import board_state, recv_json, recv_until, subscribed, update_for, written

# Not pinned (``helper_cpus=[]``): every helper takes a share wherever this
# process runs, so the tests do not depend on the machine's cores.
UNPINNED: list[int] = []


def helper_server(tmp_path: Path, helpers: int = 2, **limits: object) -> LiveServer:
    base: dict[str, object] = {"helper_min": 2, "helper_batch": 3, "helper_weight": 1e6}
    base.update(limits)
    return LiveServer(
        "127.0.0.1",
        0,
        static_dir=tmp_path,
        limits=ServerLimits(**base),  # type: ignore[arg-type]
        fanout_helpers=helpers,
        helper_cpus=UNPINNED,
    )


def helper_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def helper_children() -> set[int]:
    """This process's fan-out helper children still running."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z" and b"livegain.publish.fanout" in cmd:
            found.add(int(entry))
    return found


async def following(srv: LiveServer, clients: list[Any]) -> int:
    """Publish update 2; the clients that got updates 1 and 2 (the others were closed)."""
    s = board_state("b1", plies=1, seq=2)
    srv.publish(update_for(s), s)
    await written(srv)
    count = 0
    for ws in clients:
        try:
            seqs = [(await recv_json(ws, 2))["seq"] for _ in range(2)]
        except Exception:
            continue  # closed
        assert seqs == [1, 2]
        count += 1
    return count


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "State:\tZ" not in fh.read()
    except FileNotFoundError:
        return False


async def test_helpers_write_every_message_once_in_order(tmp_path: Path) -> None:
    srv = helper_server(tmp_path)
    async with srv:
        assert srv._helpers is not None and len(srv._helpers.pids) == 2
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 30)
        try:
            sent: list[str] = []
            for seq in range(1, 11):
                # Small frames go through the helpers; the 70 kB one (above
                # their frame limit) is written by the server alone.
                pad = {4: "y" * 1_000, 7: "z" * 70_000}.get(seq, "x" * seq)
                s = board_state("b1", plies=1 + seq % 5, seq=seq)
                sent.append(srv.publish(update_for(s, padding=pad), s).decode())
                await written(srv)
            assert srv.stats.helper_writes > 0
            for ws in clients:
                got = [await asyncio.wait_for(ws.recv(), 5) for _ in sent]
                assert got == sent
                # Still a working connection both ways.
                await asyncio.wait_for(await ws.ping(), 5)
                await ws.send('{"type":"ping"}')
                assert (await recv_until(ws, "pong"))["type"] == "pong"
        finally:
            for ws in clients:
                await ws.close()


async def test_partial_helper_writes_are_finished_by_the_server_in_order(
    tmp_path: Path,
) -> None:
    """A client that stops reading: the helper writes part of a frame, the
    server buffers the rest, and later frames queue behind it."""
    limits = {"soft_backlog": 64 * 1024 * 1024, "hard_backlog": 128 * 1024 * 1024}
    srv = helper_server(tmp_path, helpers=1, helper_min=1, helper_batch=1, **limits)
    async with srv:
        srv.set_board(board_state("b1"))
        (slow,) = await subscribed(srv, 1, max_queue=1, max_size=None)
        fast = await subscribed(srv, 3, max_size=None)
        # Small kernel buffers on the slow connection, so that a 60 kB frame
        # does not fit at once.
        server_side = next(
            c for c in srv._clients if c.ws.remote_address[1] == slow.local_address[1]
        )
        assert server_side.sock is not None
        server_side.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
        slow.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVBUF, 16384
        )
        try:
            sent = []
            for seq in range(1, 13):
                s = board_state("b1", plies=1, seq=seq)
                # Under the helpers' 64 kB frame limit.
                sent.append(srv.publish(update_for(s, padding="p" * 60_000), s).decode())
                await written(srv)
            assert srv.stats.helper_short > 0
            assert server_side.backlog() > 0  # the rest waits in the transport
            for ws in (*fast, slow):
                got = [await asyncio.wait_for(ws.recv(), 10) for _ in sent]
                assert [json.loads(m)["seq"] for m in got] == list(range(1, 13))
                assert got == sent
        finally:
            for ws in (slow, *fast):
                await ws.close()


@pytest.mark.parametrize("victim", [0, 1])
async def test_a_killed_helper_leaves_the_server_writing_alone(tmp_path: Path, victim: int) -> None:
    srv = helper_server(tmp_path)
    async with srv:
        assert srv._helpers is not None
        pids = srv._helpers.pids
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 12)
        try:
            os.kill(pids[victim], signal.SIGKILL)
            for _ in range(100):
                if not alive(pids[victim]):
                    break
                await asyncio.sleep(0.02)
            for seq in range(1, 4):
                s = board_state("b1", plies=1, seq=seq)
                srv.publish(update_for(s), s)
                await written(srv)
            # The failure is noticed and counted once; the helpers are gone;
            # a dead helper took no job, so no client was lost.
            assert srv.stats.helper_failures == 1
            assert srv._helpers is None
            assert not any(alive(p) for p in pids)
            assert srv.client_count == 12
            health = srv.health()["fanout_helpers"]
            assert health["failures"] == 1 and health["running"] == 0
            for ws in clients:
                seqs = [(await recv_json(ws))["seq"] for _ in range(3)]
                assert seqs == [1, 2, 3]
        finally:
            for ws in clients:
                await ws.close()


async def test_one_hung_helper_of_two_costs_only_its_own_jobs(tmp_path: Path) -> None:
    """Jobs of 3 clients go to the two helpers in turn; one helper hangs: the
    clients of its jobs are closed, those of the other helper's jobs are not."""
    srv = helper_server(tmp_path, helpers=2, helper_timeout=0.5)
    async with srv:
        assert srv._helpers is not None
        pids = srv._helpers.pids
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 12)
        try:
            os.kill(pids[0], signal.SIGSTOP)
            s = board_state("b1", plies=1, seq=1)
            srv.publish(update_for(s), s)
            await written(srv)
            assert srv.stats.helper_failures == 1
            assert not any(alive(p) for p in pids)
            assert srv.client_count == 6
            assert await following(srv, clients) == 6
        finally:
            for ws in clients:
                await ws.close()


async def test_a_helper_lost_between_fan_outs_is_let_go_at_once(tmp_path: Path) -> None:
    """A helper dies while nothing is published: the next client to connect
    finds it gone, and the helpers are stopped there and then, so that their
    copies of the sockets keep no connection open."""
    srv = helper_server(tmp_path)
    async with srv:
        assert srv._helpers is not None
        pids = srv._helpers.pids
        srv.set_board(board_state("b1"))
        (old,) = await subscribed(srv, 1)
        os.kill(pids[0], signal.SIGKILL)
        for _ in range(100):
            if not alive(pids[0]):
                break
            await asyncio.sleep(0.02)
        (new,) = await subscribed(srv, 1)
        assert srv.stats.helper_failures == 1 and srv._helpers is None
        assert not any(alive(p) for p in pids)
        # The first client's connection closes promptly when it leaves.
        async with asyncio.timeout(3):
            await old.close()
        s = board_state("b1", plies=1, seq=1)
        srv.publish(update_for(s), s)
        assert (await recv_json(new))["seq"] == 1
        await new.close()


async def test_a_bug_in_one_fan_out_stops_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = helper_server(tmp_path, helpers=1, helper_weight=1.0)
    async with srv:
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 12)
        real = srv._write_each
        calls = 0

        def broken_once(*args: object, **kwargs: object) -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError("bug")
            real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(srv, "_write_each", broken_once)
        try:
            s = board_state("b1", plies=1, seq=1)
            srv.publish(update_for(s), s)
            await written(srv)
            # The helper's answers were read, its partial writes finished:
            # its clients got update 1 whole; the helper is still in use.
            assert srv.stats.helper_writes > 0 and srv.stats.helper_failures == 0
            s = board_state("b1", plies=1, seq=2)
            srv.publish(update_for(s), s)
            await written(srv)
            assert srv.outbox == 0
            for ws in clients:
                seq = (await recv_json(ws))["seq"]
                if seq == 1:
                    seq = (await recv_json(ws))["seq"]
                assert seq == 2
        finally:
            for ws in clients:
                await ws.close()


async def test_no_helper_is_left_when_the_port_is_taken(tmp_path: Path) -> None:
    first = helper_server(tmp_path, helpers=1)
    async with first:
        second = LiveServer(
            "127.0.0.1", first.port, static_dir=tmp_path, fanout_helpers=2, helper_cpus=UNPINNED
        )
        before = helper_children()
        with pytest.raises(OSError):
            await second.start()
        assert helper_children() == before


async def test_a_hung_helper_costs_only_its_share(tmp_path: Path) -> None:
    srv = helper_server(tmp_path, helpers=1, helper_timeout=0.5, helper_weight=1.0)
    async with srv:
        assert srv._helpers is not None
        (pid,) = srv._helpers.pids
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 12)
        try:
            os.kill(pid, signal.SIGSTOP)
            s = board_state("b1", plies=1, seq=1)
            srv.publish(update_for(s), s)
            await written(srv)
            assert srv.stats.helper_failures == 1
            assert not alive(pid)  # given up: killed, not waited for
            # The helper's share (in an unknown state) was disconnected; the
            # rest got the update, and get the next ones from the server.
            survivors = srv.client_count
            assert 0 < survivors < len(clients)
            assert await following(srv, clients) == survivors
        finally:
            for ws in clients:
                await ws.close()


async def test_helpers_let_go_of_departed_clients(tmp_path: Path) -> None:
    srv = helper_server(tmp_path, helpers=1)
    async with srv:
        assert srv._helpers is not None
        (pid,) = srv._helpers.pids
        base = helper_fds(pid)
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 10)
        assert helper_fds(pid) == base + 10
        # Closing handshakes complete promptly: the helper's copies of the
        # sockets do not hold the connections open.
        async with asyncio.timeout(5):
            for ws in clients:
                await ws.close()
        for _ in range(100):
            if helper_fds(pid) == base:
                break
            await asyncio.sleep(0.02)
        assert helper_fds(pid) == base
        assert srv.client_count == 0


async def test_no_helper_outlives_the_server(tmp_path: Path) -> None:
    srv = helper_server(tmp_path, helpers=3)
    async with srv:
        assert srv._helpers is not None
        pids = srv._helpers.pids
        assert len(pids) == 3 and all(alive(p) for p in pids)
    assert not any(alive(p) for p in pids)


def test_helpers_are_pinned_one_core_each() -> None:
    cpus = usable_cpus()
    if not cpus:
        pytest.skip("no CPU affinity here")
    helpers = FanoutHelpers(2, cpus=cpus)
    helpers.start()
    try:
        for i, pid in enumerate(helpers.pids):
            assert os.sched_getaffinity(pid) == {cpus[i % len(cpus)]}
            assert helpers.cpu_of(i) == cpus[i % len(cpus)]
    finally:
        helpers.close()
    assert current_cpu() in cpus


async def test_the_server_keeps_the_share_of_its_own_core(tmp_path: Path) -> None:
    """A helper pinned to the core the server runs on gets no share: it would
    only take turns with the server there."""
    cpus = usable_cpus()
    if not cpus:
        pytest.skip("no CPU affinity here")
    here = cpus[0]
    # This process stays on that core for the test (restored after).
    os.sched_setaffinity(0, {here})
    try:
        srv = LiveServer(
            "127.0.0.1",
            0,
            static_dir=tmp_path,
            limits=ServerLimits(helper_min=2),
            fanout_helpers=1,
            helper_cpus=[here],
        )
        async with srv:
            srv.set_board(board_state("b1"))
            clients = await subscribed(srv, 8)
            try:
                for seq in range(1, 6):
                    s = board_state("b1", plies=1, seq=seq)
                    srv.publish(update_for(s), s)
                    await written(srv)
                assert srv.stats.helper_writes == 0
                for ws in clients:
                    seqs = [(await recv_json(ws))["seq"] for _ in range(5)]
                    assert seqs == [1, 2, 3, 4, 5]
            finally:
                for ws in clients:
                    await ws.close()
    finally:
        os.sched_setaffinity(0, set(cpus))
