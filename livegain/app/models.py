"""Which models the numbers people see come from: the engine's rating r_e
(Algorithm 4), the calibrated perceived-rating model of a rating scale, and
the human win/draw/loss model of a kind of game, chosen for the engine and
search limit at start, each with a line saying why."""

from __future__ import annotations

import structlog

from livegain.config import Settings
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.perceived import PerceivedModel
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.engine.pool import SearchLimit

log = structlog.get_logger("livegain.service")


def engine_rating_for(settings: Settings, engine_name: str, limit: SearchLimit) -> float:
    """The configured r_e, else the shipped calibration, else the paper's 2860.

    Algorithm 4 uses the engine as a single peak at 0 (no engine histogram),
    as ``livegain analyze`` does, so that live and batch figures agree.
    """
    if settings.engine.rating is not None:
        return float(settings.engine.rating)
    from livegain.calibration import default_engine_rating

    try:
        return float(default_engine_rating(engine_name, limit))
    except Exception as exc:  # a broken calibration file must not stop the service
        log.warning("calibration_unavailable", error=str(exc))
        return PAPER_ENGINE_RATING


#: The rating scale of boards whose event and feed name none.
DEFAULT_SCALE = "fide"
SCALES = ("fide", "lichess")
#: Words in a model choice's line that say it is not the model fitted for it.
_FALLBACK_WORDS = ("not validated", "nearest", "no model", "no calibrated", "scale, no")


def perceived_model_for(
    settings: Settings,
    engine_name: str | None,
    limit: SearchLimit | str | None,
    scale: str | None = None,
) -> tuple[PerceivedModel | None, str]:
    """The calibrated perceived-rating model for this engine, limit and
    rating ``scale`` ("fide", "lichess"), and a line saying why
    (``livegain.calibration.find_perceived_model``: the exact model, else the
    nearest depth's or the other scale's, said so).

    From ``engine.perceived_model`` when that is set, else from the shipped
    model file. A missing or broken file does not stop the service: it runs
    with Algorithm 4 only (``perceived: null``) and says why.
    """
    from livegain.calibration import pick_perceived_model

    return pick_perceived_model(
        "engine", engine_name or None, limit, settings.engine.perceived_model, scale
    )


def wdl_model_for(
    settings: Settings,
    engine_name: str | None,
    limit: SearchLimit | str | None,
    kind: str,
) -> tuple[HumanWdlModel | None, str]:
    """The human win/draw/loss model for this engine, limit and kind of game,
    and a line saying why (``livegain.wdl_models.find_wdl_model``).

    From ``engine.wdl_model`` when that is set, else from the shipped model
    file. A missing or broken file does not stop the service: the engine's
    own W/D/L is shown (``wdl_model: null``) and the line says why.
    """
    from livegain.wdl_models import pick_wdl_model

    return pick_wdl_model("engine", kind, engine_name or None, limit, settings.engine.wdl_model)


def is_fallback(why: str) -> bool:
    """Whether a model choice's line says the model is not the one fitted for
    what was asked (another depth, kind, scale or evaluation source)."""
    return any(w in why for w in _FALLBACK_WORDS)
