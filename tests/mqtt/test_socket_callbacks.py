"""A socket callback on a socket already closed (aiomqtt's add_writer after a
refused TLS handshake) is one log line, not a traceback; other callback errors
still reach the loop's default handler."""

from __future__ import annotations

import asyncio
from typing import Any

from livegain.mqtt.client import quiet_socket_callbacks


def test_a_closed_socket_s_callback_is_one_line_and_other_errors_pass() -> None:
    seen: list[dict[str, Any]] = []
    loop = asyncio.new_event_loop()
    try:
        loop.default_exception_handler = seen.append  # type: ignore[method-assign]
        quiet_socket_callbacks(loop)

        async def main() -> None:
            loop.call_soon(loop.add_writer, -1, lambda: None)  # a closed socket: ValueError

            def boom() -> None:
                raise RuntimeError("another error")

            loop.call_soon(boom)
            await asyncio.sleep(0.05)

        loop.run_until_complete(main())
    finally:
        loop.close()
    # the socket's error was logged in one line; only the other reached the default
    assert [type(c.get("exception")).__name__ for c in seen] == ["RuntimeError"]


def test_a_handler_of_the_loop_s_own_is_kept() -> None:
    loop = asyncio.new_event_loop()
    try:

        def own(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            pass

        loop.set_exception_handler(own)
        quiet_socket_callbacks(loop)
        assert loop.get_exception_handler() is own
    finally:
        loop.close()
