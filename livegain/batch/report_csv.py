"""The analysis report as CSV: one row per player (docs/analyze.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from livegain.batch.analysis import AnalysisReport

CSV_COLUMNS = (
    "player",
    "elo",
    "games",
    "moves",
    "perceived",
    "low",
    "high",
    "early",
    "algorithm4",
    "algorithm4_low",
    "algorithm4_high",
    "expected",
    "difference",
    "bounded",
    "interval_method",
    "mean_gain",
    "tournament",
    "tournament_low",
    "tournament_high",
    "form",
    "form_low",
    "form_high",
    "perceived_label",
    "form_label",
    "scale",
)


def _opt(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"


def csv_rows(report: AnalysisReport) -> list[list[str]]:
    """One row per player (header first): the calibrated perceived rating,
    then Algorithm 4's, the tournament estimate, then form and the labels."""
    rows: list[list[str]] = [list(CSV_COLUMNS)]
    model = report.model
    for p in report.players:
        pr = p.perceived
        c = p.calibrated
        f = p.form
        labels = (
            ("", "", "")
            if model is None
            else (
                (model.range_label(c.rating) if c else None) or "",
                (model.range_label(p.elo) if f else None) or "",
                model.scale,
            )
        )
        rows.append(
            [
                p.name,
                "" if p.elo is None else f"{p.elo:.0f}",
                str(p.games),
                str(pr.moves),
                _opt(c.rating if c else None),
                _opt(c.low if c else None),
                _opt(c.high if c else None),
                "" if c is None else ("true" if c.early else "false"),
                f"{pr.rating:.1f}",
                f"{pr.low:.1f}",
                f"{pr.high:.1f}",
                f"{pr.expected:.4f}",
                f"{pr.difference:.1f}",
                "true" if pr.bounded else "false",
                p.interval_method,
                "" if p.mean_gain is None else f"{p.mean_gain:.2f}",
                _opt(p.tournament),
                _opt(p.tournament_low),
                _opt(p.tournament_high),
                _opt(f.rating if f else None),
                _opt(f.low if f else None),
                _opt(f.high if f else None),
                *labels,
            ]
        )
    return rows
