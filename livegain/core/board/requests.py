"""Which positions of a board wait for the engine, and in which order: the
current position first (priority 0), then the older ones from the start (the
backfill, priority 1, 2, ...). Positions no engine takes (after an illegal
move that stood) are never asked for."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping

from livegain.core.board.updates import LATEST_PRIORITY, EvalRequest
from livegain.core.evaluation import Evaluation


def missing_plies(
    plies: int, evals: Mapping[int, Evaluation], no_eval: Collection[int]
) -> list[int]:
    """The plies (0 = start, up to ``plies``) with no evaluation, but those in
    ``no_eval``, in order. Evaluations only ever exist for plies ``0..plies``."""
    if no_eval:  # a game that went on from an illegal position
        return [k for k in range(plies + 1) if k not in evals and k not in no_eval]
    if len(evals) == plies + 1:
        return []
    if len(evals) == plies and plies not in evals:
        return [plies]
    return [k for k in range(plies + 1) if k not in evals]


def eval_requests(
    board_id: str,
    fen_at: Callable[[int], str],
    plies: int,
    missing: list[int],
    chess960: bool,
    *,
    latest: bool = True,
    backfill: bool = True,
) -> Iterator[EvalRequest]:
    """The requests for the ``missing`` plies of a board of ``plies`` plies, built as
    they are read: the current position's first (``latest``), then the others
    from the oldest (``backfill``)."""
    if latest and missing and missing[-1] == plies:
        yield EvalRequest(board_id, plies, fen_at(plies), LATEST_PRIORITY, chess960)
    if not backfill:
        return
    rank = 0
    for k in missing:
        if k == plies:
            continue
        rank += 1
        yield EvalRequest(board_id, k, fen_at(k), rank, chess960)
