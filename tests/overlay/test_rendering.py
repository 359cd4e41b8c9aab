"""How the board overlay draws particular situations: a big loss, a clamped
rating, a mate score, running clocks, match odds, a takeback, a finished game,
the calibrated rating while it is too early to tell, for a player rated outside
the calibrated model's range (his number with its label), without a model, and
the human win/draw/loss chances beside the engine's own.

The boards are published through the real server component
(:class:`~livegain.publish.server.LiveServer`), exactly as the service does;
the test plays the feed and chooses the situation.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from livegain.publish import schema

from ._live import StaticServer

pytestmark = [pytest.mark.browser]


#: The model's validated rating range in the tests that give one (shown rounded: 840–2440).
RANGE = (840.4, 2439.6)


def perceived(
    rating: float, moves: int, early: bool = False, label: str | None = None
) -> schema.Perceived:
    """A calibrated rating (the wire's ``*_perceived`` or ``*_form``) of a
    FIDE-scale model validated on :data:`RANGE`; ``label``: the model's words
    for a player rated outside it."""
    return schema.Perceived(
        rating=rating,
        low=rating - 410,
        high=rating + 380,
        moves=moves,
        early=early,
        model="test",
        scale="fide",
        label=label,
        range_low=RANGE[0],
        range_high=RANGE[1],
    )


def algorithm4(rating: float, moves: int, bounded: bool = False) -> schema.Algorithm4:
    return schema.Algorithm4(
        rating=rating,
        low=rating - 120,
        high=rating + 120,
        difference=rating - 2860,
        expected=0.0 if bounded else 0.4,
        moves=moves,
        bounded=bounded,
    )


def point(
    ply: int,
    rating: float | None,
    a4: float,
    bounded: bool = False,
    early: bool = False,
    form: float | None = None,
) -> schema.TracePoint:
    """A trace point: the calibrated ``rating`` (None: no model), the player's
    ``form`` (None: unrated) and Algorithm 4's ``a4``."""
    return schema.TracePoint(
        ply=ply,
        rating=rating,
        low=None if rating is None else rating - 410,
        high=None if rating is None else rating + 380,
        early=early or rating is None,
        form=None
        if form is None
        else schema.TraceForm(rating=form, low=form - 150, high=form + 150),
        algorithm4=schema.TraceAlgorithm4(
            rating=a4,
            low=a4 - 120,
            high=a4 + 120,
            difference=a4 - 2860,
            bounded=bounded,
        ),
    )


def board(**kw: Any) -> schema.BoardState:
    moves = [
        schema.Ply(ply=1, san="e4", uci="e2e4", color="white", clock=5390, gain=0),
        schema.Ply(ply=2, san="f5", uci="f7f5", color="black", clock=5380, gain=-45),
        schema.Ply(ply=3, san="exf5", uci="e4f5", color="white", clock=5300, gain=20),
        schema.Ply(
            ply=4,
            san="g5",
            uci="g7g5",
            color="black",
            clock=5100,
            gain=-260,
            eval=schema.EvalInfo(cp=3900, mate=2, depth=10, best="Nf6"),
        ),
    ]
    base: dict[str, Any] = dict(
        board_id="r1-b1",
        tournament="Rendering Cup",
        round="1",
        board=1,
        white=schema.Player(name="Carlsen, Magnus", title="GM", federation="NOR", rating=2865),
        black=schema.Player(name="Nakamura, Hikaru", title="GM", federation="USA", rating=2760),
        result="*",
        status="live",
        fen="rnbqkbnr/ppppp2p/8/5Pp1/8/8/PPPP1PPP/RNBQKBNR w KQkq g6 0 3",
        moves=moves,
        eval=schema.EvalInfo(
            cp=3900, mate=2, wdl=schema.Wdl(win=1000, draw=0, loss=0), depth=10, best="Qh5#"
        ),
        white_perceived=perceived(2805.5, 6),
        black_perceived=perceived(2410, 6),
        white_form=perceived(2890.4, 6),
        black_form=perceived(2690, 6),
        white_algorithm4=algorithm4(2905.5, 6),
        black_algorithm4=algorithm4(2060, 6, bounded=True),
        white_trace=[
            point(1, 2200, 2860, early=True, form=2866),
            point(3, 2500, 2905.5, form=2870),
            point(5, 2805.5, 2905.5, form=2890.4),
        ],
        black_trace=[
            point(2, 1900, 2060, True, early=True, form=2755),
            point(4, 2300, 2060, True, form=2700),
            point(6, 2410, 2060, True, form=2690),
        ],
        head_to_head=schema.HeadToHead(
            white_expected=0.875,
            black_expected=0.125,
            difference=325,
            low=120,
            high=600,
            bounded=False,
        ),
        clocks=schema.Clocks(white=5300, black=5100, running="white"),
        match=schema.MatchOdds(
            a="Carlsen",
            b="Nakamura",
            score_a=1.5,
            score_b=0.5,
            games_left=2,
            a_wins=0.81,
            draw=0.12,
            b_wins=0.07,
        ),
        engine="Stockfish 15.1 depth 10",
        engine_rating=2860,
        seq=4,
    )
    base.update(kw)
    return schema.BoardState(**base)


def open_board(static_server: StaticServer, page_factory: Any, query: str = "") -> Any:
    p = page_factory()
    p.goto(f"{static_server.url}/overlay/board?board=r1-b1{query}")
    expect(p.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
    return p


@pytest.fixture
def page(static_server: StaticServer, page_factory: Any) -> Any:
    static_server.set_board(board())
    return open_board(static_server, page_factory)


def test_big_loss_mate_clocks_odds(page: Any) -> None:
    box = page.get_by_test_id("last-move-box")
    expect(page.get_by_test_id("last-move")).to_have_text("2\u2026 g5")
    expect(box).to_have_attribute("data-severity", "big-loss")
    expect(page.get_by_test_id("last-move-mark")).to_have_text("??")
    expect(page.get_by_test_id("last-move-gain")).to_have_text("gain \u22122.60")
    expect(page.get_by_test_id("last-move-best")).to_have_text("engine preferred Nf6")
    # the big loss is red: its box has a red outline
    red = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=last-move-mark]'))"
        ".backgroundColor"
    )
    assert red == "rgb(255, 66, 66)"
    # the smaller loss in the move list is marked too
    rows = page.locator('[data-testid="move"]')
    expect(rows).to_have_count(4)
    assert [r.get_attribute("data-severity") for r in rows.all()] == ["", "", "", "big-loss"]

    expect(page.get_by_test_id("eval-cp")).to_have_text("#2")
    width = page.evaluate(
        "() => document.querySelector('[data-testid=eval-bar-white]').style.width"
    )
    assert float(width.rstrip("%")) == 100
    expect(page.get_by_test_id("wdl-win")).to_have_text("100%")

    expect(page.get_by_test_id("white-clock")).to_have_text("1:28:20")
    expect(page.get_by_test_id("white-clock")).to_have_attribute("data-running", "true")
    expect(page.get_by_test_id("black-clock")).to_have_attribute("data-running", "false")

    expect(page.get_by_test_id("odds")).to_have_attribute("data-empty", "false")
    expect(page.get_by_test_id("odds-a")).to_have_text("81%")
    expect(page.get_by_test_id("odds-draw")).to_have_text("12%")
    expect(page.get_by_test_id("odds-b")).to_have_text("7%")
    expect(page.get_by_test_id("odds-score")).to_have_text("1.5\u20130.5, 2 left")

    expect(page.get_by_test_id("h2h-white")).to_have_text("0.88")
    expect(page.get_by_test_id("h2h-diff")).to_have_text("White +325 Elo")


def js_round(x: float) -> int:
    """JavaScript's Math.round (halves go up), which the page uses."""
    return math.floor(x + 0.5)


#: The layouts of the board overlay that show the players' ratings.
LAYOUTS = ("", "&layout=compact", "&layout=lower-third", "&layout=corner")


def test_a_rated_players_large_number_is_his_form(
    static_server: StaticServer, page_factory: Any
) -> None:
    """A player with an official rating: the large number is the message's form,
    labelled as such with its difference to his rating; the moves-alone estimate
    and its 95 % interval beside it, in smaller type; in every layout. The chart's
    line is the form, the moves alone its secondary line and band."""
    state = board()
    static_server.set_board(state)
    for query in LAYOUTS:
        page = open_board(static_server, page_factory, query)
        for color in ("white", "black"):
            form = getattr(state, f"{color}_form")
            per = getattr(state, f"{color}_perceived")
            box = page.get_by_test_id(f"{color}-perceived-box")
            expect(box).to_have_attribute("data-state", "estimate")
            expect(box).to_have_attribute("data-headline", "form")
            expect(box).to_have_attribute("title", re.compile("official rating updated", re.I))
            label = page.get_by_test_id(f"{color}-headline-label")
            expect(label).to_have_text("Form \u00b7 playing at")
            expect(label).to_be_visible()
            value = page.get_by_test_id(f"{color}-headline")
            expect(value).to_have_text(str(js_round(form.rating)))
            expect(value).to_have_attribute("data-value", f"{form.rating:g}")
            expect(value).to_have_attribute("data-kind", "form")
            expect(page.get_by_test_id(f"{color}-headline-interval")).to_be_hidden()
            alone = page.get_by_test_id(f"{color}-moves-alone")
            expect(alone).to_be_visible()
            interval = f"{js_round(per.low)}\u2013{js_round(per.high)}"
            expect(alone).to_have_text(f"moves alone {js_round(per.rating)} ({interval})")
            expect(page.get_by_test_id(f"{color}-perceived")).to_have_attribute(
                "data-value", f"{per.rating:g}"
            )
            # the number in large type is the form, the moves alone smaller
            big = float(value.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
            small = float(
                page.get_by_test_id(f"{color}-perceived").evaluate(
                    "e => parseFloat(getComputedStyle(e).fontSize)"
                )
            )
            assert big >= 1.5 * small, (query, big, small)
            expect(page.get_by_test_id(f"{color}-headline-bound")).to_have_text("")
            expect(page.get_by_test_id(f"{color}-headline-note")).to_have_text("")
    page = open_board(static_server, page_factory)
    # vs FIDE: the form minus the official rating
    expect(page.get_by_test_id("white-headline-diff")).to_have_text("+25 vs FIDE")
    expect(page.get_by_test_id("black-headline-diff")).to_have_text("\u221270 vs FIDE")
    expect(page.get_by_test_id("trace-title")).to_have_text("Playing at, move by move")
    expect(page.get_by_test_id("trace-note")).to_contain_text("line: form")
    expect(page.get_by_test_id("engine")).to_contain_text(
        "perceived rating calibrated on rated games, FIDE scale (model test)"
    )
    # one chart point per trace point, on the form; the early ones without a value
    drawn = page.eval_on_selector_all(
        '[data-testid="trace-white-point"], [data-testid="trace-black-point"]',
        "ps => ps.map(p => [p.dataset.ply, p.dataset.rating, p.dataset.perceived ?? null,"
        " p.getAttribute('class')])",
    )
    assert sorted(drawn) == [
        ["1", "", None, "point early"],
        ["2", "", None, "point early"],
        ["3", "2870", "2500", "point"],
        ["4", "2700", "2300", "point"],
        ["5", "2890.4", "2805.5", "point"],
        ["6", "2690", "2410", "point"],
    ]
    # the moves alone: the secondary line, with its band
    expect(page.get_by_test_id("trace-white-perceived")).to_have_attribute(
        "data-ratings", "2500,2805.5"
    )
    expect(page.locator('[data-testid="trace-white"] .band')).to_have_count(1)
    expect(page.get_by_test_id("trace-white-end")).to_have_text("2890")
    expect(page.get_by_test_id("trace-early-zone")).to_have_count(1)
    # the multi-board view: the form large, the moves alone beside it
    page.goto(f"{static_server.url}/overlay/boards")
    card = page.locator('[data-testid="board-card"][data-board-id="r1-b1"]')
    expect(card.get_by_test_id("white-headline")).to_have_text("2890")
    expect(card.get_by_test_id("white-headline")).to_have_attribute("data-kind", "form")
    expect(card.get_by_test_id("white-headline-diff")).to_have_text("+25")
    expect(card.get_by_test_id("white-perceived")).to_have_text("2806")
    expect(card.get_by_test_id("white-moves-alone")).to_contain_text("moves alone 2806")
    expect(card.get_by_test_id("black-headline")).to_have_text("2690")
    expect(page.get_by_test_id("legend")).to_contain_text("Large figure: form")


def unrated_board() -> schema.BoardState:
    """White has no official rating (so no form); Black is rated."""
    base = board()
    return board(
        white=schema.Player(name="Newcomer, Ann", federation="NED"),
        white_form=None,
        white_trace=[p.model_copy(update={"form": None}) for p in base.white_trace],
    )


def test_an_unrated_players_large_number_is_from_the_moves_alone(
    static_server: StaticServer, page_factory: Any
) -> None:
    """A player without an official rating: the large number is the message's
    perceived rating with its 95 % interval, labelled as from the moves alone, no
    chip; beside him a rated player's form. In every layout, the multi-board view
    and the chart."""
    static_server.set_board(unrated_board())
    for query in LAYOUTS:
        page = open_board(static_server, page_factory, query)
        box = page.get_by_test_id("white-perceived-box")
        expect(box).to_have_attribute("data-state", "estimate")
        expect(box).to_have_attribute("data-headline", "perceived")
        expect(page.get_by_test_id("white-headline-label")).to_have_text(
            "Perceived \u00b7 moves alone"
        )
        value = page.get_by_test_id("white-headline")
        expect(value).to_have_text("2806")  # 2805.5 rounds up
        expect(value).to_have_attribute("data-value", "2805.5")
        expect(value).to_have_attribute("data-kind", "perceived")
        expect(page.get_by_test_id("white-headline-interval")).to_be_visible()
        expect(page.get_by_test_id("white-headline-interval")).to_have_text("95% 2396\u20133186")
        expect(page.get_by_test_id("white-moves-alone")).to_be_hidden()
        expect(page.get_by_test_id("white-headline-diff")).to_have_text("")
        expect(page.get_by_test_id("black-headline")).to_have_attribute("data-kind", "form")
        expect(page.get_by_test_id("black-headline")).to_have_text("2690")
    page = open_board(static_server, page_factory)
    drawn = page.eval_on_selector_all(
        '[data-testid="trace-white-point"]', "ps => ps.map(p => [p.dataset.ply, p.dataset.rating])"
    )
    assert drawn == [["1", ""], ["3", "2500"], ["5", "2805.5"]]
    expect(page.get_by_test_id("trace-white")).to_have_attribute("data-kind", "perceived")
    expect(page.get_by_test_id("trace-white-perceived")).to_have_count(0)
    expect(page.get_by_test_id("trace-black")).to_have_attribute("data-kind", "form")
    expect(page.get_by_test_id("trace-note")).to_contain_text("unrated: moves alone")
    page.goto(f"{static_server.url}/overlay/boards")
    card = page.locator('[data-testid="board-card"][data-board-id="r1-b1"]')
    expect(card.get_by_test_id("white-headline")).to_have_text("2806")
    expect(card.get_by_test_id("white-headline")).to_have_attribute("data-kind", "perceived")
    expect(card.get_by_test_id("white-moves-alone")).to_have_count(0)
    expect(card.get_by_test_id("white-headline-diff")).to_have_count(0)


def test_clamped_algorithm4_rating_is_marked(
    static_server: StaticServer, page_factory: Any
) -> None:
    """``rating=algorithm4``: the paper's figures, their clamp marks, labelled as such."""
    static_server.set_board(board())
    page = open_board(static_server, page_factory, "&rating=algorithm4")
    for color in ("white", "black"):
        expect(page.get_by_test_id(f"{color}-headline-label")).to_have_text("Algorithm 4 (paper)")
        expect(page.get_by_test_id(f"{color}-perceived-box")).to_have_attribute(
            "data-kind", "algorithm4"
        )
    expect(page.get_by_test_id("black-headline")).to_have_text("2060")
    expect(page.get_by_test_id("black-headline-bound")).to_have_text("\u2264")
    expect(page.get_by_test_id("white-headline-bound")).to_have_text("")
    expect(page.get_by_test_id("white-headline")).to_have_text("2906")  # 2905.5 rounds up
    expect(page.get_by_test_id("white-headline-low")).to_have_text("2786")
    expect(page.get_by_test_id("white-headline-diff")).to_have_text("+41 vs FIDE")
    expect(page.get_by_test_id("black-headline-diff")).to_have_text("\u2212700 vs FIDE")
    expect(page.get_by_test_id("trace-title")).to_have_text("Algorithm 4 (paper), move by move")
    expect(page.get_by_test_id("engine")).to_contain_text("Algorithm 4 (not calibrated)")
    # Algorithm 4's trace: clamped points are drawn hollow, real estimates filled
    drawn = page.eval_on_selector_all(
        '[data-testid="trace-black-point"], [data-testid="trace-white-point"]',
        "ps => ps.map(p => [p.dataset.ply, p.dataset.rating, p.getAttribute('class')])",
    )
    assert sorted(drawn) == [
        ["1", "2860", "point"],
        ["2", "2060", "point bounded"],
        ["3", "2905.5", "point"],
        ["4", "2060", "point bounded"],
        ["5", "2905.5", "point"],
        ["6", "2060", "point bounded"],
    ]
    expect(page.get_by_test_id("trace-early-zone")).to_have_count(0)


def test_too_early_to_tell(static_server: StaticServer, page_factory: Any) -> None:
    """Fewer moves than the model's minimum: the words, the moves so far, no number
    (not even a clamped "≤2060"), no interval, no difference; no band in the chart."""
    moves = board().moves[:3]
    early = board(
        moves=moves,
        white_perceived=perceived(2210, 2, early=True),
        black_perceived=perceived(1990, 1, early=True),
        white_form=perceived(2866, 2, early=True),
        black_form=perceived(2758, 1, early=True),
        white_algorithm4=algorithm4(2905.5, 2),
        black_algorithm4=algorithm4(2060, 1, bounded=True),
        white_trace=[
            point(1, 2200, 2860, early=True, form=2866),
            point(3, 2210, 2905.5, early=True, form=2866),
        ],
        black_trace=[point(2, 1990, 2060, True, early=True, form=2758)],
        eval=schema.EvalInfo(cp=60, depth=10),
        seq=3,
    )
    static_server.set_board(early)
    for query in LAYOUTS:
        page = open_board(static_server, page_factory, query)
        for color, n in (("white", "2 moves so far"), ("black", "1 move so far")):
            box = page.get_by_test_id(f"{color}-perceived-box")
            expect(box).to_have_attribute("data-state", "early")
            value = page.get_by_test_id(f"{color}-headline")
            expect(value).to_have_text("too early")
            expect(value).to_have_attribute("data-value", "")
            expect(page.get_by_test_id(f"{color}-headline-moves")).to_have_text(n)
            expect(page.get_by_test_id(f"{color}-headline-moves")).to_be_visible()
            expect(page.get_by_test_id(f"{color}-headline-interval")).to_be_hidden()
            expect(page.get_by_test_id(f"{color}-moves-alone")).to_be_hidden()
            expect(page.get_by_test_id(f"{color}-headline-diff")).to_have_text("")
            expect(page.get_by_test_id(f"{color}-headline-bound")).to_have_text("")
            shown = box.inner_text()
            assert not re.search(r"\d{3}", shown), shown  # no rating, bounded or not
    page = open_board(static_server, page_factory)
    drawn = page.eval_on_selector_all(
        '[data-testid="trace-white-point"], [data-testid="trace-black-point"]',
        "ps => ps.map(p => [p.dataset.ply, p.dataset.early, p.dataset.rating])",
    )
    assert sorted(drawn) == [["1", "true", ""], ["2", "true", ""], ["3", "true", ""]]
    assert page.locator('[data-testid="trace-svg"] .band').count() == 0
    assert page.locator('[data-testid="trace-svg"] .line').count() == 0
    assert page.locator('[data-testid="trace-svg"] .endlabel').count() == 0
    expect(page.get_by_test_id("trace-early-zone")).to_contain_text("too early to tell")

    # the multi-board view says so too
    page.goto(f"{static_server.url}/overlay/boards")
    card = page.locator('[data-testid="board-card"][data-board-id="r1-b1"]')
    expect(card.get_by_test_id("white-headline")).to_have_text("too early")
    expect(card.get_by_test_id("white-headline-moves")).to_have_text("2 moves so far")
    assert not re.search(r"\d{3}", card.locator(".perc").first.inner_text())

    # Algorithm 4 on request still shows its (clamped) figure
    page = open_board(static_server, page_factory, "&rating=algorithm4")
    expect(page.get_by_test_id("black-headline")).to_have_text("2060")
    expect(page.get_by_test_id("black-headline-bound")).to_have_text("\u2264")


def labelled_board(**kw: Any) -> schema.BoardState:
    """Carlsen (2865) is rated above the model's range: his number comes with the
    label "extrapolated"; Black (2100) is inside it."""
    base: dict[str, Any] = dict(
        black=schema.Player(name="Club, Player", federation="NED", rating=2100),
        white_perceived=perceived(1950.4, 6, label="extrapolated"),
        white_form=perceived(2801, 6, label="extrapolated"),
        black_perceived=perceived(2410, 6),
        black_form=perceived(2150, 6),
    )
    base.update(kw)
    return board(**base)


def test_a_player_outside_the_models_range_gets_his_number_and_its_label(
    static_server: StaticServer, page_factory: Any
) -> None:
    """A player rated outside the ratings the model was validated on: his form,
    its difference to FIDE and the moves alone beside it, with the model's label;
    a line in the chart as for everyone."""
    static_server.set_board(labelled_board())
    for query in ("", "&layout=compact", "&layout=lower-third"):
        page = open_board(static_server, page_factory, query)
        box = page.get_by_test_id("white-perceived-box")
        expect(box).to_have_attribute("data-state", "estimate")
        value = page.get_by_test_id("white-headline")
        expect(value).to_have_text("2801")
        expect(value).to_have_attribute("data-value", "2801")
        note = page.get_by_test_id("white-headline-note")
        expect(note).to_have_text("extrapolated")
        expect(note).to_be_visible()
        expect(page.get_by_test_id("white-moves-alone")).to_have_text(
            "moves alone 1950 (1540\u20132330)"
        )
        expect(page.get_by_test_id("white-headline-diff")).to_have_text("\u221264 vs FIDE")
        expect(page.get_by_test_id("black-headline")).to_have_text("2150")
        expect(page.get_by_test_id("black-headline-note")).to_have_text("")
        expect(page.get_by_test_id("black-headline-diff")).to_have_text("+50 vs FIDE")
    page = open_board(static_server, page_factory)
    drawn = page.eval_on_selector_all(
        '[data-testid="trace-white-point"]',
        "ps => ps.map(p => [p.dataset.ply, p.dataset.rating, p.getAttribute('class')])",
    )
    assert drawn == [["1", "", "point early"], ["3", "2870", "point"], ["5", "2890.4", "point"]]
    # the multi-board view: the number and the label
    page.goto(f"{static_server.url}/overlay/boards")
    card = page.locator('[data-testid="board-card"][data-board-id="r1-b1"]')
    expect(card.get_by_test_id("white-headline")).to_have_text("2801")
    expect(card.get_by_test_id("white-headline-note")).to_have_text("extrapolated")
    expect(card.get_by_test_id("white-headline-diff")).to_have_text("\u221264")
    expect(card.get_by_test_id("black-headline-note")).to_have_count(0)


def test_shown_chances_are_the_human_model_s_and_the_engine_s_are_labelled(
    static_server: StaticServer, page_factory: Any
) -> None:
    """The eval bar's W/D/L shows the message's ``wdl`` (the human model's); the
    engine's own, ``engine_wdl``, only under the label "Engine W/D/L"; without a
    human model (``wdl_model`` null) the engine's line is not shown twice."""
    ev = schema.EvalInfo(
        cp=35,
        wdl=schema.Wdl(win=412, draw=401, loss=187),
        engine_wdl=schema.Wdl(win=24, draw=973, loss=3),
        wdl_model="toy-human",
        depth=10,
        best="Nf3",
    )
    static_server.set_board(board(eval=ev))
    page = open_board(static_server, page_factory)
    for k, text, permille in (("win", "41%", 412), ("draw", "40%", 401), ("loss", "19%", 187)):
        expect(page.get_by_test_id(f"wdl-{k}")).to_have_text(text)
        expect(page.get_by_test_id(f"wdl-{k}")).to_have_attribute("data-permille", str(permille))
    line = page.get_by_test_id("engine-wdl")
    expect(line).to_be_visible()
    expect(line).to_contain_text("Engine W/D/L")
    expect(page.get_by_test_id("engine-wdl-win")).to_have_text("2%")
    expect(page.get_by_test_id("engine-wdl-draw")).to_have_text("97%")
    expect(page.get_by_test_id("engine-wdl-loss")).to_have_attribute("data-permille", "3")
    # the eval bar widget shows the same chances
    page.goto(f"{static_server.url}/overlay/static/widget-evalbar.html?board=r1-b1")
    expect(page.get_by_test_id("wdl-win")).to_have_text("41%")
    # no human model: `wdl` is the engine's own, shown once
    plain = ev.model_copy(
        update={"wdl": ev.engine_wdl, "wdl_model": None, "engine_wdl": ev.engine_wdl}
    )
    static_server.set_board(board(eval=plain, seq=5))
    page = open_board(static_server, page_factory)
    expect(page.get_by_test_id("wdl-draw")).to_have_text("97%")
    expect(page.get_by_test_id("engine-wdl")).to_be_hidden()


def test_without_a_calibrated_model(static_server: StaticServer, page_factory: Any) -> None:
    """No calibrated model on the server: ``*_perceived`` is null and trace points
    have no rating. The cards show a dash (never Algorithm 4 in its place)."""
    bare = board(
        white_perceived=None,
        black_perceived=None,
        white_form=None,
        black_form=None,
        white_trace=[point(1, None, 2860), point(3, None, 2905.5), point(5, None, 2905.5)],
        black_trace=[point(2, None, 2060, True), point(4, None, 2060, True)],
    )
    static_server.set_board(bare)
    page = open_board(static_server, page_factory)
    for color in ("white", "black"):
        expect(page.get_by_test_id(f"{color}-perceived-box")).to_have_attribute(
            "data-state", "none"
        )
        expect(page.get_by_test_id(f"{color}-headline")).to_have_text("\u2013")
        expect(page.get_by_test_id(f"{color}-headline-diff")).to_have_text("")
    expect(page.locator('[data-testid="trace-white-point"]')).to_have_count(3)
    expect(page.get_by_test_id("trace-early-zone")).to_contain_text("no calibrated rating")
    assert page.locator('[data-testid="trace-svg"] .band').count() == 0
    page = open_board(static_server, page_factory, "&rating=algorithm4")
    expect(page.get_by_test_id("white-headline")).to_have_text("2906")


def test_takeback_and_finish(static_server: StaticServer, page: Any) -> None:
    # a takeback to ply 2 (the operator corrected 2.exf5 g5), then the game ends
    after = board(
        moves=board().moves[:2],
        white_trace=[point(1, 2200, 2860, early=True)],
        black_trace=[point(2, 1900, 2060, True, early=True)],
        seq=5,
        eval=schema.EvalInfo(cp=80, depth=10),
        white_perceived=perceived(2200, 1, early=True),
        black_perceived=perceived(1900, 1, early=True),
        white_algorithm4=algorithm4(2860, 1),
        black_algorithm4=algorithm4(2060, 1, bounded=True),
    )
    update = schema.Update(
        board_id="r1-b1",
        seq=5,
        truncate_to=2,
        fen=after.fen,
        eval=after.eval,
        white_perceived=after.white_perceived,
        black_perceived=after.black_perceived,
        white_algorithm4=after.white_algorithm4,
        black_algorithm4=after.black_algorithm4,
        head_to_head=after.head_to_head,
        clocks=after.clocks,
        match=after.match,
        result="*",
        status="live",
    )
    expect(page.get_by_test_id("white-headline")).to_have_text("2890")
    static_server.publish(update, after)
    expect(page.locator('[data-testid="trace-white-point"]')).to_have_count(1)
    expect(page.locator('[data-testid="trace-black-point"]')).to_have_count(1)
    expect(page.get_by_test_id("last-move")).to_have_text("1\u2026 f5")
    expect(page.get_by_test_id("eval-cp")).to_have_text("+0.80")
    # taken back to one move each: too early again
    expect(page.get_by_test_id("white-headline")).to_have_text("too early")
    expect(page.get_by_test_id("white-headline-moves")).to_have_text("1 move so far")
    expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-gaps", "0")

    final = after.model_copy(update={"result": "1-0", "status": "finished", "seq": 6})
    done = update.model_copy(
        update={"seq": 6, "truncate_to": None, "result": "1-0", "status": "finished"}
    )
    static_server.publish(done, final)
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "finished")
    expect(page.get_by_test_id("status")).to_have_text("FINAL")
    expect(page.get_by_test_id("result")).to_have_text("1-0")


def test_a_gap_in_seq_fetches_a_fresh_snapshot(static_server: StaticServer, page: Any) -> None:
    # seq jumps from 4 to 9: the page must not apply it but ask for the board again
    later = board(seq=9, eval=schema.EvalInfo(cp=-150, depth=10))
    skipped = schema.Update(
        board_id="r1-b1", seq=9, fen=later.fen, eval=later.eval, result="*", status="live"
    )
    static_server.publish(skipped, later)
    overlay = page.get_by_test_id("board-overlay")
    expect(overlay).to_have_attribute("data-gaps", "1")
    expect(overlay).to_have_attribute("data-snapshots", "2")
    expect(page.get_by_test_id("eval-cp")).to_have_text("\u22121.50")
    expect(overlay).to_have_attribute("data-fresh", "true")


def test_a_move_waiting_for_its_evaluation(static_server: StaticServer, page: Any) -> None:
    # 3.Nf3 arrives; the engine has not evaluated the new position yet
    moves = [
        *board().moves,
        schema.Ply(ply=5, san="Nf3", uci="g1f3", color="white", clock=5250),
    ]
    after = board(moves=moves, eval=None, seq=5)
    update = schema.Update(
        board_id="r1-b1",
        seq=5,
        ply=moves[-1],
        fen=after.fen,
        eval=None,
        white_perceived=after.white_perceived,
        black_perceived=after.black_perceived,
        white_algorithm4=after.white_algorithm4,
        black_algorithm4=after.black_algorithm4,
        head_to_head=after.head_to_head,
        clocks=after.clocks,
        result="*",
        status="live",
    )
    static_server.publish(update, after)
    expect(page.get_by_test_id("last-move")).to_have_text("3. Nf3")
    expect(page.locator('[data-testid="move"]').last).to_have_attribute("data-ply", "5")
    expect(page.get_by_test_id("last-move-gain")).to_have_text("evaluating…")
    # the bar keeps the last known evaluation, marked as pending
    expect(page.get_by_test_id("eval-bar")).to_have_attribute("data-pending", "true")
    expect(page.get_by_test_id("eval-cp")).to_have_text("#2")
