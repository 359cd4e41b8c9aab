"""`livegain analyze`'s readable report: the analysis report as rich tables
(per game, move by move with ``--trace``, accuracy, per player, Algorithm 3),
with the marks of estimates outside a model's range. docs/analyze.md shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from livegain.cli.output import console, table

if TYPE_CHECKING:
    from livegain.batch.analysis import AnalysisReport
    from livegain.batch.game_analysis import GameReport
    from livegain.batch.player_pool import PlayerReport
    from livegain.core.accuracy import Phase, PlayerAccuracy
    from livegain.core.perceived import CalibratedRating, PerceivedModel
    from livegain.core.rating import PerceivedRating

_MARKS = {"games-cluster": " g", "bootstrap-games": " b"}

#: More games than this: one summary row per game instead of a table per game.
DETAIL_GAMES = 8


def _interval(p: PerceivedRating | CalibratedRating) -> str:
    return f"{p.low:.0f}-{p.high:.0f}"


def _console() -> Any:
    out = console()
    if not out.is_terminal:
        out.width = max(out.width, 140)
    return out


def _alg2(p: PlayerReport) -> str | None:
    if p.tournament is None:
        return None
    if p.tournament_low is None or p.tournament_high is None:
        return f"{p.tournament:.0f}"
    return f"{p.tournament:.0f} ({p.tournament_low:.0f}-{p.tournament_high:.0f})"


def _perceived(p: PerceivedRating) -> str:
    text = f"{p.rating:.0f}"
    return f"{text}*" if p.bounded else text


#: The marks of a rating outside the range a model was fitted on.
_LABEL_MARKS = {"extrapolated": "^"}
_BELOW_MARK = "~"


def _mark(label: str | None) -> str:
    if label is None:
        return ""
    return _LABEL_MARKS.get(label, _BELOW_MARK)


def _calibrated(
    c: CalibratedRating | None, model: PerceivedModel | None = None, rating: float | None = None
) -> str:
    """The number the audience sees: "too early" under the model's minimum;
    marked when ``rating`` (default: its own) is outside the model's range."""
    if c is None:
        return "-"
    if c.early:
        return f"too early ({c.moves})"
    label = None if model is None else model.range_label(c.rating if rating is None else rating)
    return f"{c.rating:.0f}{_mark(label)}"


def _calibrated_interval(c: CalibratedRating | None) -> str | None:
    if c is None or c.early:
        return None
    return _interval(c)


def _form(c: CalibratedRating | None, model: PerceivedModel | None, elo: float | None) -> str:
    """Form: the official rating moved by the moves (marked as its rating is)."""
    if c is None:
        return "-"
    label = None if model is None else model.range_label(elo)
    return f"{c.rating:.0f}{_mark(label)}"


def _wdl_text(w: tuple[int, int, int] | None) -> str:
    """W/D/L in percent, White's view."""
    if w is None:
        return "-"
    return f"{w[0] / 10:.0f}/{w[1] / 10:.0f}/{w[2] / 10:.0f}"


def _acc(a: PlayerAccuracy | None, phase: Phase | None = None) -> str:
    """An accuracy in percent (lichess's method), overall or of one phase; '-': none."""
    if a is None or a.moves == 0:
        return "-"
    x = a.overall if phase is None else a.phase(phase)
    return "-" if x is None else f"{x:.1f}"


def print_accuracy(report: AnalysisReport, out: Any) -> None:
    """Accuracy (lichess's method, docs/maths.md) per game and per player, by phase."""
    # imported here: the parser must not load chess before the engines start
    from livegain.core.accuracy import PHASES

    phases = ["Opening", "Middlegame", "Endgame"]
    rows: list[list[Any]] = []
    for g in report.games:
        for pg in (g.white, g.black):
            a = pg.accuracy
            rows.append(
                [g.number, pg.name, pg.color, a.moves if a else 0, _acc(a)]
                + [_acc(a, ph) for ph in PHASES]
            )
    out.print(
        table(
            "Accuracy per game, % (lichess's method; phases: docs/maths.md)",
            ["#", "Player", "Colour", "Moves", "Accuracy", *phases],
            rows,
        )
    )
    if len(report.games) < 2:
        return
    prows: list[list[Any]] = []
    for p in report.players:
        a = p.accuracy
        prows.append([p.name, p.games, _acc(a)] + [_acc(a, ph) for ph in PHASES])
    out.print(
        table(
            "Accuracy per player, % (the mean of his games')",
            ["Player", "Games", "Accuracy", *phases],
            prows,
        )
    )


def _labels_used(report: AnalysisReport) -> set[str]:
    model = report.model
    if model is None:
        return set()
    found: set[str] = set()
    pairs: list[tuple[CalibratedRating | None, float | None]] = []
    for p in report.players:
        pairs.append((p.calibrated, None))
        pairs.append((p.form, p.elo))
    for g in report.games:
        for pg in (g.white, g.black):
            pairs.append((pg.calibrated, None))
            pairs.append((pg.form, pg.elo))
    for c, elo in pairs:
        if c is None:
            continue
        label = model.range_label(c.rating if elo is None else elo)
        if label is not None:
            found.add(label)
    return found


def print_report(
    report: AnalysisReport,
    source: str,
    trace: bool = False,
    model_why: str | None = None,
    wdl: str | None = None,
) -> None:
    """Readable tables."""
    out = _console()
    model = report.model
    out.print(f"Engine rating r_e = {report.engine_rating:.0f} ({source}), for Algorithm 4")
    if model is not None:
        out.print(
            f"Perceived rating and form: calibrated, {model_why or model.name} "
            f"({model.scale} rating scale)"
        )
    elif model_why:
        out.print(f"Perceived rating: {model_why}; Algorithm 4 only")
    if wdl:
        out.print(wdl)
    if len(report.games) <= DETAIL_GAMES:
        for g in report.games:
            print_game(g, out, model)
    else:
        rows = []
        for g in report.games:
            h = g.head_to_head
            rows.append(
                [
                    g.number,
                    g.white.name,
                    g.black.name,
                    g.headers.get("Result", "*"),
                    _calibrated(g.white.calibrated, model),
                    _calibrated(g.black.calibrated, model),
                    _form(g.white.form, model, g.white.elo),
                    _form(g.black.form, model, g.black.elo),
                    _perceived(g.white.perceived),
                    _perceived(g.black.perceived),
                    f"{h.expected:.3f}",
                    f"{h.difference:+.0f}",
                    _wdl_text(g.plies[-1].wdl if g.plies else None),
                ]
            )
        out.print(
            table(
                "Games (perceived ratings: calibrated, form and Algorithm 4; White's expected "
                "score, Algorithm 1; W/D/L % after the last move, White's view)",
                [
                    "#",
                    "White",
                    "Black",
                    "Result",
                    "White",
                    "Black",
                    "White form",
                    "Black form",
                    "White Alg. 4",
                    "Black Alg. 4",
                    "p(W)",
                    "d(W)",
                    "W/D/L",
                ],
                rows,
            )
        )
    if trace:
        for g in report.games:
            print_trace(g, out, model)
    print_accuracy(report, out)
    rows = []
    for p in report.players:
        pr = p.perceived
        rows.append(
            [
                p.name,
                None if p.elo is None else f"{p.elo:.0f}",
                p.games,
                pr.moves,
                _calibrated(p.calibrated, model),
                _calibrated_interval(p.calibrated),
                _form(p.form, model, p.elo),
                None if p.form is None else _interval(p.form),
                f"{pr.expected:.3f}",
                f"{pr.difference:+.0f}",
                _perceived(pr),
                _interval(pr) + _MARKS.get(p.interval_method, ""),
                _alg2(p),
            ]
        )
    out.print(
        table(
            "Players, all games pooled (perceived: calibrated; form: Elo updated by the moves; "
            "Algorithm 4; Alg. 2 = tournament estimate, 95% jackknife)",
            [
                "Player",
                "Elo",
                "Games",
                "Moves",
                "Perceived",
                "95% interval",
                "Form",
                "Form 95%",
                "p vs engine",
                "d",
                "Alg. 4",
                "Alg. 4 95%",
                "Alg. 2",
            ],
            rows,
        )
    )
    t = report.tournament
    if t is not None and t.engine_by_elo is not None:
        e = t.engine_by_elo
        ci = f" (95% {e.low:.0f} .. {e.high:.0f})" if e.low is not None and e.high else ""
        out.print(
            f"Algorithm 3: engine strength from {e.players} rated player(s): {e.rating:.0f}{ci}"
        )
    used = {p.interval_method for p in report.players} & {"games-cluster", "bootstrap-games"}
    if used:
        out.print(
            "g: Algorithm 4 interval over the player's games (cluster-robust t joined with "
            "Wilson); b: bootstrap over games; else Wilson (docs/maths.md)"
        )
    if any(p.perceived.bounded for p in report.players) or any(
        g.white.perceived.bounded or g.black.perceived.bounded for g in report.games
    ):
        out.print("* Algorithm 4: p was 0 or 1 (or nearly): the difference is clamped at +/-800")
    for label in sorted(_labels_used(report)):
        out.print(
            f"{_mark(label)} {label}: the rating (the estimate's own; the Elo for form) lies "
            "outside the range the model was fitted on",
            markup=False,
        )


def print_game(g: GameReport, out: Any, model: PerceivedModel | None = None) -> None:
    rows = []
    for pg in (g.white, g.black):
        pr = pg.perceived
        rows.append(
            [
                pg.name,
                pg.elo,
                pr.moves,
                _calibrated(pg.calibrated, model),
                _calibrated_interval(pg.calibrated),
                _form(pg.form, model, pg.elo),
                None if pg.form is None else _interval(pg.form),
                None if pg.mean_gain is None else f"{pg.mean_gain / 100:+.2f}",
                f"{pr.expected:.3f}",
                f"{pr.difference:+.0f}",
                _perceived(pr),
                _interval(pr),
            ]
        )
    h = g.headers
    title = f"Game {g.number}: {g.white.name} - {g.black.name}  {h.get('Result', '*')}"
    out.print(
        table(
            title,
            [
                "Player",
                "Elo",
                "Moves",
                "Perceived",
                "95% interval",
                "Form",
                "Form 95%",
                "Mean gain",
                "p vs engine",
                "d",
                "Alg. 4",
                "Alg. 4 95%",
            ],
            rows,
        )
    )
    hh = g.head_to_head
    if hh.moves_a and hh.moves_b:
        if hh.difference >= 0:
            favour, d, lo, hi = g.white.name, hh.difference, hh.low, hh.high
        else:
            favour, d, lo, hi = g.black.name, -hh.difference, -hh.high, -hh.low
        out.print(
            f"Algorithm 1: expected score {g.white.name} {hh.expected:.3f}, "
            f"{g.black.name} {hh.expected_other:.3f}: {favour} {d:+.0f} "
            f"(95% {lo:+.0f} to {hi:+.0f})"
        )
    if g.plies:
        last = g.plies[-1]
        engine = "" if last.engine_wdl is None else f"; engine's {_wdl_text(last.engine_wdl)}"
        what = f"human ({g.wdl_model}, {g.kind})" if g.wdl_model else "engine or win-chance curve"
        out.print(
            f"W/D/L after {last.move} (White's view, %): {_wdl_text(last.wdl)} {what}{engine}",
            markup=False,
        )


def print_trace(g: GameReport, out: Any, model: PerceivedModel | None = None) -> None:
    wdl_by_ply = {r.ply: r for r in g.plies}
    keyed: list[tuple[int, list[Any]]] = []
    for pg in (g.white, g.black):
        for t in pg.trace:
            pr = t.perceived
            row = wdl_by_ply.get(t.ply)
            keyed.append(
                (
                    t.ply,
                    [
                        t.move,
                        pg.name,
                        f"{t.gain / 100:+.2f}",
                        _wdl_text(None if row is None else row.wdl),
                        pr.moves,
                        _calibrated(t.calibrated, model),
                        _calibrated_interval(t.calibrated),
                        f"{pr.expected:.3f}",
                        f"{pr.difference:+.0f}",
                        _perceived(pr),
                        _interval(pr),
                    ],
                )
            )
    rows = [row for _, row in sorted(keyed, key=lambda item: item[0])]
    wdl_title = "human W/D/L %" if g.wdl_model else "W/D/L %"
    out.print(
        table(
            f"Game {g.number}: move by move (perceived: calibrated; Algorithm 4; "
            f"{wdl_title} after the move, White's view)",
            [
                "Move",
                "Player",
                "Gain",
                "W/D/L",
                "Moves",
                "Perceived",
                "95% interval",
                "p",
                "d",
                "Alg. 4",
                "Alg. 4 95%",
            ],
            rows,
        )
    )
