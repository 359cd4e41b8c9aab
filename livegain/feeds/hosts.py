"""How livegain behaves towards each host it reads: the API's etiquette.

Every request to a source host (a lookup, a feed's poll, the opening of a
stream) goes through the host's :class:`Host`:

* **one request at a time** where the host asks for it (``serial``: Lichess,
  whose API asks for one request at a time): a request waits for the one in
  flight to end. A stream holds the host only while it opens (until its
  status and headers arrive), then reads on its own connection;
* **Retry-After**: after an HTTP 429 or 503 no request goes to the host
  before the time it gave (seconds, or an HTTP date); without one, after a
  429 the host is left alone for :data:`WAIT_429` seconds (a full minute, as
  Lichess asks) and after a 503 for :data:`WAIT_503` seconds;
* **counted**: requests per host in all and over the last minute (``/metrics``).

The rules are per host name (``lichess.org``, ``1.pool.livechesscloud.com``),
shared by everything the process reads from that host in one event loop.
The time source and the sleep are injectable (tests use a fake clock).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import email.utils
import math
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

#: Seconds a host is left alone after an HTTP 429 that gives no Retry-After.
WAIT_429 = 60.0
#: Seconds a host is left alone after an HTTP 503 that gives no Retry-After.
WAIT_503 = 10.0
#: The longest Retry-After obeyed, seconds (a larger one is taken as this).
MAX_WAIT = 3600.0
#: Hosts asking for one request at a time (Lichess's API documentation).
SERIAL_HOSTS = frozenset({"lichess.org", "www.lichess.org"})

Sleep = Callable[[float], Coroutine[Any, Any, None]]


def retry_after(value: str | None, now_epoch: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP
    date, RFC 9110 §10.2.3), at most :data:`MAX_WAIT`; None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return min(float(text), MAX_WAIT)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    wait = when.timestamp() - now_epoch
    if not math.isfinite(wait):
        return None
    return min(max(0.0, wait), MAX_WAIT)


def wait_after(status: int, headers: Mapping[str, str], now_epoch: float) -> float | None:
    """How long a host is left alone after answering ``status`` (None: not at all).

    ``headers``: the answer's, names lower-cased."""
    if status not in (429, 503):
        return None
    given = retry_after(headers.get("retry-after"), now_epoch)
    if given is not None:
        return given
    return WAIT_429 if status == 429 else WAIT_503


@dataclass
class HostStats:
    """What one host was asked, for ``/metrics`` and ``/healthz``."""

    requests: int = 0
    throttled: int = 0
    """Answers 429 or 503 (each one left the host alone for a while)."""
    recent: collections.deque[float] = field(default_factory=collections.deque)
    """Monotonic times of the requests of the last minute."""


class Host:
    """One host's etiquette: see the module docstring."""

    def __init__(
        self,
        name: str,
        *,
        serial: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.name = name
        self.serial = name in SERIAL_HOSTS if serial is None else serial
        self.clock = clock
        self.wall = wall
        self.sleep = sleep
        self.not_before = 0.0
        """Monotonic time before which nothing is sent to the host."""
        self.stats = HostStats()
        self.in_flight = 0
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold the host for one request: waits for the request in flight (a
        serial host) and for any Retry-After; counts the request."""
        async with self._lock if self.serial else contextlib.nullcontext():
            while (wait := self.not_before - self.clock()) > 0:
                await self.sleep(wait)
            self.in_flight += 1
            self._count()
            try:
                yield
            finally:
                self.in_flight -= 1

    def answered(self, status: int, headers: Mapping[str, str]) -> float | None:
        """The host answered ``status``: after a 429 or 503 it is left alone for
        the time it asked (or the default). Returns that wait, or None."""
        wait = wait_after(status, headers, self.wall())
        if wait is not None:
            self.stats.throttled += 1
            self.not_before = max(self.not_before, self.clock() + wait)
        return wait

    def per_minute(self) -> int:
        """Requests sent over the last 60 seconds."""
        self._trim()
        return len(self.stats.recent)

    def _count(self) -> None:
        self.stats.requests += 1
        self.stats.recent.append(self.clock())
        self._trim()

    def _trim(self) -> None:
        cutoff = self.clock() - 60.0
        recent = self.stats.recent
        while recent and recent[0] <= cutoff:
            recent.popleft()


_HOSTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Host]] = (
    weakref.WeakKeyDictionary()
)


def host_of(url: str) -> Host:
    """The :class:`Host` of ``url``'s host name, shared within the running event loop."""
    name = (urlsplit(url).hostname or "").lower()
    hosts = _HOSTS.setdefault(asyncio.get_running_loop(), {})
    host = hosts.get(name)
    if host is None:
        host = hosts[name] = Host(name)
    return host


def known_hosts() -> dict[str, Host]:
    """Every host asked so far in the running event loop (empty outside one)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return {}
    return dict(_HOSTS.get(loop, {}))
