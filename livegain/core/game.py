"""Moved: :mod:`livegain.core.board` (this name stays until every caller imports from there)."""

from livegain.core.board.board import DEFAULT_MAX_PLIES, BoardGame
from livegain.core.board.identity import board_slug, describe_snapshot
from livegain.core.board.registry import DEFAULT_MAX_BOARDS, Tournament
from livegain.core.board.results import RESULTS, dgt_signal_result
from livegain.core.board.sources import DEFAULT_TAKEOVER_AFTER
from livegain.core.board.updates import (
    Applied,
    BoardError,
    BoardModels,
    BoardUpdate,
    Clocks,
    Color,
    EvalRequest,
    IllegalPly,
    PlyInfo,
    SourceStatus,
)
from livegain.core.events import player_key
from livegain.core.wdl import engine_wdl

__all__ = [
    "DEFAULT_MAX_BOARDS",
    "DEFAULT_MAX_PLIES",
    "DEFAULT_TAKEOVER_AFTER",
    "RESULTS",
    "Applied",
    "BoardError",
    "BoardGame",
    "BoardModels",
    "BoardUpdate",
    "Clocks",
    "Color",
    "EvalRequest",
    "IllegalPly",
    "PlyInfo",
    "SourceStatus",
    "Tournament",
    "board_slug",
    "describe_snapshot",
    "dgt_signal_result",
    "engine_wdl",
    "player_key",
]
