"""Small builders of wire-protocol values for publish tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from toy_models import toy_model

from livegain.publish.schema import BoardState, EvalInfo, Moment, Player, Ply, Update

__all__ = ["toy_model"]


def board_state(
    board_id: str = "r1-b1",
    *,
    plies: int = 0,
    seq: int = 0,
    white: str = "White Player",
    black: str = "Black Player",
    padding: str = "",
) -> BoardState:
    sans = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]
    ucis = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]
    moves = [
        Ply(
            ply=i + 1,
            san=sans[i % len(sans)],
            uci=ucis[i % len(ucis)],
            color="white" if i % 2 == 0 else "black",
            eval=EvalInfo(cp=20, depth=8),
            gain=0,
        )
        for i in range(plies)
    ]
    return BoardState(
        board_id=board_id,
        tournament="Test Open" + padding,
        round="1",
        board=1,
        white=Player(name=white),
        black=Player(name=black),
        result="*",
        status="live",
        fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        moves=moves,
        white_trace=[],
        black_trace=[],
        engine="Stockfish test depth 8",
        engine_rating=2860.0,
        seq=seq,
    )


def update_for(state: BoardState, *, padding: str = "") -> Update:
    last = state.moves[-1] if state.moves else None
    return Update(
        board_id=state.board_id,
        seq=state.seq,
        ply=last,
        fen=state.fen + padding,
        result=state.result,
        status=state.status,
    )


async def recv_json(ws: Any, wait: float = 5.0) -> dict[str, Any]:
    raw = await asyncio.wait_for(ws.recv(), timeout=wait)
    data: dict[str, Any] = json.loads(raw)
    return data


async def recv_until(ws: Any, kind: str, wait: float = 5.0) -> dict[str, Any]:
    """Receive messages until one of type ``kind`` arrives (bounded by ``timeout``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    while True:
        left = end - loop.time()
        if left <= 0:
            raise TimeoutError(f"no {kind!r} message within {wait} s")
        msg = await recv_json(ws, left)
        if msg["type"] == kind:
            return msg


async def recv_board_messages(ws: Any, n: int, wait: float = 5.0) -> list[str]:
    """The next ``n`` messages of ``ws`` that are not board-list messages
    (``boards``/``boards_diff`` go to every client whenever the list changes,
    so they may come between a board's messages), as received."""
    got: list[str] = []
    async with asyncio.timeout(wait):
        while len(got) < n:
            raw = await ws.recv()
            if json.loads(raw)["type"] not in ("boards", "boards_diff"):
                got.append(raw)
    return got


async def recv_board_json(ws: Any, n: int = 1, wait: float = 5.0) -> list[dict[str, Any]]:
    """:func:`recv_board_messages`, decoded."""
    return [json.loads(raw) for raw in await recv_board_messages(ws, n, wait)]


async def http_get(port: int, path: str, wait: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """A raw HTTP/1.1 GET (no client-side path normalisation)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), wait)
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), wait)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


async def subscribed(srv: Any, n: int, **kwargs: Any) -> list[Any]:
    """``n`` websockets clients of ``srv``, each subscribed to every board."""
    from websockets.asyncio.client import connect

    clients = []
    for _ in range(n):
        ws = await connect(f"ws://127.0.0.1:{srv.port}/ws", **kwargs)
        await recv_json(ws)
        await ws.send('{"type":"subscribe","boards":"*"}')
        await recv_until(ws, "snapshot")
        clients.append(ws)
    return clients


@contextlib.asynccontextmanager
async def viewers(srv: Any, n: int, **kwargs: Any) -> AsyncIterator[list[Any]]:
    """``n`` clients of ``srv`` subscribed to every board (:func:`subscribed`),
    closed when the block ends."""
    clients = await subscribed(srv, n, **kwargs)
    try:
        yield clients
    finally:
        for ws in clients:
            await ws.close()


async def list_settled(srv: Any, wait: float = 5.0) -> None:
    """Until no board-list change waits for its flush and every queued message
    (board-list diffs included) has been written."""
    async with asyncio.timeout(wait):
        for _ in range(1_000_000):
            if not (srv.hub.list_pending or srv.outbox):
                return
            await asyncio.sleep(0.01)


async def written(srv: Any, wait: float = 5.0) -> None:
    """Until ``srv`` has written every queued message to its clients' sockets."""
    async with asyncio.timeout(wait):
        for _ in range(1_000_000):
            if not srv.outbox:
                return
            await asyncio.sleep(0)


def moment_bytes(board_id: str, ply: int, kind: str = "blunder") -> bytes:
    """A ``moment`` message of the board, serialised as the service sends it."""
    m = Moment(
        board_id=board_id,
        white="White Player",
        black="Black Player",
        kind=kind,  # type: ignore[arg-type]
        ply=ply,
        at_ms=1_700_000_000_000 + ply,
    )
    return m.model_dump_json().encode()
