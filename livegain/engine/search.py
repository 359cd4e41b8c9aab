"""One engine search: its limit (depth and/or nodes), and the White-view
:class:`~livegain.core.evaluation.Evaluation` its answer gives."""

from __future__ import annotations

from dataclasses import dataclass

import chess
import chess.engine

from livegain.core.evaluation import Evaluation, checkmated_score, white_score
from livegain.engine.errors import EngineError
from livegain.engine.uci import SearchResult

DEFAULT_DEPTH = 12


@dataclass(frozen=True)
class SearchLimit:
    """A fixed search limit: depth (default 12) and/or nodes.

    With both set the search stops at whichever comes first. Use
    ``SearchLimit(depth=None, nodes=N)`` for a pure node limit.
    """

    depth: int | None = DEFAULT_DEPTH
    nodes: int | None = None

    def __post_init__(self) -> None:
        if self.depth is None and self.nodes is None:
            raise ValueError("a search limit needs a depth or a node count")
        if self.depth is not None and not 1 <= self.depth <= 99:
            raise ValueError(f"depth must be between 1 and 99, got {self.depth}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be positive, got {self.nodes}")

    @classmethod
    def of(cls, depth: int | None = None, nodes: int | None = None) -> SearchLimit:
        """Depth and/or nodes as given; the default depth when neither is."""
        if depth is None and nodes is None:
            return cls()
        return cls(depth=depth, nodes=nodes)

    def to_chess(self) -> chess.engine.Limit:
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes)

    def describe(self) -> str:
        """``"depth 12"``, ``"nodes 100000"`` or ``"depth 12 nodes 100000"``."""
        parts = []
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return " ".join(parts)


def evaluation_from_info(info: chess.engine.InfoDict, board: chess.Board) -> Evaluation:
    """Turn python-chess's analysis info into a White-view :class:`Evaluation`."""
    score = info.get("score")
    if score is None:
        raise EngineError(f"engine reported no score for {board.fen()}")
    pov = score.white()
    mate = pov.mate()
    if mate is not None:
        if mate == 0:  # the side to move is mated (not reached: checked before)
            cp = checkmated_score(board.turn == chess.WHITE)
            mate_out: int | None = None
        else:
            cp = white_score(mate=mate)
            mate_out = mate
    else:
        value = pov.score()
        assert value is not None
        cp = white_score(cp=value)
        mate_out = None
    wdl_info = info.get("wdl")
    wdl = None
    if wdl_info is not None:
        w = wdl_info.white()
        wdl = (int(w.wins), int(w.draws), int(w.losses))
    pv = tuple(m.uci() for m in info.get("pv", []))
    return Evaluation(
        cp=cp,
        mate=mate_out,
        wdl=wdl,
        depth=int(info.get("depth", 0)),
        nodes=int(info.get("nodes", 0)),
        best=pv[0] if pv else None,
        pv=pv,
    )


def evaluation_from_result(result: SearchResult, white_to_move: bool) -> Evaluation:
    """Turn one search's :class:`~livegain.engine.uci.SearchResult` (side to
    move's view) into a White-view :class:`Evaluation`.

    Gives the same values as :func:`evaluation_from_info` on python-chess's
    analysis of the same search (tests/engine/test_pool.py checks it).
    """
    white = white_to_move
    if result.kind == "mate":
        mate = result.score if white else -result.score
        if result.score == 0:  # the side to move is mated (not reached: checked before)
            cp = checkmated_score(white)
            mate_out: int | None = None
        else:
            cp = white_score(mate=mate)
            mate_out = mate
    else:
        cp = white_score(cp=result.score if white else -result.score)
        mate_out = None
    wdl = result.wdl
    if wdl is not None and not white:
        wdl = (wdl[2], wdl[1], wdl[0])
    pv = result.pv
    return Evaluation(
        cp=cp,
        mate=mate_out,
        wdl=wdl,
        depth=result.depth,
        nodes=result.nodes,
        best=pv[0] if pv else None,
        pv=pv,
    )
