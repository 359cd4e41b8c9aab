"""The analysis report as JSON (docs/analyze.md documents its keys), and its
document written to a stream game by game as the games are analysed.

A report of more than :data:`COMPACT_JSON_GAMES` games is written without
indentation (Python's C encoder), one game at a time: the document is the
same text ``json.dumps`` gives for the whole report, never held whole.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from livegain.batch.game_analysis import GameReport, PlayerGame
from livegain.batch.player_pool import PlayerReport
from livegain.batch.tournament_fit import TournamentReport
from livegain.core.accuracy import PlayerAccuracy
from livegain.core.perceived import CalibratedRating, PerceivedModel
from livegain.core.rating import HeadToHead, PerceivedRating
from livegain.core.tournament import EngineStrength
from livegain.core.wdl import Wdl

if TYPE_CHECKING:
    from livegain.batch.analysis import AnalysisReport

#: More games than this: the JSON document is written without indentation
#: (Python's C encoder: several times faster, and a third smaller;
#: docs/analyze.md), and streamed game by game.
COMPACT_JSON_GAMES = 200


def report_json(report: AnalysisReport) -> dict[str, Any]:
    """The whole report as one JSON object."""
    return {
        **report_head_json(
            report.engine_rating, report.engine_model, report.engine_name, report.model
        ),
        "games": [game_json(g, report.model) for g in report.games],
        **report_tail_json(report),
    }


def report_head_json(
    engine_rating: float, engine_model: str, engine_name: str | None, model: PerceivedModel | None
) -> dict[str, Any]:
    """The keys before ``games``: the engine and the calibrated model, known
    before any game is analysed."""
    return {
        "engine": {"rating": _r(engine_rating), "model": engine_model, "name": engine_name},
        "calibration": model_json(model),
    }


def report_tail_json(report: AnalysisReport) -> dict[str, Any]:
    """The keys after ``games``: the players, the tournament and the games skipped."""
    return {
        "players": [_player_json(p, report.model) for p in report.players],
        "tournament": _tournament_json(report.tournament) if report.tournament else None,
        "skipped": list(report.skipped),
    }


class JsonReportWriter:
    """A report's JSON document written to ``out`` as its games come
    (:meth:`game`), then closed by the keys after them (:meth:`finish`).

    Up to ``compact_above`` games (:data:`COMPACT_JSON_GAMES`) are held and
    written at the end, indented (``json.dumps(..., indent=2)``); from one
    more, the document is written compact, the games held so far first and
    each next one as it comes: the same text as ``json.dumps`` of the whole
    object, in the same key order.
    """

    def __init__(self, out: TextIO, head: dict[str, Any], compact_above: int | None = None) -> None:
        self._out = out
        self._head = head
        self._compact_above = COMPACT_JSON_GAMES if compact_above is None else compact_above
        self._held: list[dict[str, Any]] | None = []
        self._games = 0

    @property
    def compact(self) -> bool:
        """Whether the document is being written compact (more games than the threshold)."""
        return self._held is None

    def game(self, game: dict[str, Any]) -> None:
        """One more game's JSON object, in the report's order."""
        held = self._held
        if held is None:
            self._write_game(game)
            return
        held.append(game)
        if len(held) > self._compact_above:
            self._held = None
            head = _dumps(self._head)
            self._out.write(head[:-1] + (", " if self._head else "") + '"games": [')
            for g in held:
                self._write_game(g)

    def finish(self, tail: dict[str, Any]) -> None:
        """The keys after ``games``, then the end of the document and a newline."""
        held = self._held
        if held is not None:
            data = {**self._head, "games": held, **tail}
            self._out.write(json.dumps(data, indent=2, default=str) + "\n")
            return
        rest = _dumps(tail)
        self._out.write("]" + (", " + rest[1:] if tail else "}") + "\n")

    def _write_game(self, game: dict[str, Any]) -> None:
        self._out.write((", " if self._games else "") + _dumps(game))
        self._games += 1


def _dumps(data: Any) -> str:
    return json.dumps(data, default=str)


def _r(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(float(x), digits)


def perceived_json(p: PerceivedRating) -> dict[str, Any]:
    return {
        "rating": _r(p.rating),
        "low": _r(p.low),
        "high": _r(p.high),
        "difference": _r(p.difference),
        "expected": _r(p.expected, 4),
        "moves": p.moves,
        "bounded": p.bounded,
    }


def calibrated_json(c: CalibratedRating | None) -> dict[str, Any] | None:
    """The calibrated estimate: ``rating``, ``low``, ``high`` (95 %), ``moves``,
    ``early`` (too few moves to show a number), ``score`` and ``model``."""
    if c is None:
        return None
    return {
        "rating": _r(c.rating),
        "low": _r(c.low),
        "high": _r(c.high),
        "moves": c.moves,
        "early": c.early,
        "score": _r(c.score),
        "model": c.model,
    }


def estimate_json(
    c: CalibratedRating | None, model: PerceivedModel | None, rating: float | None
) -> dict[str, Any] | None:
    """:func:`calibrated_json` with ``label`` (the model's
    :meth:`~PerceivedModel.range_label` of ``rating``: None inside the range
    it was fitted on, ``extrapolated`` above, its below-label under it) and
    ``scale`` (the model's rating scale, ``fide`` or ``lichess``)."""
    out = calibrated_json(c)
    if out is None or model is None:
        return out
    out["label"] = model.range_label(rating)
    out["scale"] = model.scale
    return out


def perceived_label_json(
    c: CalibratedRating | None, model: PerceivedModel | None
) -> dict[str, Any] | None:
    """The perceived rating, labelled by where its own value lies."""
    return estimate_json(c, model, None if c is None else c.rating)


def wdl_json(w: Wdl | None) -> dict[str, int] | None:
    """W/D/L in the wire's shape: per mille, White's view."""
    if w is None:
        return None
    return {"win": w[0], "draw": w[1], "loss": w[2]}


def model_json(m: PerceivedModel | None) -> dict[str, Any] | None:
    """Which calibrated model the report used, and where it came from."""
    if m is None:
        return None
    return {
        "model": m.name,
        "min_moves": m.min_moves,
        "rating_low": m.rating_low,
        "rating_high": m.rating_high,
        "scale": m.scale,
        **dict(m.provenance),
        # the opening table whose prior the point reads (None: the moves alone)
        "opening": None
        if m.opening is None
        else {"name": m.opening.name, "file": m.opening.file, **dict(m.opening.provenance)},
    }


def head_to_head_json(h: HeadToHead) -> dict[str, Any]:
    return {
        "expected": _r(h.expected, 4),
        "expected_other": _r(h.expected_other, 4),
        "difference": _r(h.difference),
        "low": _r(h.low),
        "high": _r(h.high),
        "bounded": h.bounded,
    }


def accuracy_json(a: PlayerAccuracy | None) -> dict[str, Any] | None:
    """A player's accuracy in percent (None: no move counted)."""
    if a is None or a.moves == 0:
        return None
    return {
        "overall": a.overall,
        "moves": a.moves,
        "opening": a.opening,
        "middlegame": a.middlegame,
        "endgame": a.endgame,
    }


def _player_game_json(p: PlayerGame, model: PerceivedModel | None) -> dict[str, Any]:
    return {
        "name": p.name,
        "elo": p.elo,
        "accuracy": accuracy_json(p.accuracy),
        "perceived": perceived_label_json(p.calibrated, model),
        "form": estimate_json(p.form, model, p.elo),
        "algorithm4": perceived_json(p.perceived),
        "mean_gain": _r(p.mean_gain, 2),
        "effective_moves": _r(p.effective_moves, 2),
        "trace": [
            {
                "ply": t.ply,
                "move": t.move,
                "gain": t.gain,
                "perceived": calibrated_json(t.calibrated),
                "algorithm4": perceived_json(t.perceived),
            }
            for t in p.trace
        ],
    }


def game_json(g: GameReport, model: PerceivedModel | None = None) -> dict[str, Any]:
    h = g.headers
    return {
        "number": g.number,
        "event": h.get("Event"),
        "site": h.get("Site"),
        "date": h.get("Date"),
        "round": h.get("Round"),
        "result": h.get("Result"),
        "start_score": g.start_score,
        "kind": g.kind,
        "wdl_model": g.wdl_model,
        "white": _player_game_json(g.white, model),
        "black": _player_game_json(g.black, model),
        "head_to_head": head_to_head_json(g.head_to_head),
        "plies": [
            {
                "ply": r.ply,
                "move": r.move,
                "mover": r.mover,
                "score": r.score,
                "gain": r.gain,
                "wdl": {"win": r.wdl[0], "draw": r.wdl[1], "loss": r.wdl[2]},
                "engine_wdl": wdl_json(r.engine_wdl),
            }
            for r in g.plies
        ],
    }


def _player_json(p: PlayerReport, model: PerceivedModel | None = None) -> dict[str, Any]:
    return {
        "name": p.name,
        "elo": _r(p.elo),
        "games": p.games,
        "accuracy": accuracy_json(p.accuracy),
        "perceived": perceived_label_json(p.calibrated, model),
        "form": estimate_json(p.form, model, p.elo),
        "algorithm4": perceived_json(p.perceived),
        "interval_method": p.interval_method,
        "mean_gain": _r(p.mean_gain, 2),
        "tournament": _r(p.tournament),
        "tournament_low": _r(p.tournament_low),
        "tournament_high": _r(p.tournament_high),
        "tournament_relative": _r(p.tournament_relative),
    }


def _engine_json(e: EngineStrength | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"rating": _r(e.rating), "low": _r(e.low), "high": _r(e.high), "players": e.players}


def _tournament_json(t: TournamentReport) -> dict[str, Any]:
    return {
        "pairing": t.method,
        "pairs": [
            {"a": p.a, "b": p.b, "games": p.games, **head_to_head_json(p.head_to_head)}
            for p in t.pairs
        ],
        "ratings": {
            name: {
                "actual": _r(r.actual),
                "estimated": _r(r.estimated),
                "relative": _r(r.relative),
                "component": r.component,
                "anchored": r.anchored,
                "opponents": r.opponents,
            }
            for name, r in t.fit.ratings.items()
        },
        "converged": t.fit.converged,
        "components": t.fit.components,
        "engine_by_elo": _engine_json(t.engine_by_elo),
        "engine_by_estimate": _engine_json(t.engine_by_estimate),
    }
