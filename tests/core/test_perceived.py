"""The calibrated perceived rating: move classes, the estimate, exact rollback,
and the fit recovering known answers from synthetic rated games."""

from __future__ import annotations

import math

import numpy as np
import pytest

from livegain.batch.validity import Estimate, ValidityRow, figures, fit_model, validate
from livegain.core.ledger import GameLedger
from livegain.core.perceived import MoveBin, MoveClasses, MoveProfile, PerceivedModel

from .synthetic_players import synthetic as _synthetic

CLASSES = MoveClasses()


def _model(scores: list[float] | None = None, min_moves: int = 5) -> PerceivedModel:
    k = CLASSES.count
    return PerceivedModel(
        name="test",
        classes=CLASSES,
        move_scores=tuple(scores if scores is not None else [1500.0 + c for c in range(k)]),
        bins=(
            MoveBin(1, 1500.0, 0.0, -600.0, 700.0),
            MoveBin(5, 100.0, 0.5, -500.0, 520.0),
            MoveBin(20, -200.0, 1.0, -400.0, 410.0),
        ),
        prior=1540.0,
        prior_low=900.0,
        prior_high=2300.0,
        min_moves=min_moves,
    )


def test_move_classes_bands() -> None:
    # phase 0 (ply < 21), balanced position (-50 < eval <= 50), no loss: band (0, 3, 0)
    assert CLASSES.of(1, 20, 20) == (0 * 7 + 3) * 8 + 0
    # an evaluation equal to an edge falls in the lower band
    assert CLASSES.of(1, 50, 50) == (0 * 7 + 3) * 8 + 0
    assert CLASSES.of(1, 51, 51) == (0 * 7 + 4) * 8 + 0
    # losses: 1-10 band 1, 11-30 band 2, ... 401+ band 7
    assert CLASSES.of(1, 0, -10) % 8 == 1
    assert CLASSES.of(1, 0, -11) % 8 == 2
    assert CLASSES.of(1, 0, -401) % 8 == 7
    # a gain is no loss
    assert CLASSES.of(1, 0, 300) % 8 == 0
    # phases by ply: 1-20, 21-60, 61+
    assert CLASSES.of(20, 0, 0) // 56 == 0
    assert CLASSES.of(21, 0, 0) // 56 == 1
    assert CLASSES.of(61, 0, 0) // 56 == 2
    # evaluations are clipped at +/-1000 before the loss is taken
    assert CLASSES.of(30, 3900, 900) == CLASSES.of(30, 1000, 900)
    assert CLASSES.count == 3 * 7 * 8


def test_estimate_by_hand() -> None:
    model = _model()
    before = model.estimate(0, 0)
    assert (before.rating, before.low, before.high, before.early) == (1540.0, 900.0, 2300.0, True)
    # 3 moves (bin from 1): a = 1500, b = 0 whatever the moves
    three = model.estimate_moves([0, 1, 2])
    assert three.rating == pytest.approx(1500.0)
    assert (three.low, three.high, three.early) == (900.0, 2200.0, True)
    # 6 moves of classes 10..15: mean score 1512.5, bin from 5: 100 + 0.5 * 1512.5
    six = model.estimate_moves([10, 11, 12, 13, 14, 15])
    assert six.score == pytest.approx(1512.5)
    assert six.rating == pytest.approx(100.0 + 0.5 * 1512.5)
    assert six.low == pytest.approx(six.rating - 500.0)
    assert six.high == pytest.approx(six.rating + 520.0)
    assert not six.early
    # 25 moves of class 100: bin from 20, -200 + 1600
    many = model.estimate_moves([100] * 25)
    assert many.rating == pytest.approx(1400.0)


def test_model_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="move scores"):
        PerceivedModel("x", CLASSES, (1.0,), (MoveBin(1, 0, 0, 0, 0),), 0, 0, 0)
    with pytest.raises(ValueError, match="start at 1"):
        _bad = PerceivedModel(
            "x", CLASSES, tuple([0.0] * CLASSES.count), (MoveBin(2, 0, 0, 0, 0),), 0, 0, 0
        )


def test_profile_push_pop_is_exact() -> None:
    model = _model(scores=[1234.567 + 0.01 * c for c in range(CLASSES.count)])
    rng = np.random.default_rng(3)
    moves = [
        (int(p), int(b), int(b - loss))
        for p, b, loss in zip(
            range(1, 80, 2), rng.integers(-900, 900, 40), rng.integers(0, 500, 40), strict=True
        )
    ]
    live = MoveProfile(model)
    for m in moves:
        live.push(*m)
    for _ in range(15):
        live.pop()
    fresh = MoveProfile(model)
    for m in moves[:-15]:
        fresh.push(*m)
    assert live.state() == fresh.state()
    assert live.estimate() == fresh.estimate()


def test_ledger_carries_the_calibrated_estimate_and_rolls_back() -> None:
    model = _model()
    scores = [20, 30, -40, 60, -300, -280, -290, 100, 90, 80, 85, 70, 60, 500, 480]
    ledger = GameLedger(2860.0, model=model)
    ledger.set_start(scores[0])
    for s in scores[1:]:
        ledger.push(s)
    white = ledger.calibrated("white")
    assert white is not None and white.moves == 7
    # the classes are the mover's view of each move
    expected = []
    for ply in range(1, len(scores), 2):
        expected.append(CLASSES.of(ply, scores[ply - 1], scores[ply]))
    assert ledger.move_classes("white") == expected
    black = [CLASSES.of(ply, -scores[ply - 1], -scores[ply]) for ply in range(2, len(scores), 2)]
    assert ledger.move_classes("black") == black
    assert white == model.estimate_moves(expected)
    assert ledger.white_trace[-1].calibrated == white
    # Algorithm 4 is unchanged by the model
    plain = GameLedger(2860.0)
    plain.set_start(scores[0])
    for s in scores[1:]:
        plain.push(s)
    assert plain.perceived("white") == ledger.perceived("white")
    assert plain.calibrated("white") is None
    # exact rollback
    ledger.truncate(6)
    again = GameLedger(2860.0, model=model)
    again.set_start(scores[0])
    for s in scores[1:7]:
        again.push(s)
    assert ledger == again


def test_ledger_first_ply_offsets_the_phase() -> None:
    model = _model()
    ledger = GameLedger(2860.0, model=model, first_mover_is_white=False, first_ply=20)
    ledger.set_start(0)
    ledger.push(0)  # game ply 20 by Black: phase 0
    ledger.push(0)  # game ply 21 by White: phase 1
    assert ledger.move_classes("black") == [CLASSES.of(20, 0, 0)]
    assert ledger.move_classes("white") == [CLASSES.of(21, 0, 0)]


# -- the fit, on synthetic rated games with a known truth ----------------------


def test_fit_recovers_ratings_and_covers_held_out_games() -> None:
    train = _synthetic(3000, seed=1)
    held = _synthetic(1500, seed=2)
    model = fit_model(train, "synthetic", seed=0)
    assert model.prior == pytest.approx(float(np.median([r.rating for r in train])), abs=0.1)
    # more moves say more: the slope grows from the first bin to the last
    assert model.bins[0].slope < model.bins[-1].slope
    rows = []
    for r in held:
        est = model.estimate_moves(r.classes)
        rows.append(
            ValidityRow(
                r.rating,
                len(r.classes),
                Estimate(est.rating, est.low, est.high),
                Estimate(est.rating, est.low, est.high),
                est.early,
            )
        )
    f = figures(rows, "perceived", model.prior)
    assert 0.93 <= f.coverage <= 0.97
    assert abs(f.bias) < 30
    assert f.spearman is not None and f.spearman > 0.6
    assert f.mae < 0.8 * f.baseline_mae
    # the same fit twice gives the same model (seeded prefix draws)
    assert fit_model(train, "synthetic", seed=0) == model


def test_fit_needs_enough_games() -> None:
    with pytest.raises(ValueError, match="at least 50"):
        fit_model(_synthetic(10, seed=1), "tiny")


def test_figures_by_hand() -> None:
    def row(rating: float, est: float, lo: float, hi: float) -> ValidityRow:
        e = Estimate(est, lo, hi)
        return ValidityRow(rating, 20, e, e, False)

    rows = [row(1000, 1100, 900, 1300), row(1500, 1400, 1300, 1450), row(2000, 1900, 1500, 2100)]
    f = figures(rows, "perceived", baseline=1500.0)
    assert f.mae == pytest.approx(100.0)
    assert f.bias == pytest.approx((100 - 100 - 100) / 3)
    assert f.baseline_mae == pytest.approx(1000 / 3)
    assert f.coverage == pytest.approx(2 / 3)
    assert f.width == pytest.approx(400.0)
    assert f.spearman == pytest.approx(1.0)
    report = validate(rows, 1500.0)
    assert [lo for lo, _ in report.by_rating] == [1000, 1400, 2000]
    assert math.isclose(report.overall["algorithm4"].mae, 100.0)


# -- perceived's confidence belt and form, per rating band ----------------------


def test_belt_and_form_hold_in_every_band() -> None:
    """On synthetic players whose truth is known: perceived's interval holds
    the rating about 95 % of the time in every band (not only overall), and
    form (the rating updated by the moves) is unbiased in every band."""
    train = _synthetic(4000, seed=3)
    held = _synthetic(3000, seed=4)
    model = fit_model(train, "synthetic", seed=0)
    assert model.forward and model.forward[0].moves_from == 1
    assert model.pop_mean is not None and model.pop_sd is not None
    by_band: dict[int, list[tuple[float, float, float, float]]] = {}
    for r in held:
        c = sum(model.centi_score(k) for k in r.classes)
        est = model.estimate(len(r.classes), c)
        form = model.form([(len(r.classes), c)], r.rating)
        assert form is not None and est.low <= est.rating <= est.high
        band = int(r.rating // 200) * 200
        by_band.setdefault(band, []).append((r.rating, est.low, est.high, form.rating))
    for band, rows in by_band.items():
        if len(rows) < 150:
            continue
        covered = np.mean([lo <= t <= hi for t, lo, hi, _ in rows])
        bias = np.mean([f - t for t, _lo, _hi, f in rows])
        assert covered >= 0.88, (band, covered)
        assert abs(bias) < 40, (band, bias)


def test_form_without_rating_or_moves_and_its_labels() -> None:
    model = fit_model(_synthetic(2000, seed=5), "synthetic", seed=0, scale="fide")
    assert model.form([(20, 3_000_000)], None) is None
    # no moves: the rating itself with Elo's per-game spread
    f = model.form([], 1700.0)
    assert f is not None and f.rating == 1700.0
    assert f.high - f.low == pytest.approx(2 * 1.959964 * 200, rel=1e-6)
    assert model.rating_high is not None and model.rating_low is not None
    top = model.rating_high + 150
    assert model.range_label(top) == "extrapolated"
    assert model.range_label(model.rating_low - 1) == "not validated on FIDE games"
    assert model.range_label(1500.0) is None
    # beyond the range the interval is widened by the distance on each side
    inside = model.form([], 1500.0)
    beyond = model.form([], top)
    assert inside is not None and beyond is not None
    assert (beyond.high - beyond.low) - (inside.high - inside.low) == pytest.approx(300.0)


def test_form_moves_with_the_moves_and_rolls_back_exactly() -> None:
    model = fit_model(_synthetic(2000, seed=6), "synthetic", seed=0)
    profile = MoveProfile(model)
    good = CLASSES.of(21, 0, 0)  # no loss
    bad = CLASSES.of(21, 0, -300)  # a 300 cp blunder
    assert profile.form(1500.0) == model.form([], 1500.0)
    for _ in range(20):
        profile.push(21, 0, 0)
    after_good = profile.form(1500.0)
    for _ in range(40):
        profile.push(21, 0, -300)
    after_bad = profile.form(1500.0)
    assert after_good is not None and after_bad is not None
    assert after_good.rating > 1500.0 > after_bad.rating
    for _ in range(40):
        profile.pop()
    assert profile.form(1500.0) == after_good
    assert model.centi_score(good) > model.centi_score(bad)
    # several games: the mean performance over them, known more narrowly
    # (its prior and its evidence both narrow with the number of games)
    one = model.form([(20, 20 * model.centi_score(good))], 1500.0)
    three = model.form([(20, 20 * model.centi_score(good))] * 3, 1500.0)
    assert one is not None and three is not None
    assert three.rating == pytest.approx(one.rating) and one.rating > 1500.0
    assert three.high - three.low == pytest.approx((one.high - one.low) / math.sqrt(3))


def test_player_events_split_by_the_events_mean_rating() -> None:
    """Elite events apart: each player-event falls in the part of its event's
    mean rating (over all its rated players, not only those counted), and each
    part's figures are its own player-events'."""
    from livegain.batch.validity import player_events
    from livegain.models.perceived import load_perceived_models

    model = next(m for m in load_perceived_models() if m.scale == "fide")
    no = Estimate(0.0, 0.0, 0.0)

    def rows(event: str, field: dict[str, float], score: float) -> list[ValidityRow]:
        out = []
        for player, rating in field.items():
            for g in range(7):
                opponent = next(r for p, r in field.items() if p != player)
                out.append(
                    ValidityRow(
                        rating, 40, no, no, False, event=event, player=player,
                        centi=40 * 30, opponent=opponent, score=score if g % 2 else 0.5,
                    )
                )  # fmt: skip
        return out

    elite = {"A": 2750.0, "B": 2700.0, "C": 2500.0}  # mean 2650
    open_ = {"D": 2300.0, "E": 2250.0}
    report = player_events(
        rows("Elite|x", elite, 1.0) + rows("Open|y", open_, 0.0), model, min_games=7
    )
    by_event = {p.event: p.event_rating for p in report.players}
    assert by_event == {"Elite|x": pytest.approx(2650.0), "Open|y": pytest.approx(2275.0)}
    low, high = report.by_event_rating
    assert (low.low, low.high, low.events, low.player_events) == (0.0, 2600.0, 1, 2)
    assert (high.low, high.events, high.player_events) == (2600.0, 1, 3)
    for part, names in ((low, open_), (high, elite)):
        inside = [p for p in report.players if p.player in names]
        mae = sum(abs(p.rating - p.performance) for p in inside) / len(inside)
        assert part.mae_rating == pytest.approx(mae)
        assert part.improvement == pytest.approx(
            mae - sum(abs(p.form.rating - p.performance) for p in inside) / len(inside)
        )
    # the overall figures are the same comparison over every player-event
    whole = report.overall
    assert (whole.player_events, whole.events) == (5, 2)
    assert whole.mae_rating == pytest.approx(
        sum(abs(p.rating - p.performance) for p in report.players) / 5
    )
    assert report.to_json()["improvement"] == round(whole.improvement, 1)
