"""Logging for every long-running command: structured (structlog) lines on
stderr, JSON or readable, with credentials masked in every value."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from livegain.mqtt.address import redact_credentials


def configure_logging(level: str = "info", json_format: bool = True) -> None:
    """Structured logs (structlog) on stderr: JSON lines, or readable lines."""
    lvl = getattr(logging, level.upper(), logging.INFO)
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        redact_credentials,  # scheme://user:password@ -> scheme://user:***@, in any value
    ]
    processors.append(
        structlog.processors.JSONRenderer()
        if json_format
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(lvl, logging.INFO), stream=sys.stderr, force=True)
    logging.getLogger("livegain.websockets").setLevel(logging.WARNING)
