"""One game analysed: Algorithms 1 and 4 over its moves, the move-by-move
traces, the calibrated estimate and form, and the W/D/L after every ply.

The figures come from the same :class:`~livegain.core.ledger.GameLedger` that
the live service feeds ply by ply, so a finished live game and a batch
analysis of it agree exactly. docs/maths.md documents the methods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import chess

from livegain.batch.annotated import AnnotatedGame
from livegain.core.accuracy import Phase, PlayerAccuracy, game_accuracy, phase_of, pieces_on
from livegain.core.evaluation import CLIP_CP, Evaluation
from livegain.core.histogram import GainHistogram
from livegain.core.human_wdl import CLASSICAL_OTB, HumanWdlModel
from livegain.core.ledger import GameLedger
from livegain.core.perceived import CalibratedRating, MoveClasses, PerceivedModel
from livegain.core.rating import HeadToHead, PerceivedRating
from livegain.core.wdl import Wdl, position_wdl

#: The W/D/L model of a game from its PGN tags: (kind of game, the human
#: model of that kind, None to show today's W/D/L: the engine's, else the
#: win-chance curve of ``core.wdl``).
WdlChooser = Callable[[Mapping[str, str]], tuple[str, HumanWdlModel | None]]


@dataclass(frozen=True)
class TraceEntry:
    """The mover's perceived rating right after one of his moves (Figure 6)."""

    ply: int
    move: str
    gain: int
    perceived: PerceivedRating
    calibrated: CalibratedRating | None = None


@dataclass
class PlayerGame:
    """One player in one game: Algorithm 4 over his moves of that game
    (``perceived``) and the calibrated estimate (``calibrated``, with a model)."""

    name: str
    color: Literal["white", "black"]
    elo: int | None
    perceived: PerceivedRating
    mean_gain: float | None
    trace: list[TraceEntry]
    histogram: GainHistogram
    score_sum: float
    effective_moves: float
    calibrated: CalibratedRating | None = None
    move_classes: list[int] = field(default_factory=list)
    #: the sum of his moves' scores, hundredths of a point (0 without a model)
    centi_sum: int = 0
    #: his official rating updated by his moves of this game (None without a
    #: rating or a model with forward lines)
    form: CalibratedRating | None = None
    #: his accuracy (lichess's method), overall and by phase
    accuracy: PlayerAccuracy | None = None


@dataclass
class PlyRow:
    """One ply: ``wdl`` is the W/D/L shown after it (the human model's when
    there is one, else the engine's, else the win-chance curve's),
    ``engine_wdl`` the engine's own (None when it gave none); both per mille,
    White's view."""

    ply: int
    move: str
    mover: Literal["white", "black"]
    score: int
    gain: int | None
    wdl: Wdl = (0, 1000, 0)
    engine_wdl: Wdl | None = None


@dataclass
class GameReport:
    number: int
    headers: dict[str, str]
    white: PlayerGame
    black: PlayerGame
    head_to_head: HeadToHead
    plies: list[PlyRow]
    start_score: int | None
    #: the kind of game its W/D/L is read as, and the human model's name
    #: (None: no human model, today's W/D/L)
    kind: str = CLASSICAL_OTB
    wdl_model: str | None = None


def game_move_classes(game: AnnotatedGame, classes: MoveClasses) -> dict[str, list[int]]:
    """The classes of each side's counted moves (for fitting a model)."""
    out: dict[str, list[int]] = {"white": [], "black": []}
    skip = max(game.counted_from_ply, 1) - 1
    white = game.first_mover_is_white
    for ply in range(1, len(game.sans) + 1):
        if ply > skip:
            sign = 1 if white else -1
            before, after = sign * game.scores[ply - 1], sign * game.scores[ply]
            out["white" if white else "black"].append(classes.of(ply, before, after))
        white = not white
    return out


def _pgn_evaluation(score: int) -> Evaluation:
    """A ``[%eval]`` score as an evaluation: +/-39.00 (a mate, or more than all
    the material) is decisive, as an engine's mate score is."""
    if abs(score) >= CLIP_CP:
        return Evaluation(cp=score, mate=1 if score > 0 else -1)
    return Evaluation(cp=score)


def game_phases(game: AnnotatedGame) -> list[Phase] | None:
    """The phase of each move (:func:`~livegain.core.accuracy.phase_of`),
    from the positions the game's moves reach; None when a move cannot be read.
    The pieces are counted on the board itself (no FEN is written)."""
    variant = game.headers.get("Variant", "").lower()
    try:
        board = chess.Board(
            game.start_fen or chess.STARTING_FEN,
            chess960="960" in variant or "fischer" in variant,
        )
        phases = []
        for ply, uci in enumerate(game.ucis, start=1):
            phases.append(phase_of(ply, pieces_on(board)))
            board.push(chess.Move.from_uci(uci))
    except (ValueError, IndexError, AssertionError):
        return None
    return phases if len(phases) == len(game.sans) else None


def analyze_game(
    game: AnnotatedGame,
    engine_rating: float,
    engine: GainHistogram | None = None,
    number: int = 1,
    model: PerceivedModel | None = None,
    wdl_model: HumanWdlModel | None = None,
    kind: str = CLASSICAL_OTB,
) -> GameReport:
    """Algorithms 1 and 4 for one game, with the move-by-move traces, the
    calibrated estimate and form when a ``model`` is given, and the W/D/L
    after every ply: ``wdl_model``'s (the human model, from the evaluation,
    the ply and the players' Elo tags) when given, else the engine's, else
    the win-chance curve's (:func:`~livegain.core.wdl.position_wdl`)."""
    if len(game.scores) != len(game.sans) + 1:
        raise ValueError(
            f"game {number}: {len(game.scores)} scores for {len(game.sans)} moves "
            "(need one per position, the start included)"
        )
    skip = max(game.counted_from_ply, 1) - 1
    # the ledger starts at the first counted ply
    first_white = game.first_mover_is_white == (skip % 2 == 0)
    ledger = GameLedger(
        engine_rating,
        engine=engine,
        first_mover_is_white=first_white,
        model=model,
        first_ply=skip + 1,
        opening_moves=None if game.start_fen else game.ucis[:skip],
    )
    ledger.set_start(game.scores[skip])
    traces: dict[str, list[TraceEntry]] = {"white": [], "black": []}
    plies: list[PlyRow] = []
    white = game.first_mover_is_white
    evaluations = game.evaluations
    white_elo, black_elo = game.white_elo, game.black_elo
    for ply in range(1, len(game.sans) + 1):
        mover: Literal["white", "black"] = "white" if white else "black"
        g: int | None = None
        if ply > skip:
            step = ledger.push(game.scores[ply], move=game.ucis[ply - 1])
            g = step.gain
            traces[mover].append(
                TraceEntry(ply, game.move_label(ply), g, step.perceived, step.calibrated)
            )
        # the position after this ply: the other side is to move
        ev = evaluations[ply] if evaluations is not None else _pgn_evaluation(game.scores[ply])
        shown = (
            wdl_model.wdl(ev, ply, white_elo, black_elo, white_to_move=not white)
            if wdl_model is not None
            else position_wdl(ev)
        )
        plies.append(PlyRow(ply, game.move_label(ply), mover, game.scores[ply], g, shown, ev.wdl))
        white = not white

    phases = game_phases(game)
    accuracy = game_accuracy(
        game.scores[skip:], first_white, None if phases is None else phases[skip:]
    )

    def side(color: Literal["white", "black"]) -> PlayerGame:
        hist = ledger.histogram(color).copy()
        s1, denom = ledger.score_sum(color)
        classes = ledger.move_classes(color)
        elo = game.white_elo if color == "white" else game.black_elo
        centi = sum(model.centi_score(c) for c in classes) if model is not None else 0
        return PlayerGame(
            name=game.white if color == "white" else game.black,
            color=color,
            elo=elo,
            perceived=ledger.perceived(color),
            mean_gain=hist.mean() if hist.n else None,
            trace=traces[color],
            histogram=hist,
            score_sum=s1 / denom,
            effective_moves=ledger.effective_moves(color),
            calibrated=ledger.calibrated(color),
            move_classes=classes,
            centi_sum=centi,
            form=model.form([(len(classes), centi)], elo) if model is not None else None,
            accuracy=accuracy.of(color),
        )

    return GameReport(
        number=number,
        headers=dict(game.headers),
        white=side("white"),
        black=side("black"),
        head_to_head=ledger.head_to_head(),
        plies=plies,
        start_score=game.scores[0] if skip == 0 else None,
        kind=kind,
        wdl_model=None if wdl_model is None else wdl_model.name,
    )
