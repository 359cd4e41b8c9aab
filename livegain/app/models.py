"""Which models the numbers people see come from: the engine's rating r_e
(Algorithm 4), the calibrated perceived-rating model of a rating scale, and
the human win/draw/loss model of a kind of game, chosen for the engine and
search limit at start, each with a line saying why."""

from __future__ import annotations

import structlog

from livegain.app.live_standings import event_key
from livegain.config import FeedModels, Settings
from livegain.core.board.updates import BoardModels
from livegain.core.human_wdl import (
    CLASSICAL_OTB,
    KINDS,
    HumanWdlModel,
    RatingsPrior,
    kind_of_time_control,
)
from livegain.core.perceived import PerceivedModel
from livegain.core.snapshot import GameSnapshot
from livegain.engine.search import SearchLimit

log = structlog.get_logger("livegain.models")


def engine_rating_for(settings: Settings, engine_name: str, limit: SearchLimit) -> float:
    """The configured r_e, else the shipped calibration, else the paper's 2860.

    Algorithm 4 uses the engine as a single peak at 0 (no engine histogram),
    as ``livegain analyze`` does, so that live and batch figures agree.
    """
    from livegain.models.engine import choose_engine_rating

    rating, why = choose_engine_rating(engine_name, limit, settings.engine.rating)
    if "unreadable" in why:  # a broken calibration file must not stop the service
        log.warning("calibration_unavailable", engine=engine_name, why=why)
    return rating


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
    (``livegain.models.perceived.find_perceived_model``: the exact model, else the
    nearest depth's or the other scale's, said so).

    From ``engine.perceived_model`` when that is set, else from the shipped
    model file. A missing or broken file does not stop the service: it runs
    with Algorithm 4 only (``perceived: null``) and says why.
    """
    from livegain.models.perceived import pick_perceived_model

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
    and a line saying why (``livegain.models.wdl.find_wdl_model``).

    From ``engine.wdl_model`` when that is set, else from the shipped model
    file. A missing or broken file does not stop the service: the engine's
    own W/D/L is shown (``wdl_model: null``) and the line says why.
    """
    from livegain.models.wdl import pick_wdl_model

    return pick_wdl_model("engine", kind, engine_name or None, limit, settings.engine.wdl_model)


def is_fallback(why: str) -> bool:
    """Whether a model choice's line says the model is not the one fitted for
    what was asked (another depth, kind, scale or evaluation source)."""
    return any(w in why for w in _FALLBACK_WORDS)


class ModelChoice:
    """The models of a running service: loaded once at start for its engine
    and search limit (:meth:`pick`), then looked up per board from its
    snapshot (:meth:`models_for`). ``perceived_model`` / ``wdl_model``: one
    model for every board instead (given, as tests and benchmarks do)."""

    def __init__(
        self,
        settings: Settings,
        perceived_model: PerceivedModel | None = None,
        wdl_model: HumanWdlModel | None = None,
    ) -> None:
        self.settings = settings
        self.perceived_model = perceived_model
        self.perceived_model_why = (
            f"model {perceived_model.name} (given)" if perceived_model is not None else "not yet"
        )
        self._given_wdl = wdl_model
        # Per rating scale and kind of game: (model, why), picked at start.
        self.perceived_models: dict[str, tuple[PerceivedModel | None, str]] = {}
        self.wdl_models: dict[str, tuple[HumanWdlModel | None, str]] = {}
        self.feed_models: dict[str, FeedModels] = {}
        """Per feed name, its configured kind and scale (set when the feeds are made)."""
        self._event_models = {
            event_key(e.name): FeedModels(kind=e.kind, scale=e.scale) for e in settings.events
        }
        self._board_models: dict[tuple[object, ...], BoardModels] = {}

    def default_wdl(self) -> tuple[HumanWdlModel | None, str]:
        """The model of the default kind (classical over the board), and why."""
        return self.wdl_models.get(CLASSICAL_OTB, (self._given_wdl, "not yet"))

    def perceived_model_line(self) -> str:
        """Which calibrated model the perceived ratings come from, for people."""
        if self.perceived_model is None:
            return f"Algorithm 4 only: {self.perceived_model_why}"
        return f"calibrated, {self.perceived_model_why}"

    def wdl_model_line(self) -> str:
        """Which human W/D/L model the chances shown come from (boards of the
        default kind), for people."""
        model, why = self.default_wdl()
        if model is None:
            return f"the engine's own W/D/L: {why}"
        return f"human, {why}"

    # ------------------------------------------------------------ models

    def pick(self, engine_name: str | None, limit: SearchLimit | str | None) -> None:
        """The models of every rating scale and kind of game, once at start."""
        s = self.settings
        for scale in SCALES:
            if self.perceived_model is not None:
                self.perceived_models[scale] = (self.perceived_model, self.perceived_model_why)
            else:
                self.perceived_models[scale] = perceived_model_for(s, engine_name, limit, scale)
        default = self.perceived_models[DEFAULT_SCALE]
        self.perceived_model, self.perceived_model_why = default
        for kind in KINDS:
            if self._given_wdl is not None:
                given = self._given_wdl
                self.wdl_models[kind] = (given, f"model {given.name} (given)")
            else:
                self.wdl_models[kind] = wdl_model_for(s, engine_name, limit, kind)
        for scale, (pm, why) in self.perceived_models.items():
            log.info("perceived_model", scale=scale, model=pm.name if pm else None, why=why)
        for kind, (wm, why) in self.wdl_models.items():
            log.info("wdl_model", kind=kind, model=wm.name if wm else None, why=why)

    def models_for(self, snap: GameSnapshot) -> BoardModels:
        """A board's models, from its snapshot (pure: a lookup in what
        :meth:`_pick_models` loaded). Rating scale: its event's ``scale``,
        else its feed's, else ``fide``. Kind of game: its event's ``kind``,
        else its feed's, else its ``TimeControl`` tag's nearer kind (a
        fallback when no fitted kind matches it), else ``classical-otb``."""
        event = self._event_models.get(event_key(snap.event or ""))
        feed = self.feed_models.get(snap.source)
        scale: str = (
            (event.scale if event else None) or (feed.scale if feed else None) or DEFAULT_SCALE
        )
        kind: str | None = (event.kind if event else None) or (feed.kind if feed else None)
        exact, where = True, "configured" if kind is not None else ""
        tc = dict(snap.tags).get("TimeControl") if kind is None else None
        if kind is None and tc:
            kind, exact = kind_of_time_control(tc)
            where = f"from TimeControl {tc}" if kind is not None else ""
        if kind is None:
            kind, where = CLASSICAL_OTB, "over the board (default)"
        key = (scale, kind, exact, where)
        chosen = self._board_models.get(key)
        if chosen is None:
            perceived = self.perceived_models.get(scale, (self.perceived_model, ""))[0]
            wdl, why = self.wdl_models.get(kind, (None, "not yet"))
            fallback = not exact or is_fallback(why)
            line = f"{kind} {where}" + ("" if exact else ", the nearer fitted kind") + f": {why}"
            chosen = BoardModels(perceived, wdl, fallback, line)
            self._board_models[key] = chosen
        return chosen

    def event_prior(self, event: str) -> RatingsPrior | None:
        """The ratings-only W/D/L of an event's games not started: its
        configured kind's human model's (None: its boards' model decides)."""
        configured = self._event_models.get(event_key(event))
        kind = configured.kind if configured is not None else None
        if kind is None:
            return None
        model = self.wdl_models.get(kind, (None, ""))[0]
        return None if model is None else model.prior
