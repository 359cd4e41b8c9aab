"""The fan-out's writes (one frame per message for every client, in chunks of
clients per event-loop iteration, messages that queue up for the same
clients joined into one write), against real websockets clients.

These tests check that what arrives is what a websockets client accepts as
valid, the same for everyone and in order, including partial sends, server
pings and clients that close or vanish in the middle of a fan-out.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from livegain.publish.limits import ServerLimits
from livegain.publish.server import LiveServer

from .helpers import (
    board_state,
    list_settled,
    recv_board_json,
    recv_board_messages,
    recv_until,
    subscribed,
    update_for,
    viewers,
    written,
)


async def test_fifty_clients_get_identical_valid_updates_in_order(tmp_path: Path) -> None:
    # A short board-list interval: the list diff of set_board goes out soon.
    limits = ServerLimits(fanout_chunk=7, board_list_interval=0.05)
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits)
    async with srv:
        srv.set_board(board_state("b1"))
        async with viewers(srv, 50) as clients:
            # The list diff of set_board goes out 0.05 s after it, to every
            # client connected by then: before the counts below, not into them.
            # (Subscribing 50 clients takes about 0.06 s here: when it took
            # less, the diff's fan-out came after the updates and was still in
            # the outbox at the end, `outbox` 1 != 0.)
            await list_settled(srv)
            sent: list[str] = []
            before = srv.stats.messages_sent
            diffs_before = srv.stats.board_list_diffs
            for seq in range(1, 13):
                # Sizes across the three frame-length encodings (< 126, 16-bit, 64-bit).
                pad = {3: "", 6: "y" * 1_000, 9: "z" * 70_000}.get(seq, "x" * (seq * 37))
                s = board_state("b1", plies=1 + seq % 8, seq=seq)
                sent.append(srv.publish(update_for(s, padding=pad), s).decode())
            # Published back to back: queued (each joining the first, to the
            # same clients), written over later loop iterations.
            assert srv.outbox == 1
            for ws in clients:
                got = await recv_board_messages(ws, len(sent))
                assert got == sent
                assert [json.loads(m)["seq"] for m in got] == list(range(1, 13))
            assert srv.outbox == 0
            # the updates change no list key: no list diff came in between
            assert srv.stats.board_list_diffs == diffs_before
            assert srv.stats.messages_sent - before == 50 * len(sent)


async def test_partial_sends_complete_in_order(tmp_path: Path) -> None:
    """Frames larger than the socket accepts at once: the rest is buffered, in order."""
    limits = ServerLimits(soft_backlog=64 * 1024 * 1024, hard_backlog=128 * 1024 * 1024)
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits)
    async with srv:
        srv.set_board(board_state("b1"))
        # max_queue=1: the client stops reading, so the kernel's buffers fill.
        (slow,) = await subscribed(srv, 1, max_queue=1, max_size=None)
        (fast,) = await subscribed(srv, 1, max_size=None)
        try:
            server_side = next(
                ws for ws in srv.hub.clients() if ws.remote_address[1] == slow.local_address[1]
            )
            sent = []
            most = 0
            for seq in range(1, 9):
                s = board_state("b1", plies=1, seq=seq)
                sent.append(srv.publish(update_for(s, padding="p" * 2_000_000), s).decode())
                # The fan-out starts on a later loop iteration (after the
                # tasks created with the message have begun).
                await written(srv)
                most = max(most, server_side.transport.get_write_buffer_size())
            # The kernel took only part of a frame: the transport holds the rest.
            assert most > 0
            for ws in (fast, slow):
                got = await recv_board_messages(ws, len(sent), 10)
                assert got == sent
        finally:
            await slow.close()
            await fast.close()


async def test_closing_clients_do_not_break_the_fan_out(tmp_path: Path) -> None:
    limits = ServerLimits(fanout_chunk=4, ping_interval=0.05, ping_timeout=2.0)
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits)
    async with srv:
        srv.set_board(board_state("b1"))
        clients = await subscribed(srv, 20)
        leaving, staying = clients[:6], clients[6:]
        try:
            s = board_state("b1", plies=1, seq=1)
            srv.publish(update_for(s), s)
            # Some leave cleanly and some vanish while the next fan-outs are
            # queued (chunked over several loop iterations).
            for ws in leaving[:3]:
                await ws.close()
            for ws in leaving[3:]:
                ws.transport.abort()
            for seq in range(2, 8):
                s = board_state("b1", plies=1, seq=seq)
                srv.publish(update_for(s), s)
            await asyncio.sleep(0.2)  # server keepalive pings interleave with the updates
            for seq in range(8, 11):
                s = board_state("b1", plies=1, seq=seq)
                srv.publish(update_for(s), s)
            for ws in staying:
                seqs = [m["seq"] for m in await recv_board_json(ws, 10)]
                assert seqs == list(range(1, 11))
                # Still a working WebSocket: ping/pong and the protocol's ping.
                await asyncio.wait_for(await ws.ping(), 5)
                await ws.send('{"type":"ping"}')
                assert (await recv_until(ws, "pong"))["type"] == "pong"
            for _ in range(100):
                if srv.client_count == len(staying):
                    break
                await asyncio.sleep(0.02)
            assert srv.client_count == len(staying)
            for ws in leaving[:3]:
                assert ws.close_code == 1000
        finally:
            for ws in staying:
                await ws.close()
        for ws in staying:
            assert ws.close_code == 1000
            # closed: what arrived before the close (a board list's diff on a loaded
            # machine) is still read, then recv says the connection is closed
            with pytest.raises(ConnectionClosed):
                for _ in range(100):
                    await asyncio.wait_for(ws.recv(), 1)


async def test_a_publish_during_a_chunked_write_reaches_every_client(tmp_path: Path) -> None:
    """An update published while the previous one is half written (some clients
    reached, some not) follows it: nobody misses a seq, nobody gets them out
    of order."""
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=ServerLimits(fanout_chunk=2))
    async with srv:
        srv.set_board(board_state("b1"))
        async with viewers(srv, 5) as clients:
            s = board_state("b1", plies=1, seq=1)
            srv.publish(update_for(s), s)
            async with asyncio.timeout(5):
                # one loop iteration at a time: the state between two chunks
                while not srv._outbox or srv._outbox[0].pos == 0:  # noqa: ASYNC110
                    await asyncio.sleep(0)
            first = srv._outbox[0]
            assert 0 < first.pos < len(first.clients)  # half written
            s = board_state("b1", plies=2, seq=2)
            srv.publish(update_for(s), s)
            for ws in clients:
                got = [(await recv_until(ws, "update"))["seq"] for _ in range(2)]
                assert got == [1, 2]


async def test_a_message_behind_one_still_being_written_joins_it(tmp_path: Path) -> None:
    """Updates published while an earlier one to the same clients is still
    being written go out with it: the clients it has not reached get them in
    one write (one system call), those it has reached get the new one next;
    every client gets every update once, in order."""
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=ServerLimits(fanout_chunk=5))
    async with srv:
        srv.set_board(board_state("b1"))
        async with viewers(srv, 12) as clients:
            await written(srv)
            writes: dict[int, int] = {}  # server-side connection -> writes to its transport

            def counting(ws: Any) -> None:
                write = ws.transport.write

                def counted(data: bytes) -> None:
                    writes[id(ws)] = writes.get(id(ws), 0) + 1
                    write(data)

                ws.transport.write = counted

            server_side = srv.hub.clients()
            for ws in server_side:
                counting(ws)
            before = srv.stats.messages_sent
            for seq in (1, 2):  # back to back: 2 joins 1 before anything is written
                s = board_state("b1", plies=seq, seq=seq)
                srv.publish(update_for(s), s)
            assert srv.outbox == 1
            async with asyncio.timeout(5):
                # one loop iteration at a time: the state after the first chunk of 5
                while srv.stats.messages_sent < before + 2 * 5:  # noqa: ASYNC110
                    await asyncio.sleep(0)
            s = board_state("b1", plies=3, seq=3)  # before the next chunk
            srv.publish(update_for(s), s)
            for ws in clients:
                got = [(await recv_until(ws, "update"))["seq"] for _ in range(3)]
                assert got == [1, 2, 3]
            await written(srv)
            assert srv.stats.messages_sent - before == 3 * 12
            reached, not_reached = server_side[:5], server_side[5:]
            # the first five: 1 and 2 together, then 3; the other seven: all three at once
            assert [writes[id(ws)] for ws in reached] == [2] * 5
            assert [writes[id(ws)] for ws in not_reached] == [1] * 7


async def test_a_message_published_during_a_chunk_s_writes_reaches_every_client(
    tmp_path: Path,
) -> None:
    """A publication made while a chunk is being written (here: from inside a
    write to the chunk's third client) joins the fan-out under way: every
    client gets both messages, once each, in order."""
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=ServerLimits(fanout_chunk=4))
    async with srv:
        srv.set_board(board_state("b1"))
        async with viewers(srv, 10) as clients:
            await written(srv)
            server_side = srv.hub.clients()
            third = server_side[2]
            write = third.transport.write
            published: list[int] = []

            def write_then_publish(data: bytes) -> None:
                write(data)
                if not published:  # in the middle of the first chunk's writes
                    published.append(2)
                    s = board_state("b1", plies=2, seq=2)
                    srv.publish(update_for(s), s)

            third.transport.write = write_then_publish
            s = board_state("b1", plies=1, seq=1)
            srv.publish(update_for(s), s)
            for ws in clients:
                got = [(await recv_until(ws, "update"))["seq"] for _ in range(2)]
                assert got == [1, 2]
            await written(srv)
            assert published == [2]


async def test_joined_messages_are_judged_one_by_one_against_the_soft_backlog(
    tmp_path: Path,
) -> None:
    """Two updates joined into one write: a client whose write buffer is just
    under the soft limit gets the first (judged on its buffer alone) and not
    the second (judged on its buffer plus the first, which the kernel has not
    taken): it is marked lagging, while every other client gets both."""
    soft = 64 * 1024
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=ServerLimits(soft_backlog=soft))
    async with srv:
        srv.set_board(board_state("b1"))
        async with viewers(srv, 4) as clients:
            await written(srv)
            full = srv.hub.clients()[1]
            # its buffer 10 bytes under the limit, and all it is given stays there
            held = [soft - 10]
            write = full.transport.write

            def kept(data: bytes) -> None:
                held[0] += len(data)
                write(data)

            full.transport.write = kept  # type: ignore[method-assign]
            full.transport.get_write_buffer_size = lambda: held[0]  # type: ignore[method-assign]
            for seq in (1, 2):  # back to back: joined before anything is written
                s = board_state("b1", plies=seq, seq=seq)
                srv.publish(update_for(s), s)
            assert srv.outbox == 1
            await written(srv)
            assert srv.hub.lagging_clients() == [full]
            index = srv.hub.clients().index(full)
            for i, ws in enumerate(clients):
                want = [1] if i == index else [1, 2]
                got = [(await recv_until(ws, "update"))["seq"] for _ in want]
                assert got == want
            with pytest.raises(TimeoutError):
                await recv_until(clients[index], "update", wait=0.3)
