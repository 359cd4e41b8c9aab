"""Whose evaluations a batch run reads, and what is picked for them: the
engine rating r_e of Algorithm 4, the calibrated perceived-rating model and
its rating scale, and each game's human W/D/L model.

Evaluations come from an engine (its name and search limit) or from a PGN's
``[%eval]`` comments, whose ``Annotator`` tag may name the engine and limit
that made them (``Stockfish 15.1 depth 10``); the models of that engine and
limit then read them, as ``livegain serve`` picks them for its engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from livegain.batch.annotated import annotator_engine
from livegain.core.elo import PAPER_ENGINE_RATING
from livegain.models.engine import PAPER_SOURCE

if TYPE_CHECKING:
    from livegain.core.human_wdl import HumanWdlModel
    from livegain.core.perceived import PerceivedModel


class EvalSource(NamedTuple):
    """Whose evaluations the games carry, as the model files name sources:
    ``evals`` "engine" (with the engine's name and limit) or "pgn"
    (lichess's ``[%eval]`` comments, engine unknown)."""

    evals: str
    engine: str | None
    limit: str | None
    #: where the engine and limit came from ("" in engine mode, else the tag)
    via: str = ""


def eval_source(
    evals: str,
    headers: Mapping[str, str],
    engine_name: str | None = None,
    limit: str | None = None,
) -> EvalSource:
    """The evaluation source of a run: with ``evals`` "engine", the engine
    that ran (``engine_name``) and its ``limit``; with "pgn", the engine and
    limit the first game's ``Annotator`` tag (``headers``) names
    (:func:`~livegain.batch.annotated.annotator_engine`), else lichess's
    evaluations."""
    if evals == "engine":
        return EvalSource("engine", engine_name, limit)
    named = annotator_engine(headers)
    if named is None:
        return EvalSource("pgn", None, None)
    return EvalSource("engine", named[0], named[1], " (the file's Annotator tag)")


def default_scale(headers: Mapping[str, str]) -> tuple[str, str]:
    """(rating scale, why) for the perceived-rating model when none is asked
    for (:func:`~livegain.core.perceived.scale_of_tags`)."""
    from livegain.core.perceived import scale_of_tags

    if scale_of_tags(headers) == "lichess":
        return "lichess", "default: the Site tag is a URL (a game played online)"
    return "fide", "default: over-the-board games (no URL in the Site tag)"


def default_engine_rating(source: EvalSource, given: float | None = None) -> tuple[float, str]:
    """(r_e, where it came from): ``given`` (``--engine-rating``), else the
    calibration of the source's engine at its limit, as ``livegain serve``
    picks it (the paper's for lichess's evaluations, or without one)."""
    if given is not None:
        return float(given), "--engine-rating"
    if source.evals == "pgn":
        return PAPER_ENGINE_RATING, PAPER_SOURCE
    from livegain.models.engine import choose_engine_rating

    return choose_engine_rating(source.engine, source.limit, via=source.via)


def perceived_model(
    source: EvalSource, path: str | None = None, scale: str | None = None
) -> tuple[PerceivedModel | None, str]:
    """The calibrated model for these evaluations (as ``livegain serve`` picks
    it for its engine) on the rating ``scale``, from the shipped file or
    ``path``, and a line saying which and why (or why there is none)."""
    from livegain.models.perceived import pick_perceived_model

    return pick_perceived_model(source.evals, source.engine, source.limit, path, scale)


def other_annotators(games: Iterable[Mapping[str, str]], source: EvalSource) -> int:
    """How many games (their tags) name another engine or limit in their
    Annotator tag than the one the file is read with."""
    return sum(
        annotator_engine(headers) not in (None, (source.engine, source.limit)) for headers in games
    )


class WdlModels:
    """The human W/D/L model of each game
    (:data:`livegain.batch.game_analysis.WdlChooser`): its kind from ``kind``
    (``--kind``), else from its tags (:func:`~livegain.core.human_wdl.kind_of_tags`);
    the model of this evaluation source and kind, picked once per kind.
    ``used`` keeps each kind's (model, why, games)."""

    def __init__(self, source: EvalSource, kind: str | None, path: str | None = None) -> None:
        self.source = source
        self.kind = kind
        self.path = path
        self.used: dict[str, tuple[HumanWdlModel | None, str, int]] = {}

    def __call__(self, headers: Mapping[str, str]) -> tuple[str, HumanWdlModel | None]:
        from livegain.core.human_wdl import kind_of_tags

        kind = self.kind or kind_of_tags(headers)
        kept = self.used.get(kind)
        if kept is None:
            from livegain.models.wdl import pick_wdl_model

            s = self.source
            model, why = pick_wdl_model(s.evals, kind, s.engine, s.limit, self.path)
            kept = (model, why, 0)
        self.used[kind] = (kept[0], kept[1], kept[2] + 1)
        return kind, kept[0]

    def to_json(self) -> list[dict[str, Any]]:
        """One entry per kind of game met: the model's name (null: none, the
        engine's or the win-chance curve's W/D/L is shown), why, and how many
        games."""
        return [
            {
                "kind": kind,
                "model": None if model is None else model.name,
                "choice": why,
                "games": games,
            }
            for kind, (model, why, games) in sorted(self.used.items())
        ]

    def describe(self) -> str:
        """One line for the readable report."""
        parts = []
        for kind, (model, why, games) in sorted(self.used.items()):
            what = (
                f"human model {model.name}"
                if model is not None
                else "the engine's, else the win-chance curve's"
            )
            parts.append(f"{kind} ({games} game{'s' if games != 1 else ''}): {what}; {why}")
        return "W/D/L: " + " | ".join(parts) if parts else "W/D/L: no game"
