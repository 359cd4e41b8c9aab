"""MQTT broker addresses: one parser for every part that connects to a broker.

``mqtt://[user[:password]@]host[:1883]`` (also ``tcp://``) or, over TLS,
``mqtts://host[:8883]`` (also ``ssl://``). User and password are
percent-decoded; they may also be given apart from the URL (config keys, or
an environment variable named by ``password_env``), which keeps them out of
the URL and so out of anything that prints it.

TLS verifies the broker's certificate and host name against the system's
certificate authorities, or against ``ca_file`` (a PEM bundle: a private CA);
``cert_file``/``key_file`` present a client certificate (brokers with
``require_certificate true``).

Credentials never reach a log: :meth:`BrokerAddress.__str__` and
:func:`redact_url` leave the password out, and :func:`redact_credentials` is a
structlog processor that masks ``scheme://user:password@`` in any logged string.
"""

from __future__ import annotations

import os
import re
import ssl
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, Field, SecretStr


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def tls_context(self) -> ssl.SSLContext | None:
        """A verifying TLS context for ``mqtts://`` (with the CA and client
        certificate given, if any), else None. Raises ValueError naming the
        file when a certificate or key cannot be read."""
        if not self.tls:
            return None
        try:
            ctx = ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"cannot read CA file {self.ca_file!r}: {exc}") from None
        if self.cert_file:
            try:
                ctx.load_cert_chain(self.cert_file, self.key_file)
            except (OSError, ssl.SSLError) as exc:
                raise ValueError(
                    f"cannot read client certificate {self.cert_file!r}"
                    f"{f' / key {self.key_file!r}' if self.key_file else ''}: {exc}"
                ) from None
        return ctx

    def __str__(self) -> str:
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def parse_mqtt_url(
    url: str,
    *,
    username: str | None = None,
    password: str | None = None,
    password_env: str | None = None,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
) -> BrokerAddress:
    """``mqtt://[user:pass@]host[:1883]`` or ``mqtts://host[:8883]`` (ValueError if bad).

    ``username``/``password`` given here win over the URL's; ``password_env``
    names an environment variable holding the password (it must be set).
    ``ca_file``, ``cert_file``, ``key_file`` need ``mqtts://``.
    """
    shown = redact_url(url)
    if len(shown) > 120:  # quoted back in errors: a line, not a page
        shown = shown[:117] + "..."
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
        raise ValueError(f"not an MQTT URL: {shown!r} (expected mqtt://host:port or mqtts://...)")
    if not parts.hostname:
        raise ValueError(f"not an MQTT URL: {shown!r} (no host)")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not an MQTT URL: {shown!r} ({exc})") from None
    tls = parts.scheme in ("mqtts", "ssl")
    if not tls and (ca_file or cert_file or key_file):
        raise ValueError(f"{shown!r}: ca_file/cert_file/key_file need an mqtts:// URL")
    if key_file and not cert_file:
        raise ValueError(f"{shown!r}: key_file given without cert_file")
    if password_env:
        if password_env not in os.environ:
            raise ValueError(f"environment variable {password_env} (the MQTT password) is not set")
        password = os.environ[password_env]
    user = username or (unquote(parts.username) if parts.username else None)
    secret = (
        password if password is not None else (unquote(parts.password) if parts.password else None)
    )
    return BrokerAddress(
        parts.hostname,
        port or (8883 if tls else 1883),
        tls,
        user,
        secret,
        ca_file or None,
        cert_file or None,
        key_file or None,
    )


class BrokerAccess(BaseModel):
    """Credentials and TLS files beside a broker URL: the config keys the MQTT
    feed and the MQTT publisher share (each declares its own ``url``)."""

    url: str
    username: str | None = Field(default=None, description="Broker user (wins over the URL's)")
    password: SecretStr | None = Field(
        default=None, description="Broker password (wins over the URL's); never logged"
    )
    password_env: str | None = Field(
        default=None, description="Name of an environment variable holding the password"
    )
    ca_file: str | None = Field(
        default=None, description="mqtts: PEM CA bundle to verify the broker (default: system)"
    )
    cert_file: str | None = Field(default=None, description="mqtts: client certificate (PEM)")
    key_file: str | None = Field(
        default=None, description="mqtts: client key (PEM; default: in cert_file)"
    )

    def broker(self) -> BrokerAddress:
        """The broker address with credentials and TLS files (ValueError if bad)."""
        return parse_mqtt_url(
            self.url,
            username=self.username,
            password=self.password.get_secret_value() if self.password else None,
            password_env=self.password_env,
            ca_file=self.ca_file,
            cert_file=self.cert_file,
            key_file=self.key_file,
        )


# scheme://user:password@  (user may be empty; the password is what we hide)
_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/@:]*):([^\s/@]*)@")


def redact_url(text: str) -> str:
    """``mqtt://user:secret@host`` -> ``mqtt://user:***@host``, anywhere in ``text``."""
    return _CREDENTIALS.sub(r"\1\2:***@", text)


def _redact(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return redact_url(value) if "://" in value else value
    if depth > 4:
        return value
    if isinstance(value, Mapping):
        return {k: _redact(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_redact(v, depth + 1) for v in value)
    return value


def redact_credentials(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: mask ``scheme://user:password@`` in every string value
    (also inside lists and dicts); exception text is masked once rendered, so
    put this processor after ``format_exc_info``."""
    for key, value in event_dict.items():
        event_dict[key] = _redact(value)
    return event_dict
