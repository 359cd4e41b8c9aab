"""The board list over the WebSocket: a bounded ``hello``, pages on request,
debounced diffs instead of the whole list per change, and board removal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from websockets.asyncio.client import ClientConnection, connect

from livegain.publish.limits import ServerLimits
from livegain.publish.publication import Kind, Publication
from livegain.publish.schema import ServerMessage
from livegain.publish.server import LiveServer

from .helpers import board_state, http_get, list_settled, recv_json, update_for

SERVER_MESSAGE: TypeAdapter[Any] = TypeAdapter(ServerMessage)


def ws_url(srv: LiveServer) -> str:
    return f"ws://127.0.0.1:{srv.port}/ws"


async def drain(ws: ClientConnection, quiet: float) -> list[str]:
    """Every message until none has come for ``quiet`` seconds."""
    out: list[str] = []
    while True:
        try:
            raw = await asyncio.wait_for(ws.recv(), quiet)
        except TimeoutError:
            return out
        assert isinstance(raw, str)
        out.append(raw)


async def page_through(ws: ClientConnection, first: dict[str, Any]) -> list[str]:
    """Board ids of the whole list: ``first`` (hello or a page), then ``list_boards``."""
    ids = [b["board_id"] for b in first["boards"]]
    nxt = first.get("boards_next", first.get("next"))
    while nxt is not None:
        await ws.send(json.dumps({"type": "list_boards", "cursor": nxt}))
        while True:
            msg = await recv_json(ws)
            if msg["type"] == "boards":
                break
        ids += [b["board_id"] for b in msg["boards"]]
        nxt = msg["next"]
    return ids


async def test_new_boards_cost_an_idle_viewer_each_summary_about_once(tmp_path: Path) -> None:
    """1,500 new boards, one after the other: an idle viewer receives their
    summaries (in a few diffs), not the whole list again on each new board."""
    n = 1_500
    limits = ServerLimits(board_list_interval=0.2)
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits)
    async with srv, connect(f"ws://127.0.0.1:{srv.port}/ws", max_size=None) as idle:
        hello = await recv_json(idle)
        assert hello["boards"] == []
        for i in range(n):
            srv.set_board(board_state(f"new-{i:05d}"))
            if i % 100 == 0:
                await asyncio.sleep(0)  # the feed's pace: other tasks run between
        got = await drain(idle, 1.5)
        received = sum(len(m.encode()) for m in got)
        whole_list = len(srv.board_page(0, None))
        diffs = [json.loads(m) for m in got]
        for m in got:
            SERVER_MESSAGE.validate_json(m)
        assert {d["type"] for d in diffs} == {"boards_diff"}
        added = [b["board_id"] for d in diffs for b in d["added"]]
        assert sorted(added) == [f"new-{i:05d}" for i in range(n)]
        # Each summary about once: the whole list's size, not n/2 times it.
        assert received < 1.5 * whole_list, (received, whole_list)
        assert srv.stats.board_list_diffs == len(diffs) < n / 10


async def test_hello_is_bounded_and_the_rest_comes_in_pages(tmp_path: Path) -> None:
    n = 3_000
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        for i in range(n):
            srv.set_board(board_state(f"b-{i:05d}", white="W" * 40, black="B" * 40))
        async with connect(ws_url(srv), max_size=None) as ws:
            raw = await asyncio.wait_for(ws.recv(), 5)
            assert isinstance(raw, str)
            hello = json.loads(raw)
            SERVER_MESSAGE.validate_json(raw)
            assert len(raw) < 64 * 1024  # not the 3,000 summaries (about 1 MB here)
            assert len(hello["boards"]) == srv.limits.board_page == 100
            assert hello["boards_total"] == n
            ids = await page_through(ws, hello)
            assert ids == [f"b-{i:05d}" for i in range(n)]
            # A page never exceeds the server's page size, whatever is asked.
            await ws.send('{"type":"list_boards","cursor":0,"limit":100000}')
            page = await recv_json(ws)
            assert page["type"] == "boards" and page["reset"] is True
            assert len(page["boards"]) == 100 and page["total"] == n


async def test_pages_stay_whole_while_boards_come_and_go(tmp_path: Path) -> None:
    """A board removed or added between two page requests shifts nothing."""
    limits = ServerLimits(board_page=10, board_list_interval=0.05)
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        for i in range(25):
            srv.set_board(board_state(f"b{i:02d}"))
        await list_settled(srv)  # announced in a diff (to nobody yet)
        async with connect(ws_url(srv)) as ws:
            hello = await recv_json(ws)
            known = {b["board_id"] for b in hello["boards"]}
            assert srv.remove_board("b03")  # already sent
            assert srv.remove_board("b12")  # not yet sent
            srv.set_board(board_state("late"))
            ids = await page_through(ws, hello)
            assert "b12" not in ids and "late" in ids
            assert known | set(ids) == ({f"b{i:02d}" for i in range(25)} | {"late"}) - {"b12"}
            # The diff then tells what changed meanwhile.
            diff = await recv_json(ws)
            while diff["type"] != "boards_diff":
                diff = await recv_json(ws)
            assert set(diff["removed"]) == {"b03", "b12"}
            assert "late" in [b["board_id"] for b in diff["added"]]


async def test_a_change_of_result_is_a_changed_entry_and_plain_moves_send_no_list(
    tmp_path: Path,
) -> None:
    limits = ServerLimits(board_list_interval=0.05)
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        srv.set_board(board_state("b1"))
        await list_settled(srv)  # announced
        async with connect(ws_url(srv)) as ws:
            await recv_json(ws)
            for seq in range(1, 6):
                s = board_state("b1", plies=seq, seq=seq)
                srv.publish(update_for(s), s)
            assert await drain(ws, 0.3) == []  # not subscribed: moves alone send nothing
            s = board_state("b1", plies=6, seq=6).model_copy(update={"result": "1-0"})
            srv.publish(update_for(s), s)
            diff = await recv_json(ws)
            assert diff["type"] == "boards_diff"
            assert [(b["board_id"], b["result"]) for b in diff["changed"]] == [("b1", "1-0")]
            assert diff["added"] == diff["removed"] == []


class Owner:
    """What the service does for its server: an operator's removal (its own
    part, then the removal's publication to the server, its chain's last
    step); the publications the server makes (the board list), kept."""

    def __init__(self) -> None:
        self.removed: list[str] = []
        self.published: list[Publication] = []
        self.server: LiveServer | None = None

    def remove_board(self, board_id: str, /) -> bool:
        assert self.server is not None
        self.removed.append(board_id)
        found = self.server.has_board(board_id)
        self.server.deliver(Publication.removal(board_id, at=0.0))
        return found

    def publish(self, publication: Publication, /) -> None:
        self.published.append(publication)


async def test_operator_removes_a_board_with_the_admin_token(tmp_path: Path) -> None:
    token = "t0ken-of-sixteen-chars"
    limits = ServerLimits(board_list_interval=0.05)
    owner = Owner()
    srv = LiveServer(
        "127.0.0.1", 0, static_dir=tmp_path, limits=limits, admin_token=token, owner=owner
    )
    owner.server = srv
    removed = owner.removed
    async with srv:
        srv.set_board(board_state("junk-1"))
        srv.set_board(board_state("real-1"))
        async with connect(ws_url(srv)) as ws:
            await recv_json(ws)
            await ws.send('{"type":"subscribe","boards":["junk-1"]}')
            assert (await recv_json(ws))["type"] == "snapshot"
            await drain(ws, 0.2)
            for auth in ("", "Bearer wrong-token-wrong-token", f"Basic {token}"):
                st, h, _ = await request(srv.port, "DELETE", "/api/boards/junk-1", auth)
                assert st == 401 and h["www-authenticate"].startswith("Bearer")
            assert srv.has_board("junk-1") and srv.stats.admin_refused == 3
            st, _, body = await request(srv.port, "DELETE", "/api/boards/junk-1", f"Bearer {token}")
            assert (st, json.loads(body)) == (200, {"removed": "junk-1"})
            assert removed == ["junk-1"]
            diff = await recv_json(ws)
            assert (diff["type"], diff["removed"]) == ("boards_diff", ["junk-1"])
            st, _, _ = await http_get(srv.port, "/api/boards/junk-1")
            assert st == 404
            st, _, body = await http_get(srv.port, "/api/boards")
            assert [b["board_id"] for b in json.loads(body)] == ["real-1"]
            st, _, _ = await request(srv.port, "DELETE", "/api/boards/junk-1", f"Bearer {token}")
            assert st == 404
    # Each board list that went out, handed to the owner (for MQTT), built on demand.
    lists = [p for p in owner.published if p.kind is Kind.BOARD_LIST]
    assert lists and len(lists) == len(owner.published)
    last = json.loads(lists[-1].message)
    assert last["type"] == "boards"
    assert [b["board_id"] for b in last["boards"]] == ["real-1"]


async def test_no_admin_api_without_a_token(tmp_path: Path) -> None:
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        srv.set_board(board_state("b1"))
        st, h, _ = await request(srv.port, "DELETE", "/api/boards/b1", "Bearer anything-at-all")
        assert st == 405 and "DELETE" not in h["allow"]
        assert srv.has_board("b1")


async def test_api_boards_in_parts(tmp_path: Path) -> None:
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        for i in range(7):
            srv.set_board(board_state(f"b{i}"))
        st, h, body = await http_get(srv.port, "/api/boards?offset=2&limit=3")
        assert st == 200 and h["x-total-count"] == "7"
        assert [b["board_id"] for b in json.loads(body)] == ["b2", "b3", "b4"]
        st, _, _ = await http_get(srv.port, "/api/boards?offset=-1")
        assert st == 400


async def request(
    port: int, method: str, path: str, auth: str = ""
) -> tuple[int, dict[str, str], bytes]:
    """A raw HTTP/1.1 request with an optional Authorization header."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        if auth:
            head += f"Authorization: {auth}\r\n"
        writer.write((head + "\r\n").encode())
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    return parse_response(raw)


def parse_response(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body
