"""MQTT broker addresses, one parser for the feed and the publisher alike.

``mqtt://[user[:password]@]host[:1883]`` (also ``tcp://``) or, over TLS with
the system's certificate authorities, ``mqtts://host[:8883]`` (also
``ssl://``). User and password are percent-decoded.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None

    def tls_context(self) -> ssl.SSLContext | None:
        """A verifying TLS context for ``mqtts://``, else None."""
        return ssl.create_default_context() if self.tls else None

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_mqtt_url(url: str) -> BrokerAddress:
    """``mqtt://[user:pass@]host[:1883]`` or ``mqtts://host[:8883]`` (ValueError if bad)."""
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
        raise ValueError(f"not an MQTT URL: {url!r} (expected mqtt://host:port or mqtts://...)")
    if not parts.hostname:
        raise ValueError(f"not an MQTT URL: {url!r} (no host)")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not an MQTT URL: {url!r} ({exc})") from None
    tls = parts.scheme in ("mqtts", "ssl")
    return BrokerAddress(
        parts.hostname,
        port or (8883 if tls else 1883),
        tls,
        unquote(parts.username) if parts.username else None,
        unquote(parts.password) if parts.password else None,
    )
