"""Core live-game state -> wire protocol models (:mod:`livegain.publish.schema`).

::

    board_state(game, engine="Stockfish 15.1 depth 12")  -> schema.BoardState
    board_summary(game)                                  -> schema.BoardSummary
    update(core_update)                                  -> schema.Update

``game`` is a :class:`livegain.core.board.board.BoardGame` (``BoardRegistry.board(id)``),
``core_update`` a :class:`livegain.core.board.updates.BoardUpdate`. Sequence numbers are
kept per board by the core: ``Update.seq`` is the update's, ``BoardState.seq``
is the last one the board emitted, so a client that took a snapshot applies
only updates with a larger ``seq``. The engine's best move (UCI) is turned into
SAN in the position it was searched from.

Names: the core calls Algorithm 4 ``perceived`` and the calibrated estimate
``calibrated``; on the wire the calibrated estimate is ``*_perceived`` (what
an audience is shown) and Algorithm 4 is ``*_algorithm4``; ``form`` keeps its
name. ``EvalInfo.wdl`` is the W/D/L the board shows (the human model's when
it has one), ``engine_wdl`` the engine's own.
"""

from __future__ import annotations

import functools
from typing import Literal

import chess

from livegain.core.accuracy import GameAccuracy, PlayerAccuracy
from livegain.core.board.board import BoardGame
from livegain.core.board.updates import BoardUpdate, Clocks, Color, PlyInfo
from livegain.core.evaluation import Evaluation
from livegain.core.ledger import TracePoint
from livegain.core.moments import Moment
from livegain.core.perceived import CalibratedRating
from livegain.core.rating import HeadToHead, PerceivedRating
from livegain.core.snapshot import PlayerInfo
from livegain.core.wdl import Wdl
from livegain.publish import schema


def player(p: PlayerInfo) -> schema.Player:
    return schema.Player(
        name=p.name,
        title=p.title,
        federation=p.federation,
        rating=p.rating,
        fide_id=p.fide_id,
    )


def best_san(best: str | None, fen: str, chess960: bool = False) -> str | None:
    """The engine's best move (UCI) as SAN in ``fen``; None when absent or not legal there."""
    if not best:
        return None
    return _best_san(best, fen, chess960)


@functools.lru_cache(maxsize=32768)
def _best_san(best: str, fen: str, chess960: bool) -> str | None:
    # Board states are rebuilt on every update: each position is converted once.
    try:
        board = chess.Board(fen, chess960=chess960)
        move = board.parse_uci(best)
        return board.san(move)
    except ValueError:
        return None


def wdl(w: Wdl | None) -> schema.Wdl | None:
    return None if w is None else schema.Wdl(win=w[0], draw=w[1], loss=w[2])


def eval_info(
    ev: Evaluation | None,
    shown: Wdl | None,
    fen: str,
    chess960: bool = False,
    *,
    engine_wdl: Wdl | None = None,
    wdl_model: str | None = None,
    wdl_fallback: bool = False,
) -> schema.EvalInfo | None:
    """An evaluation with the W/D/L shown (``shown``, made by ``wdl_model``;
    None: no human model) and the engine's own (``engine_wdl``)."""
    if ev is None:
        return None
    return schema.EvalInfo(
        cp=ev.cp,
        mate=ev.mate,
        wdl=wdl(shown),
        engine_wdl=wdl(engine_wdl),
        wdl_model=wdl_model,
        wdl_fallback=wdl_fallback if wdl_model is not None else False,
        depth=ev.depth,
        best=best_san(ev.best, fen, chess960),
    )


def _scale(scale: str | None) -> Literal["fide", "lichess"]:
    return "fide" if scale == "fide" else "lichess"


def perceived(
    c: CalibratedRating | None,
    rating_range: tuple[float, float] | None = None,
    scale: str | None = None,
    label: str | None = None,
) -> schema.Perceived | None:
    """A calibrated rating (the wire's ``*_perceived`` or ``*_form``), with
    the model's validated ``rating_range``, its rating ``scale`` and the
    player's ``label`` (:meth:`BoardGame.label`)."""
    if c is None:
        return None
    return schema.Perceived(
        rating=c.rating,
        low=c.low,
        high=c.high,
        moves=c.moves,
        early=c.early,
        model=c.model,
        scale=_scale(scale),
        label=label,
        range_low=None if rating_range is None else rating_range[0],
        range_high=None if rating_range is None else rating_range[1],
    )


def _perceived_of(game: BoardGame, color: Color) -> schema.Perceived | None:
    sc = game.scoring
    return perceived(sc.calibrated(color), sc.rating_range, sc.scale, sc.label(color))


def _form_of(game: BoardGame, color: Color) -> schema.Perceived | None:
    sc = game.scoring
    return perceived(sc.form(color), sc.rating_range, sc.scale, sc.label(color))


def algorithm4(pr: PerceivedRating | None) -> schema.Algorithm4 | None:
    """Algorithm 4's perceived rating (the wire's ``*_algorithm4``)."""
    if pr is None:
        return None
    return schema.Algorithm4(
        rating=pr.rating,
        low=pr.low,
        high=pr.high,
        difference=pr.difference,
        expected=pr.expected,
        moves=pr.moves,
        bounded=pr.bounded,
    )


def accuracy(a: PlayerAccuracy | None) -> schema.Accuracy | None:
    """A player's accuracy (None before his first evaluated move)."""
    if a is None or a.moves == 0:
        return None
    return schema.Accuracy(
        overall=a.overall,
        moves=a.moves,
        opening=a.opening,
        middlegame=a.middlegame,
        endgame=a.endgame,
    )


def _accuracies(g: GameAccuracy | None) -> dict[str, schema.Accuracy | None]:
    if g is None:
        return {"white_accuracy": None, "black_accuracy": None}
    return {"white_accuracy": accuracy(g.white), "black_accuracy": accuracy(g.black)}


def moment(m: Moment, game: BoardGame, at_ms: int) -> schema.Moment:
    """A core moment as the ``moment`` message, named with the board's players."""
    return schema.Moment(
        board_id=m.board_id,
        tournament=game.event,
        round=game.round,
        board=game.board,
        white=game.white.name,
        black=game.black.name,
        kind=m.kind,
        ply=m.ply,
        move=m.move,
        color=m.color,
        before=m.before,
        after=m.after,
        swing=m.swing,
        best=m.best,
        result=m.result,
        clock=m.clock,
        at_ms=at_ms,
    )


def trace_point(tp: TracePoint) -> schema.TracePoint:
    """Both ratings after one move: the calibrated estimate at the top level
    (null, and ``early``, without a model), Algorithm 4 nested."""
    pr, c, f = tp.perceived, tp.calibrated, tp.form
    return schema.TracePoint(
        ply=tp.ply,
        rating=None if c is None else c.rating,
        low=None if c is None else c.low,
        high=None if c is None else c.high,
        early=True if c is None else c.early,
        form=None if f is None else schema.TraceForm(rating=f.rating, low=f.low, high=f.high),
        algorithm4=schema.TraceAlgorithm4(
            rating=pr.rating,
            low=pr.low,
            high=pr.high,
            difference=pr.difference,
            bounded=pr.bounded,
        ),
    )


def head_to_head(h: HeadToHead | None) -> schema.HeadToHead | None:
    """Algorithm 1, White against Black (the ledger computes it in that order)."""
    if h is None:
        return None
    return schema.HeadToHead(
        white_expected=h.expected,
        black_expected=1.0 - h.expected,
        difference=h.difference,
        low=h.low,
        high=h.high,
        bounded=h.bounded,
    )


def clocks(c: Clocks) -> schema.Clocks:
    return schema.Clocks(
        white=c.white,
        black=c.black,
        running=c.running,
        white_time_trouble=c.white_time_trouble,
        black_time_trouble=c.black_time_trouble,
        time_trouble_below=c.time_trouble_below,
    )


def ply(
    p: PlyInfo,
    chess960: bool = False,
    wdl_model: str | None = None,
    wdl_fallback: bool = False,
) -> schema.Ply:
    return schema.Ply(
        ply=p.ply,
        san=p.san,
        uci=p.uci,
        color=p.color,
        clock=p.clock,
        spent=p.spent,
        eval=eval_info(
            p.eval,
            p.wdl,
            p.fen,
            chess960,
            engine_wdl=p.engine_wdl,
            wdl_model=wdl_model,
            wdl_fallback=wdl_fallback,
        ),
        gain=p.gain,
    )


def _wdl_source(game: BoardGame) -> tuple[str | None, bool]:
    m = game.wdl_model
    return (None, False) if m is None else (m.name, game.wdl_fallback)


def board_state(
    game: BoardGame,
    *,
    engine: str,
    match: schema.MatchOdds | None = None,
) -> schema.BoardState:
    """Everything an overlay needs about one board (the ``snapshot`` message body)."""
    c960 = game.chess960
    name, fallback = _wdl_source(game)
    return schema.BoardState(
        board_id=game.board_id,
        tournament=game.event,
        round=game.round,
        board=game.board,
        white=player(game.white),
        black=player(game.black),
        result=game.result,
        status=game.status,
        start_fen=game.start_fen if game.custom_start or c960 else None,
        fen=game.fen,
        moves=[ply(p, c960, name, fallback) for p in game.moves()],
        eval=eval_info(
            game.current_eval,
            game.current_wdl,
            game.fen,
            c960,
            engine_wdl=game.engine_wdl_at(game.plies),
            wdl_model=name,
            wdl_fallback=fallback,
        ),
        start_eval=eval_info(
            game.start_eval,
            game.start_wdl,
            game.start_fen,
            c960,
            engine_wdl=game.engine_wdl_at(0),
            wdl_model=name,
            wdl_fallback=fallback,
        ),
        white_perceived=_perceived_of(game, "white"),
        black_perceived=_perceived_of(game, "black"),
        white_form=_form_of(game, "white"),
        black_form=_form_of(game, "black"),
        white_algorithm4=algorithm4(game.scoring.perceived("white")),
        black_algorithm4=algorithm4(game.scoring.perceived("black")),
        **_accuracies(game.accuracy()),
        white_trace=[trace_point(tp) for tp in game.scoring.trace("white")],
        black_trace=[trace_point(tp) for tp in game.scoring.trace("black")],
        head_to_head=head_to_head(game.scoring.head_to_head()),
        clocks=clocks(game.clocks),
        match=match,
        engine=engine,
        engine_rating=game.engine_rating,
        seq=game.seq,
        errors=game.errors,
    )


def board_summary(game: BoardGame) -> schema.BoardSummary:
    """One line of the board list (``hello`` / ``boards`` messages, ``/api/boards``)."""
    name, fallback = _wdl_source(game)
    return schema.BoardSummary(
        board_id=game.board_id,
        tournament=game.event,
        round=game.round,
        board=game.board,
        white=player(game.white),
        black=player(game.black),
        result=game.result,
        plies=game.plies,
        eval=eval_info(
            game.current_eval,
            game.current_wdl,
            game.fen,
            game.chess960,
            engine_wdl=game.engine_wdl_at(game.plies),
            wdl_model=name,
            wdl_fallback=fallback,
        ),
        white_perceived=_perceived_of(game, "white"),
        black_perceived=_perceived_of(game, "black"),
        white_form=_form_of(game, "white"),
        black_form=_form_of(game, "black"),
        white_algorithm4=algorithm4(game.scoring.perceived("white")),
        black_algorithm4=algorithm4(game.scoring.perceived("black")),
    )


def update(u: BoardUpdate, *, match: schema.MatchOdds | None = None) -> schema.Update:
    """A core update as the ``update`` message (its ``seq`` is the core's)."""
    chess960 = u.chess960
    return schema.Update(
        board_id=u.board_id,
        seq=u.seq,
        truncate_to=u.truncate_to,
        ply=None if u.ply is None else ply(u.ply, chess960, u.wdl_model, u.wdl_fallback),
        fen=u.fen,
        eval=eval_info(
            u.eval,
            u.wdl,
            u.fen,
            chess960,
            engine_wdl=u.engine_wdl,
            wdl_model=u.wdl_model,
            wdl_fallback=u.wdl_fallback,
        ),
        white_perceived=perceived(u.white_calibrated, u.rating_range, u.scale, u.white_label),
        black_perceived=perceived(u.black_calibrated, u.rating_range, u.scale, u.black_label),
        white_form=perceived(u.white_form, u.rating_range, u.scale, u.white_label),
        black_form=perceived(u.black_form, u.rating_range, u.scale, u.black_label),
        white_algorithm4=algorithm4(u.white_perceived),
        black_algorithm4=algorithm4(u.black_perceived),
        **_accuracies(u.accuracy),
        white_points=[trace_point(tp) for tp in u.white_points],
        black_points=[trace_point(tp) for tp in u.black_points],
        head_to_head=head_to_head(u.head_to_head),
        clocks=clocks(u.clocks),
        match=match,
        result=u.result,
        status=u.status,
    )
