"""The MQTT client every part of livegain uses, made in one place (:func:`connect`):
aiomqtt's, with cancellation kept, MQTT 5, no Nagle delay, TLS from the address.

aiomqtt waits for the broker's answer (PUBACK, SUBACK, the disconnection) with
:func:`asyncio.wait_for`. On Python 3.11 that function *returns the answer*
when the waiting task is cancelled in the same loop turn as the answer
arrives (CPython gh-86296, fixed in 3.12 where ``wait_for`` is built on
``asyncio.timeout``). The task then carries on as if it had never been
cancelled: a replay keeps playing, a publisher keeps publishing, and whoever
awaits the cancelled task waits for ever. It happened in ``livegain demo
--mqtt`` stopped with Ctrl-C while moves were going out (about one stop in
ten on a loaded machine).

:class:`Client` overrides aiomqtt's public coroutines and raises the
cancellation they swallowed, so a cancelled task stops.

aiomqtt registers paho's socket with the event loop through callbacks
(``loop.call_soon(loop.add_writer, sock, ...)``). When the connection fails
between the scheduling and the call (a TLS handshake refused: a worker
without a client certificate), the call finds the socket closed and the
loop's default handler prints a traceback to stderr, though the failure is
already reported as the connection's error. :func:`quiet_socket_callbacks`
logs such an error in one line instead; every other exception goes to the
loop's default handler as before.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import socket
from collections.abc import Awaitable
from types import TracebackType
from typing import Any, TypeVar

import aiomqtt
import structlog
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from livegain.mqtt.address import BrokerAddress, parse_mqtt_url

T = TypeVar("T")
log = structlog.get_logger("livegain.mqtt")


async def keep_cancellation(aw: Awaitable[T]) -> T:
    """``await aw``; if the task was cancelled meanwhile and ``aw`` returned
    anyway, raise :class:`asyncio.CancelledError` as it should have."""
    task = asyncio.current_task()
    before = task.cancelling() if task is not None else 0
    result = await aw
    if task is not None and task.cancelling() > before:
        raise asyncio.CancelledError
    return result


_SOCKET_CALLS = ("add_writer", "add_reader", "remove_writer", "remove_reader")


def quiet_socket_callbacks(loop: asyncio.AbstractEventLoop) -> None:
    """On ``loop`` (unless it has a handler of its own), an error of a socket
    callback on a socket already closed is one log line, not a traceback."""
    if loop.get_exception_handler() is not None:
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        where = repr(context.get("handle", ""))
        if isinstance(exc, OSError | ValueError) and any(c in where for c in _SOCKET_CALLS):
            log.warning("mqtt_socket_closed", error=f"{type(exc).__name__}: {exc}")
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


class Client(aiomqtt.Client):
    """:class:`aiomqtt.Client` whose waits on the broker end when cancelled."""

    async def __aenter__(self) -> Client:
        quiet_socket_callbacks(asyncio.get_running_loop())
        await super().__aenter__()
        return self

    async def publish(self, *args: Any, **kwargs: Any) -> None:
        await keep_cancellation(super().publish(*args, **kwargs))

    async def subscribe(self, *args: Any, **kwargs: Any) -> Any:
        return await keep_cancellation(super().subscribe(*args, **kwargs))

    async def unsubscribe(self, *args: Any, **kwargs: Any) -> None:
        await keep_cancellation(super().unsubscribe(*args, **kwargs))

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await keep_cancellation(super().__aexit__(exc_type, exc, tb))


def connect(
    broker: str | BrokerAddress,
    identifier: str | None = None,
    *,
    will: aiomqtt.Will | None = None,
    session_expiry: int | None = None,
    keepalive: int = 30,
    timeout: float = 10.0,
) -> Client:
    """An MQTT 5 client for ``broker`` (a URL or a :class:`BrokerAddress`:
    credentials, TLS files), under ``identifier`` (None: the library's).

    With ``session_expiry`` (seconds) the session is persistent (no clean
    start: the broker keeps our QoS 1 messages while we are away); without,
    every connection starts clean (nothing waits for a process that is gone).
    Small messages go out at once: without ``TCP_NODELAY``, Nagle's algorithm
    and delayed ACKs add about 40 ms to each way of a round trip. A TLS file
    that cannot be read raises ValueError naming it."""
    addr = broker if isinstance(broker, BrokerAddress) else parse_mqtt_url(broker)
    props: Properties | None = None
    if session_expiry is not None:
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = session_expiry
    return Client(
        addr.host,
        addr.port,
        username=addr.username,
        password=addr.password,
        identifier=identifier,
        protocol=aiomqtt.ProtocolVersion.V5,
        clean_start=session_expiry is None,
        properties=props,
        will=will,
        tls_context=addr.tls_context(),
        timeout=timeout,
        keepalive=keepalive,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )


def payload_bytes(message: aiomqtt.Message) -> bytes:
    """A message's payload as bytes, whatever aiomqtt made of it."""
    payload = message.payload
    if isinstance(payload, bytes | bytearray):
        return bytes(payload)
    if isinstance(payload, str):
        return payload.encode()
    if payload is None:
        return b""
    return str(payload).encode()


def unique_client_id(role: str) -> str:
    """``livegain-{role}-{host}-{random}``: no two instances share an id by default
    (a broker disconnects the older of two clients with one id: a takeover).

    The random part is 128 bits: a broker lets whoever presents a session's id
    take that session over, so an id is a secret like a password. livegain shows
    it nowhere (``/healthz``, ``/metrics``, messages other users read); the deploy
    broker binds the service's ingest id to its user (docs/security.md)."""
    return f"{instance_name(role)}{secrets.token_hex(12)}"


def instance_name(role: str) -> str:
    """``livegain-{role}-{host}-{random}`` with 32 random bits: a name to show
    (a worker's id in /healthz), never a client id."""
    host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname())[:40] or "host"
    return f"livegain-{role}-{host}-{secrets.token_hex(4)}"


SESSION_TAKEN_OVER = 142  # MQTT 5 DISCONNECT reason code 0x8E


def taken_over(exc: BaseException) -> bool:
    """Did the broker end this connection because another client connected with
    its client id (MQTT 5 reason 0x8E, "Session taken over")?"""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        rc = getattr(seen, "rc", None)
        value = getattr(rc, "value", rc)
        if value == SESSION_TAKEN_OVER:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
