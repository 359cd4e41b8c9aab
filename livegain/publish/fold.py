"""Folding an ``update`` into a board state, as the overlays' ``lib.js``
``applyUpdate`` does: for a process fed by updates (a gateway reading MQTT,
a mirror in tests), and the gap check its ``seq`` allows."""

from __future__ import annotations

from livegain.core.errors import LivegainError
from livegain.publish.schema import BoardState, Clocks, TracePoint, Update


class SeqGap(LivegainError, ValueError):
    """An update does not follow the state: ``update.seq > state.seq + 1``."""

    def __init__(self, board_id: str, have: int, got: int) -> None:
        super().__init__(f"board {board_id!r}: update seq {got} after seq {have}")
        self.board_id = board_id
        self.have = have
        self.got = got


def _merge_points(trace: list[TracePoint], points: list[TracePoint]) -> list[TracePoint]:
    if not points:
        return trace
    by_ply = {p.ply: p for p in trace}
    for p in points:
        by_ply[p.ply] = p
    return sorted(by_ply.values(), key=lambda p: p.ply)


def apply_update(state: BoardState, update: Update) -> BoardState:
    """The board state after ``update``, as the overlays fold it (``lib.js``
    ``applyUpdate``; docs/protocol/README.md, "Updates").

    An update that is not newer than the state (``seq <= state.seq``: a
    duplicate or an old one) changes nothing: ``state`` itself is returned.
    One that skips a ``seq`` raises :class:`SeqGap` (take a fresh snapshot).
    The update must be of the same board.
    """
    if update.board_id != state.board_id:
        raise ValueError(f"update of board {update.board_id!r} applied to {state.board_id!r}")
    if update.seq <= state.seq:
        return state
    if update.seq != state.seq + 1:
        raise SeqGap(state.board_id, state.seq, update.seq)
    moves = state.moves
    white_trace = state.white_trace
    black_trace = state.black_trace
    if update.truncate_to is not None:
        t = update.truncate_to
        moves = [m for m in moves if m.ply <= t]
        white_trace = [p for p in white_trace if p.ply <= t]
        black_trace = [p for p in black_trace if p.ply <= t]
    if update.ply is not None:
        n = update.ply.ply
        moves = sorted([*(m for m in moves if m.ply != n), update.ply], key=lambda m: m.ply)
    changes = {
        "moves": moves,
        "white_trace": _merge_points(white_trace, update.white_points),
        "black_trace": _merge_points(black_trace, update.black_points),
        # Every update carries the board's current values (None: not known yet).
        "eval": update.eval,
        "white_perceived": update.white_perceived,
        "black_perceived": update.black_perceived,
        "white_form": update.white_form,
        "black_form": update.black_form,
        "white_algorithm4": update.white_algorithm4,
        "black_algorithm4": update.black_algorithm4,
        "white_accuracy": update.white_accuracy,
        "black_accuracy": update.black_accuracy,
        "head_to_head": update.head_to_head,
        "match": update.match,
        "clocks": update.clocks if update.clocks is not None else Clocks(),
        "fen": update.fen,
        "result": update.result,
        "status": update.status,
        "seq": update.seq,
    }
    return state.model_copy(update=changes)
