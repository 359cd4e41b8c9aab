"""Service configuration: a TOML file, overridden by ``LIVEGAIN_*`` variables.

Precedence, highest first: explicit overrides (command-line flags), environment
variables (``LIVEGAIN_SERVER__PORT=9000``; nested keys joined with ``__``;
lists and tables as JSON, e.g. ``LIVEGAIN_FEEDS='[{"type":"file","path":"r1.pgn"}]'``),
the TOML file (``livegain serve --config config/livegain.toml``), then the
defaults below. ``config/livegain.toml`` documents every key.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from livegain.broker import BrokerAccess
from livegain.core.game import DEFAULT_MAX_BOARDS, DEFAULT_MAX_PLIES
from livegain.feeds.base import FeedConfig


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerConfig(_Section):
    host: str = Field(default="127.0.0.1", description="Address to listen on")
    port: int = Field(default=8080, ge=0, le=65535, description="One port: HTTP and /ws")
    max_message_bytes: int = Field(default=4096, gt=0, description="Largest client message")
    soft_backlog_kb: int = Field(
        default=256, gt=0, description="A client with more unsent KiB gets a snapshot later"
    )
    stale_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a lagging client may take to catch up"
    )
    origins: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host[:port]) whose pages may open /ws besides "
        "the server's own; '*' allows any, 'null' local files. Clients that send no "
        "Origin (OBS, command-line tools) are always allowed",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins allowed to read the HTTP API from scripts (CORS); '*' any; "
        "default none",
    )
    max_connections: int = Field(default=10_000, ge=1, description="WebSocket connections")
    max_connections_per_ip: int = Field(
        default=64, ge=0, description="WebSocket connections per client address (0: no limit)"
    )
    max_subscriptions: int = Field(default=64, ge=1, description="Board ids per client")
    max_board_id: int = Field(default=96, ge=8, description="Longest board id a client may send")
    board_page: int = Field(
        default=100, ge=1, le=1000, description="Boards in hello and per list_boards page"
    )
    board_list_interval: float = Field(
        default=0.5, ge=0.0, le=60.0, description="Seconds board-list changes are gathered"
    )
    board_expiry: float | None = Field(
        default=None,
        gt=0,
        description="A board without a result that gets no move for this many seconds "
        "is removed (default: never)",
    )
    admin_token: str | None = Field(
        default=None,
        min_length=16,
        description="Bearer token for DELETE /api/boards/{id} (default: no admin API)",
    )
    tls_cert: Path | None = Field(
        default=None,
        description="PEM certificate (chain) file: with tls_key, serve https:// and wss:// "
        "on the port instead of http:// and ws://",
    )
    tls_key: Path | None = Field(default=None, description="PEM private key of tls_cert")
    compression: bool = Field(
        default=False,
        description="Offer permessage-deflate on /ws (used with the clients that ask for it; "
        "costs CPU per client and message)",
    )
    reuse_port: bool = Field(
        default=False,
        description="Listen with SO_REUSEPORT: several processes share the port (Linux)",
    )

    @model_validator(mode="after")
    def _tls_pair(self) -> ServerConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together (both, or neither)")
        self.ssl_context()  # unreadable files: an error now, naming them
        return self

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server's TLS context from ``tls_cert`` and ``tls_key`` (None without them).

        Raises ValueError naming the file when one cannot be read.
        """
        if self.tls_cert is None or self.tls_key is None:
            return None
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            ctx.load_cert_chain(self.tls_cert, self.tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"server.tls_cert/tls_key ({self.tls_cert}, {self.tls_key}): {exc}"
            ) from exc
        return ctx


class RemoteEngineConfig(_Section, BrokerAccess):
    """``[engine.remote]``: engine workers through an MQTT broker (docs/workers.md)."""

    url: str = Field(
        default="mqtt://127.0.0.1:1883",
        description="Broker the workers take jobs from: mqtt://host[:1883] or mqtts://host[:8883]",
    )
    prefix: str = Field(default="livegain/engine", description="Topic prefix of jobs/results")
    engine_name: str | None = Field(
        default=None,
        description="'remote' mode: accept only workers whose engine reports this 'id name' "
        "(default: the first worker with the configured limit sets the engine)",
    )
    job_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a worker has for a job before it is re-sent"
    )
    max_attempts: int = Field(default=5, ge=1, description="Times a job is sent before it fails")
    prefetch: int = Field(
        default=2, ge=1, description="Jobs out at once per engine process of the workers"
    )
    max_jobs: int = Field(default=256, ge=1, description="Jobs out at once, at most")
    wait_for_workers: float = Field(
        default=60.0,
        gt=0,
        description="'remote' mode: seconds to wait at start for a worker to announce itself",
    )
    client_id: str | None = Field(
        default=None, description="Default: livegain-jobs-<host>-<random>, new at each start"
    )


class EngineConfig(_Section):
    mode: Literal["local", "remote", "both"] = Field(
        default="local",
        description="local: this machine's engine pool; remote: `livegain worker` processes "
        "through the broker of [engine.remote]; both: the two share the work",
    )
    remote: RemoteEngineConfig = Field(default_factory=RemoteEngineConfig)
    path: str = Field(default="/usr/games/stockfish", description="UCI engine executable")
    depth: int | None = Field(default=12, ge=1, description="Fixed search depth")
    nodes: int | None = Field(default=None, ge=1, description="Fixed node budget (optional)")
    workers: int | None = Field(
        default=None, ge=1, description="Engine processes (default: number of cores)"
    )
    hash_mb: int = Field(default=16, ge=1, description="Hash per engine process, MiB")
    search_timeout: float = Field(default=60.0, gt=0, description="Seconds per position at most")
    rating: float | None = Field(
        default=None,
        description="Engine rating r_e for Algorithm 4 (default: shipped calibration)",
    )
    perceived_model: str | None = Field(
        default=None,
        description="Calibrated perceived-rating model file (TOML, [[model]] entries) "
        "to pick from instead of the shipped one (config/perceived.toml)",
    )

    @model_validator(mode="after")
    def _some_limit(self) -> EngineConfig:
        if self.depth is None and self.nodes is None:
            raise ValueError("engine needs depth or nodes")
        return self


class MqttPublishConfig(_Section, BrokerAccess):
    enabled: bool = False
    url: str = Field(
        default="mqtt://127.0.0.1:1883",
        description="mqtt://[user:pass@]host[:port], or mqtts://host[:8883] for TLS",
    )
    prefix: str = Field(default="livegain/out", description="Topics: {prefix}/{board_id}/...")
    client_id: str | None = Field(
        default=None, description="Default: livegain-pub-<host>-<random>, new at each start"
    )
    qos: Literal[0, 1, 2] = 1


class MatchConfig(_Section):
    """A match between two players (games between them, in either colour)."""

    a: str = Field(description="Player A's name as the feed spells it (case-insensitive)")
    b: str = Field(description="Player B's name")
    games: int = Field(gt=0, description="Games in the match")
    draw_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    score_a: float = Field(default=0.0, ge=0.0, description="A's score before this service runs")
    score_b: float = Field(default=0.0, ge=0.0)
    played: int | None = Field(
        default=None, ge=0, description="Games played before (default: score_a + score_b)"
    )
    rating_source: Literal["official", "perceived"] = Field(
        default="official",
        description="official: FIDE ratings (feed or rating_a/rating_b); "
        "perceived: the players' calibrated perceived ratings in the live game "
        "(Algorithm 4's when no calibrated model is in use)",
    )
    rating_a: float | None = None
    rating_b: float | None = None

    @property
    def played_before(self) -> int:
        return self.played if self.played is not None else round(self.score_a + self.score_b)


class LogConfig(_Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    json_format: bool = Field(default=True, alias="json", description="JSON lines on stderr")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class LimitsConfig(_Section):
    """What one game or one tournament may hold; past it, input is refused with an error."""

    max_plies: int = Field(
        default=DEFAULT_MAX_PLIES,
        gt=0,
        description="Plies (half-moves) per game; a longer game is refused",
    )
    max_boards: int = Field(
        default=DEFAULT_MAX_BOARDS,
        gt=0,
        description="Boards in the tournament; a game that would add one more is refused",
    )


class Settings(BaseSettings):
    """Everything ``livegain serve`` needs."""

    model_config = SettingsConfigDict(
        env_prefix="LIVEGAIN_",
        env_nested_delimiter="__",
        extra="forbid",
        nested_model_default_partial_update=True,
    )

    server: ServerConfig = Field(default_factory=ServerConfig)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    data_dir: Path = Field(default=Path("data"), description="SQLite store and caches")
    persist: bool = Field(default=True, description="Keep boards and evaluations on disk")
    feeds: list[FeedConfig] = Field(default_factory=list)
    mqtt: MqttPublishConfig = Field(default_factory=MqttPublishConfig)
    matches: list[MatchConfig] = Field(default_factory=list)
    log: LogConfig = Field(default_factory=LogConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)

    _toml_file: ClassVar[Path | None] = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if cls._toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=cls._toml_file))
        return tuple(sources)


class ConfigError(ValueError):
    """The configuration file or environment is invalid (message names what)."""


def load_settings(path: Path | str | None = None, **overrides: Any) -> Settings:
    """Load settings from ``path`` (TOML), then env, then ``overrides``.

    Raises :class:`ConfigError` with a readable message on a missing file,
    bad TOML or invalid values.
    """
    from pydantic import ValidationError

    toml: Path | None = None
    if path is not None:
        toml = Path(path)
        if not toml.is_file():
            raise ConfigError(f"{toml}: no such configuration file")

    class _Loaded(Settings):
        _toml_file: ClassVar[Path | None] = toml

    try:
        loaded = _Loaded(**overrides)
    except ValidationError as exc:
        where = f"{toml}" if toml else "configuration"
        lines = []
        for err in exc.errors(include_url=False, include_input=False)[:5]:
            loc = ".".join(str(p) for p in err.get("loc", ()))
            lines.append(f"{loc}: {err.get('msg', '')}")
        raise ConfigError(f"{where}: " + "; ".join(lines)) from None
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ConfigError(f"{toml}: {exc}") from None
    return loaded


def env_overrides() -> dict[str, str]:
    """The ``LIVEGAIN_*`` variables in effect (for logging what was overridden)."""
    return {k: v for k, v in os.environ.items() if k.startswith("LIVEGAIN_")}
