"""What a viewer server allows its clients (:class:`ServerLimits`): message
and frame sizes, errors, subscriptions, connections, origins, backlogs and
the board list's pacing; the hub applies some, the server the others."""

from __future__ import annotations

from dataclasses import dataclass

from livegain.config import ServerConfig


@dataclass(frozen=True)
class ServerLimits:
    """Bounds that protect a server from slow or hostile clients.

    The hub applies the message, subscription, board-list and backlog limits;
    the adapter the connection ones (frame size, connection counts, origins,
    keepalive, fan-out chunks).
    """

    max_message_bytes: int = 4096
    """Client messages above this size get an ``error`` (the connection stays)."""
    max_frame_bytes: int = 65536
    """Frames above this size close the connection (code 1009)."""
    max_errors: int = 20
    """Protocol errors tolerated per connection before it is closed (1008)."""
    max_subscriptions: int = 64
    """Board ids one client may subscribe to (``"*"`` counts as one); beyond:
    an ``error`` (the connection stays)."""
    max_board_id: int = 96
    """Longest board id a client may name (the service's ids are shorter)."""
    max_clients: int = 10_000
    """WebSocket connections beyond this are refused (HTTP 503)."""
    max_connections_per_ip: int = 64
    """WebSocket connections per client address beyond this are refused (HTTP
    429); 0: no limit. Behind a reverse proxy every client has its address:
    limit there instead."""
    origins: tuple[str, ...] = ()
    """Origins whose pages may open ``/ws`` besides the server's own host (any
    port); ``"*"``: any; ``"null"``: local files. A client that sends no
    ``Origin`` (OBS, tools) is always allowed; others get HTTP 403."""
    cors_origins: tuple[str, ...] = ()
    """Origins that get ``Access-Control-Allow-Origin`` on HTTP answers (``"*"``:
    any); none by default."""
    board_page: int = 100
    """Boards in ``hello`` and at most per ``list_boards`` page."""
    board_list_interval: float = 0.5
    """Seconds board-list changes are gathered into one ``boards_diff``."""
    rate: float = 20.0
    """Client messages per second allowed on average (a token bucket) ..."""
    burst: int = 40
    """... with bursts up to this many; beyond, messages get an ``error``."""
    soft_backlog: int = 256 * 1024
    """Write-buffer bytes above which a client stops getting updates (resync later)."""
    low_backlog: int = 16 * 1024
    """Write-buffer bytes below which a stale client receives its snapshots."""
    hard_backlog: int = 8 * 1024 * 1024
    """Write-buffer bytes above which a client is disconnected at once."""
    stale_timeout: float = 30.0
    """Seconds a stale client may take to drain before it is disconnected."""
    fanout_chunk: int = 500
    """Clients written per event-loop iteration when one message goes to many."""
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0


def server_limits(cfg: ServerConfig) -> ServerLimits:
    """The limits a ``[server]`` section sets (the service's and a gateway's alike)."""
    return ServerLimits(
        max_message_bytes=cfg.max_message_bytes,
        soft_backlog=cfg.soft_backlog_kb * 1024,
        stale_timeout=cfg.stale_timeout,
        max_clients=cfg.max_connections,
        max_connections_per_ip=cfg.max_connections_per_ip,
        max_subscriptions=cfg.max_subscriptions,
        max_board_id=cfg.max_board_id,
        origins=tuple(cfg.origins),
        cors_origins=tuple(cfg.cors_origins),
        board_page=cfg.board_page,
        board_list_interval=cfg.board_list_interval,
    )
