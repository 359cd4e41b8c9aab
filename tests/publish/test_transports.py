"""The same updates over TLS, with permessage-deflate and without, to every
client; a client that never reads changes nothing for the others; several
servers on one port (SO_REUSEPORT)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from pathlib import Path

import pytest
import trustme
from websockets.asyncio.client import ClientConnection, connect

from livegain.config import ConfigError, load_settings
from livegain.publish.limits import ServerLimits
from livegain.publish.server import LiveServer

from .helpers import (
    board_state,
    recv_board_messages,
    recv_json,
    recv_until,
    subscribed,
    update_for,
)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def server_files(ca: trustme.CA, where: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by ``ca``, and its key, as PEM files."""
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert_file, key_file = where / "server.pem", where / "server.key"
    cert.cert_chain_pems[0].write_to_path(str(cert_file))
    for extra in cert.cert_chain_pems[1:]:
        extra.write_to_path(str(cert_file), append=True)
    cert.private_key_pem.write_to_path(str(key_file))
    return cert_file, key_file


def client_context(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


async def subscribe(ws: ClientConnection) -> None:
    assert (await recv_json(ws))["type"] == "hello"
    await ws.send('{"type":"subscribe","boards":"*"}')
    await recv_until(ws, "snapshot")


async def test_tls_and_deflate_clients_get_the_same_updates(ca: trustme.CA, tmp_path: Path) -> None:
    cert_file, key_file = server_files(ca, tmp_path)
    settings = load_settings(
        None, server={"tls_cert": str(cert_file), "tls_key": str(key_file), "compression": True}
    )
    tls = settings.server.ssl_context()
    assert tls is not None
    srv = LiveServer("127.0.0.1", 0, static_dir=tmp_path, ssl=tls, compression=True)
    async with srv:
        assert srv.url.startswith("https://")
        srv.set_board(board_state("b1"))
        url = f"wss://127.0.0.1:{srv.port}/ws"
        ctx = client_context(ca)
        async with (
            connect(url, ssl=ctx, compression="deflate", max_size=None) as deflate,
            connect(url, ssl=ctx, compression=None, max_size=None) as plain,
        ):
            # Negotiated per client: one asked for permessage-deflate, one did not.
            assert [type(e).__name__ for e in deflate.protocol.extensions] == ["PerMessageDeflate"]
            assert plain.protocol.extensions == []
            for ws in (deflate, plain):
                await subscribe(ws)
            sent = []
            for seq in range(1, 9):
                s = board_state("b1", plies=1 + seq % 8, seq=seq)
                pad = "z" * 100_000 if seq == 5 else ""
                sent.append(srv.publish(update_for(s, padding=pad), s).decode())
            for ws in (deflate, plain):
                assert await recv_board_messages(ws, len(sent), 10) == sent
        # Plain HTTP answers over TLS too.
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port, ssl=ctx)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        raw = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        health = json.loads(body)
        assert health["websocket"]["tls"] is True and health["websocket"]["compression"] is True


def test_tls_settings_come_in_pairs_of_readable_files(ca: trustme.CA, tmp_path: Path) -> None:
    cert_file, key_file = server_files(ca, tmp_path)
    with pytest.raises(ConfigError, match="tls_cert and tls_key go together"):
        load_settings(None, server={"tls_cert": str(cert_file)})
    with pytest.raises(ConfigError, match="tls_cert/tls_key"):
        load_settings(None, server={"tls_cert": str(cert_file), "tls_key": str(cert_file)})
    assert load_settings(None).server.ssl_context() is None
    pair = {"tls_cert": str(cert_file), "tls_key": str(key_file)}
    assert isinstance(load_settings(None, server=pair).server.ssl_context(), ssl.SSLContext)


async def test_a_client_that_never_reads_changes_nothing_for_the_others(tmp_path: Path) -> None:
    limits = ServerLimits(soft_backlog=64 * 1024, low_backlog=8 * 1024, stale_timeout=60)
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        srv.set_board(board_state("b1"))
        readers = await subscribed(srv, 5, max_size=None)
        # max_queue=1 and never a recv(): its socket buffers fill, then the
        # server's write buffer for it.
        (sleeper,) = await subscribed(srv, 1, max_queue=1, max_size=None)
        try:
            sent: list[str] = []
            readers_got: list[list[str]] = [[] for _ in readers]
            for seq in range(1, 1001):
                s = board_state("b1", plies=1 + seq % 8, seq=seq)
                sent.append(srv.publish(update_for(s, padding="p" * 20_000), s).decode())
                if seq % 10 == 0:
                    # The readers read as they go; the sleeper's buffers fill.
                    for ws, got in zip(readers, readers_got, strict=True):
                        got += await recv_board_messages(ws, len(sent) - len(got), 10)
                    if srv.stats.dropped_updates > 20:
                        break
            for ws, got in zip(readers, readers_got, strict=True):
                got += await recv_board_messages(ws, len(sent) - len(got), 10)
                assert got == sent
            # The sleeper fell behind: its updates were dropped, not buffered.
            assert srv.stats.dropped_updates > 0
            (behind,) = srv.hub.lagging_clients()
            assert behind.remote_address[1] == sleeper.local_address[1]
            assert behind.transport.get_write_buffer_size() <= limits.soft_backlog + 25_000
            assert srv.client_count == 6
        finally:
            for ws in [*readers, sleeper]:
                ws.transport.abort()


async def test_several_servers_share_one_port(tmp_path: Path) -> None:
    # the first binds a port of the kernel's choosing, the second the same one
    first = LiveServer("127.0.0.1", 0, static_dir=tmp_path, reuse_port=True)
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(first)
        port = first.port
        second = LiveServer("127.0.0.1", port, static_dir=tmp_path, reuse_port=True)
        await stack.enter_async_context(second)
        assert second.port == port
        first.set_board(board_state("one"))
        second.set_board(board_state("two"))
        seen = set()
        for _ in range(40):  # the kernel spreads connections over both
            async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
                hello = await recv_json(ws)
                seen.add(hello["boards"][0]["board_id"])
            if seen == {"one", "two"}:
                break
        assert seen == {"one", "two"}
        with pytest.raises(OSError):
            await LiveServer("127.0.0.1", port, static_dir=tmp_path).start()
