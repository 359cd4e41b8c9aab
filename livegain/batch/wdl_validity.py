"""Are the win/draw/loss chances right? The human model against the game's
result on held-out games, beside three others.

At each checked ply (20, 40, 60, 80, 100), over the held-out games that
reached it, four predictions of the result are scored:

- ``shown``: the human model (``core.human_wdl``) that the overlays show;
- ``ratings``: its ratings-only prior (the Elo expectation with the fitted
  draw model), which ignores the board;
- ``curve``: the win%-curve of the evaluation (``core.wdl.wdl_from_cp``) with
  the draw share fitted on the calibration part (kept in the model file);
- ``engine``: the engine's own W/D/L, where the games carry it (engine mode).

Scores: the mean log-loss of the result (natural log, lower is better) and
the calibration error of White's expected score (count-weighted mean
``|observed - predicted|`` over 10 equal-count bins of the prediction). Both
with the players' ratings and with them taken as unknown, and by band of the
players' mean rating.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from livegain.batch.annotated import AnnotatedGame
from livegain.batch.wdl_fit import CHECK_PLIES, ScoredGame
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.wdl import Wdl, wdl_from_cp

PREDICTORS: tuple[str, ...] = ("shown", "ratings", "curve", "engine")
#: Bins of the calibration error.
CALIBRATION_BINS = 10
#: Width of the rating bands.
BAND = 200

_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclass(frozen=True)
class WdlCase:
    """One held-out game at one ply: the four predictions and the result."""

    ply: int
    white: float | None
    black: float | None
    score: float
    predictions: dict[str, tuple[float, float, float] | None]


def scored_game(g: AnnotatedGame) -> ScoredGame | None:
    """A game with a result as the W/D/L fit and validation read it
    (evaluations in pawns, White's view; NaN before the first counted ply);
    None without a result."""
    score = _RESULTS.get(g.headers.get("Result", "*"))
    if score is None:
        return None
    first = max(g.counted_from_ply, 1) - 1
    pawns = [math.nan if k < first else s / 100.0 for k, s in enumerate(g.scores)]
    return ScoredGame(
        None if g.white_elo is None else float(g.white_elo),
        None if g.black_elo is None else float(g.black_elo),
        score,
        pawns,
        g.first_mover_is_white,
    )


def scored_games(games: Iterable[AnnotatedGame]) -> list[ScoredGame]:
    """Every game with a result (:func:`scored_game`)."""
    return [sg for sg in map(scored_game, games) if sg is not None]


def _probabilities(wdl: Wdl) -> tuple[float, float, float]:
    return (wdl[0] / 1000.0, wdl[1] / 1000.0, wdl[2] / 1000.0)


def cases(
    games: Sequence[AnnotatedGame],
    model: HumanWdlModel,
    plies: Sequence[int] = CHECK_PLIES,
    rated: bool = True,
) -> list[WdlCase]:
    """Every held-out game at every checked ply it reached (rated: both
    ratings known, taken from the tags; else the ratings are withheld)."""
    share = model.curve_draw_share if model.curve_draw_share is not None else 0.5
    out: list[WdlCase] = []
    for g in games:
        sg = scored_game(g)
        if sg is None:
            continue
        white, black = (sg.white, sg.black) if rated else (None, None)
        if rated and (white is None or black is None):
            continue
        for ply in plies:
            if ply >= len(sg.pawns) or math.isnan(sg.pawns[ply]):
                continue
            pawns = sg.pawns[ply]
            white_to_move = (ply % 2 == 0) == sg.first_mover_is_white
            engine = None
            if g.wdl is not None and ply < len(g.wdl) and g.wdl[ply] is not None:
                engine = _probabilities(g.wdl[ply])  # type: ignore[arg-type]
            out.append(
                WdlCase(
                    ply,
                    sg.white,
                    sg.black,
                    sg.score,
                    {
                        "shown": model.probabilities(pawns, ply, white, black, white_to_move),
                        "ratings": model.prior.probabilities(white, black),
                        "curve": _probabilities(wdl_from_cp(round(pawns * 100), share)),
                        "engine": engine,
                    },
                )
            )
    return out


@dataclass(frozen=True)
class WdlFigures:
    count: int
    log_loss: float
    calibration: float

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "log_loss": round(self.log_loss, 4),
            "calibration_error": round(self.calibration, 4),
        }


def _outcome(score: float) -> int:
    return 0 if score > 0.75 else (2 if score < 0.25 else 1)


def calibration_error(predicted: Sequence[float], observed: Sequence[float]) -> float:
    """Count-weighted mean |observed - predicted| expected score over 10
    equal-count bins of the prediction."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(observed, dtype=float)
    order = np.argsort(p, kind="stable")
    total = 0.0
    for part in np.array_split(order, min(CALIBRATION_BINS, len(p))):
        if len(part):
            total += len(part) * abs(float(y[part].mean()) - float(p[part].mean()))
    return total / len(p)


def figures(sel: Sequence[WdlCase], which: str) -> WdlFigures | None:
    """One predictor's figures over cases (None when it has no prediction
    for every case: the engine's W/D/L is not always known)."""
    preds = [c.predictions[which] for c in sel]
    if not sel or any(p is None for p in preds):
        return None
    probs = [p for p in preds if p is not None]
    losses = [-math.log(max(p[_outcome(c.score)], 1e-6)) for p, c in zip(probs, sel, strict=True)]
    return WdlFigures(
        len(sel),
        float(np.mean(losses)),
        calibration_error([p[0] + p[1] / 2.0 for p in probs], [c.score for c in sel]),
    )


@dataclass
class WdlReport:
    """Figures by ply (rated and unrated) and by rating band at each ply."""

    model: str
    by_ply: list[tuple[int, str, dict[str, WdlFigures | None]]] = field(default_factory=list)
    by_band: list[tuple[int, int, dict[str, WdlFigures | None]]] = field(default_factory=list)
    rated_cases: list[WdlCase] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def js(f: dict[str, WdlFigures | None]) -> dict[str, Any]:
            return {k: None if v is None else v.to_json() for k, v in f.items()}

        return {
            "model": self.model,
            "by_ply": [{"ply": p, "ratings_known": r, **js(f)} for p, r, f in self.by_ply],
            "by_band": [{"ply": p, "band": b, **js(f)} for p, b, f in self.by_band],
        }


def validate_wdl(
    games: Sequence[AnnotatedGame], model: HumanWdlModel, plies: Sequence[int] = CHECK_PLIES
) -> WdlReport:
    """The W/D/L figures of the held-out ``games``."""
    report = WdlReport(model.name)
    rated = cases(games, model, plies, rated=True)
    unrated = cases(games, model, plies, rated=False)
    report.rated_cases = rated
    for ply in plies:
        for label, pool in (("both", rated), ("unknown", unrated)):
            sel = [c for c in pool if c.ply == ply]
            if sel:
                report.by_ply.append((ply, label, {w: figures(sel, w) for w in PREDICTORS}))
        at = [c for c in rated if c.ply == ply]
        bands = sorted({int(((c.white or 0) + (c.black or 0)) / 2 // BAND) * BAND for c in at})
        for band in bands:
            sel = [c for c in at if band <= ((c.white or 0) + (c.black or 0)) / 2 < band + BAND]
            if len(sel) >= 30:
                report.by_band.append((ply, band, {w: figures(sel, w) for w in PREDICTORS}))
    if not report.by_ply:
        raise ValueError("no finished game reached a checked ply")
    return report


def write_reliability_plot(report: WdlReport, path: str, title: str) -> str:
    """Reliability diagrams (observed against predicted expected score, 10
    equal-count bins) at each checked ply, for the shown model, the
    ratings-only baseline and the win%-curve. Returns the path."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plies = sorted({c.ply for c in report.rated_cases})
    fig, axes = plt.subplots(1, len(plies), figsize=(3.2 * len(plies), 3.6), sharey=True)
    axes_list = list(np.atleast_1d(axes))
    colours = {"shown": "#1f77b4", "ratings": "#7f7f7f", "curve": "#d62728", "engine": "#9467bd"}
    for ax, ply in zip(axes_list, plies, strict=True):
        sel = [c for c in report.rated_cases if c.ply == ply]
        for which in ("shown", "ratings", "curve", "engine"):
            preds = [c.predictions[which] for c in sel]
            if any(p is None for p in preds):
                continue
            e = np.array([p[0] + p[1] / 2.0 for p in preds if p is not None])
            y = np.array([c.score for c in sel])
            order = np.argsort(e, kind="stable")
            parts = [p for p in np.array_split(order, CALIBRATION_BINS) if len(p)]
            xs = [float(e[p].mean()) for p in parts]
            ys = [float(y[p].mean()) for p in parts]
            ax.plot(xs, ys, marker="o", ms=3, color=colours[which], label=which)
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--")
        ax.set_title(f"ply {ply} ({len(sel)} games)", fontsize=9)
        ax.set_xlabel("predicted expected score (White)")
    axes_list[0].set_ylabel("observed score (White)")
    axes_list[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{title}: reliability of White's expected score", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return str(out)
