"""The board overlay, the multi-board view and the index page, against a real
``livegain serve`` fed by a replay (one server for the module).

The page must show what the server says: the test connects its own WebSocket
client, subscribes to the same board and compares the DOM with the server's
latest ``update`` and with a fresh ``snapshot``.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from ._live import (
    TEST_MIN_MOVES,
    XSS_NAME,
    ReplayThread,
    Serve,
    SilentLinkProxy,
    WsWatcher,
    board_id_of,
    fresh_state,
    headline,
    wait_settled,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.slow]

MINUS = "\u2212"


def js_round(x: float) -> int:
    """JavaScript's Math.round (halves go up), which the page uses."""
    return math.floor(x + 0.5)


def signed(x: float, digits: int = 0) -> str:
    """The page's signed-number format (a real minus sign, no "+0")."""
    r = round(x, digits) if digits else js_round(x)
    if r == 0:
        return f"{0:.{digits}f}"
    return ("+" if r > 0 else MINUS) + f"{abs(r):.{digits}f}"


def eval_text(ev: dict[str, Any]) -> str:
    if ev.get("mate") is not None:
        m = ev["mate"]
        return "#" if m == 0 else f"#{m}" if m > 0 else f"#{MINUS}{abs(m)}"
    return signed(ev["cp"] / 100, 2)


def clock_text(s: int) -> str:
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def points(page: Any, color: str) -> int:
    return int(page.locator(f'[data-testid="trace-{color}-point"]').count())


def js_number(x: float) -> str:
    """``String(x)`` in JavaScript, for the floats the protocol carries."""
    return repr(float(x)).removesuffix(".0")


def shown_value(per: dict[str, Any] | None) -> str:
    """The page's data-value for a calibrated rating: the number, or "" while early."""
    return "" if per is None or per["early"] else js_number(per["rating"])


def shows_update(page: Any, update: dict[str, Any] | None) -> bool:
    if update is None:
        return False
    for color in ("white", "black"):
        want = shown_value(headline(update, color))
        if page.get_by_test_id(f"{color}-headline").get_attribute("data-value") != want:
            return False
    return True


def expect_shows_rating(
    page: Any,
    color: str,
    per: dict[str, Any] | None,
    official: int | None,
    form: dict[str, Any] | None = None,
) -> None:
    """The card shows the message's large number: the player's form when the
    message carries one (a rated player, a model with forward curves), labelled
    as such with its difference to his FIDE rating ("vs FIDE") and the moves alone
    (``per``) with its 95 % interval beside it; else the moves alone with its
    interval ("Perceived · moves alone"); "too early" and no number while early."""
    value = page.get_by_test_id(f"{color}-headline")
    box = page.get_by_test_id(f"{color}-perceived-box")
    if per is None:  # no move yet
        expect(box).to_have_attribute("data-state", "none")
        expect(value).to_have_text("–")
        return
    rated = bool(official) and form is not None
    head = form if rated else per
    assert head is not None
    expect(box).to_have_attribute("data-headline", "form" if rated else "perceived")
    expect(page.get_by_test_id(f"{color}-headline-label")).to_have_text(
        "Form \u00b7 playing at" if rated else "Perceived \u00b7 moves alone"
    )
    if head["early"]:
        expect(box).to_have_attribute("data-state", "early")
        expect(value).to_have_text("too early")
        expect(value).to_have_attribute("data-value", "")
        moves = head["moves"]
        expect(page.get_by_test_id(f"{color}-headline-moves")).to_have_text(
            f"{moves} move{'' if moves == 1 else 's'} so far" if moves else "no moves yet"
        )
        expect(page.get_by_test_id(f"{color}-headline-interval")).to_be_hidden()
        expect(page.get_by_test_id(f"{color}-moves-alone")).to_be_hidden()
        expect(page.get_by_test_id(f"{color}-headline-diff")).to_have_text("")
        # no number anywhere in the block, not even a bounded one like "≤2060"
        text = box.inner_text()
        assert not any(ch.isdigit() for ch in text.replace(str(moves), "", 1)), text
        return
    expect(box).to_have_attribute("data-state", "estimate")
    expect(value).to_have_text(str(js_round(head["rating"])))
    expect(value).to_have_attribute("data-value", js_number(head["rating"]))
    expect(page.get_by_test_id(f"{color}-headline-bound")).to_have_text("")
    diff = page.get_by_test_id(f"{color}-headline-diff")
    if rated:
        assert form is not None and official
        expect(diff).to_have_text(f"{signed(js_round(form['rating']) - official)} vs FIDE")
        expect(page.get_by_test_id(f"{color}-headline-interval")).to_be_hidden()
        expect(page.get_by_test_id(f"{color}-moves-alone")).to_be_visible()
        alone = page.get_by_test_id(f"{color}-perceived")
        expect(alone).to_have_text(str(js_round(per["rating"])))
        expect(alone).to_have_attribute("data-value", js_number(per["rating"]))
        low, high = f"{color}-perceived-low", f"{color}-perceived-high"
    else:
        expect(diff).to_have_text("")
        expect(page.get_by_test_id(f"{color}-moves-alone")).to_be_hidden()
        low, high = f"{color}-headline-low", f"{color}-headline-high"
    expect(page.get_by_test_id(low)).to_have_text(str(js_round(per["low"])))
    expect(page.get_by_test_id(high)).to_have_text(str(js_round(per["high"])))


def expect_trace(page: Any, color: str, trace: list[dict[str, Any]]) -> None:
    """The chart has one point per trace point, on the player's form (his large
    number), early ones marked (and without a value)."""
    points = page.locator(f'[data-testid="trace-{color}-point"]')
    expect(points).to_have_count(len(trace))
    drawn = page.eval_on_selector_all(
        f'[data-testid="trace-{color}-point"]',
        "ps => ps.map(p => [Number(p.dataset.ply), p.dataset.early, p.dataset.rating])",
    )
    want = [
        [p["ply"], "true", ""]
        if p["early"]
        else [p["ply"], "false", js_number((p["form"] or p)["rating"])]
        for p in trace
    ]
    assert drawn == want
    # beside a form line, the moves alone: the secondary line under it
    measured = [p for p in trace if not p["early"]]
    if measured and all(p["form"] for p in trace):
        expect(page.get_by_test_id(f"trace-{color}-perceived")).to_have_attribute(
            "data-ratings", ",".join(js_number(p["rating"]) for p in measured)
        )


def expect_matches_state(page: Any, state: dict[str, Any]) -> None:
    """Every value the overlay shows equals the server's."""
    for color in ("white", "black"):
        player = state[color]
        expect(page.get_by_test_id(f"{color}-name")).to_have_text(player["name"])
        expect(page.get_by_test_id(f"{color}-rating")).to_have_text(str(player["rating"]))
        if player.get("title"):
            expect(page.get_by_test_id(f"{color}-title")).to_have_text(player["title"])
        expect_shows_rating(
            page, color, state[f"{color}_perceived"], player["rating"], state[f"{color}_form"]
        )
        expect_trace(page, color, state[f"{color}_trace"])
        clock = state["clocks"][color]
        if clock is not None:
            expect(page.get_by_test_id(f"{color}-clock")).to_have_text(clock_text(clock))
        # his accuracy in this game, once known (one decimal, as the server rounds it)
        acc = state[f"{color}_accuracy"]
        box = page.get_by_test_id(f"{color}-accuracy-box")
        if acc is None or acc["overall"] is None:
            expect(box).to_be_hidden()
        else:
            expect(box).to_be_visible()
            expect(page.get_by_test_id(f"{color}-accuracy")).to_have_text(f"{acc['overall']:.1f} %")
            expect(box).to_have_attribute("title", re.compile(rf"{acc['moves']} moves?$"))

    ev = state["eval"]
    cp = page.get_by_test_id("eval-cp")
    expect(cp).to_have_attribute("data-cp", str(ev["cp"]))
    expect(cp).to_have_text(eval_text(ev))
    if ev.get("wdl"):
        for k in ("win", "draw", "loss"):
            expect(page.get_by_test_id(f"wdl-{k}")).to_have_attribute(
                "data-permille", str(ev["wdl"][k])
            )

    h2h = state["head_to_head"]
    if h2h is not None:
        expect(page.get_by_test_id("h2h-white")).to_have_text(f"{h2h['white_expected']:.2f}")
        expect(page.get_by_test_id("h2h-black")).to_have_text(f"{h2h['black_expected']:.2f}")

    last = state["moves"][-1]
    number = (last["ply"] + 1) // 2
    prefix = f"{number}." if last["ply"] % 2 == 1 else f"{number}\u2026"
    expect(page.get_by_test_id("last-move")).to_have_text(f"{prefix} {last['san']}")
    expect(page.get_by_test_id("last-move-gain")).to_have_attribute("data-value", str(last["gain"]))
    # the move list ends with the newest move, whatever room it has
    expect(page.locator('[data-testid="move"]').last).to_have_attribute(
        "data-ply", str(last["ply"])
    )
    big = last["gain"] <= -100
    expect(page.get_by_test_id("last-move-box")).to_have_attribute(
        "data-severity", "big-loss" if big else ("loss" if last["gain"] <= -50 else "")
    )


def test_board_overlay_follows_the_replay_ply_by_ply(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    if replay.replay.position:
        replay.reset()  # another test of this module played the round: start it again
    bid = board_id_of(serve, "Fischer, Robert J.")
    wait_until(lambda: fresh_state(serve.ws_url, bid)["moves"] == [], 20, "a board with no moves")
    watcher = WsWatcher(serve.ws_url, [bid])
    try:
        page = page_factory()
        page.goto(f"{serve.url}/overlay/board?board={bid}")
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "live")
        expect(page.get_by_test_id("white-name")).to_have_text("Fischer, Robert J.")
        expect(page.get_by_test_id("black-name")).to_have_text("Spassky, Boris V.")

        index = next(
            i for i, g in enumerate(replay.replay.games) if g.full.white.name.startswith("Fischer")
        )
        seen = 0
        states: set[str] = set()  # the calibrated ratings' states seen on the way
        while not replay.replay.finished:
            replay.advance(1)
            revealed = replay.replay.revealed[index]
            if revealed == seen:
                continue
            seen = revealed
            # one trace point per ply, for the player who moved, once it is evaluated
            wait_until(
                lambda n=revealed: points(page, "white") + points(page, "black") == n,
                30,
                f"{revealed} trace points on the page",
            )
            assert points(page, "white") == (revealed + 1) // 2
            assert points(page, "black") == revealed // 2
            # the perceived ratings shown are those of the server's latest update
            wait_until(
                lambda: shows_update(page, watcher.last_update(bid)),
                10,
                f"the page to show the latest update after ply {revealed}",
            )
            # "too early" with no number before the model's minimum of moves, then the
            # message's own number and interval
            update = watcher.last_update(bid)
            assert update is not None
            for color, official in (("white", 2785), ("black", 2660)):
                per = update[f"{color}_perceived"]
                moves = (revealed + (color == "white")) // 2
                if moves == 0:  # Black before his first move: nothing yet
                    assert per is None
                else:
                    assert per is not None and per["moves"] == moves
                    assert per["early"] == (moves < TEST_MIN_MOVES)
                    states.add("early" if per["early"] else "estimate")
                expect_shows_rating(page, color, per, official, update[f"{color}_form"])
        assert states == {"early", "estimate"}
        total = len(replay.replay.games[index].full.moves)
        assert seen == total
        # the page followed by updates, not by re-reading whole snapshots
        assert int(page.get_by_test_id("board-overlay").get_attribute("data-updates") or 0) >= total

        # The DOM equals the server's latest update ...
        def final_update() -> dict[str, Any] | None:
            u = watcher.last_update(bid)
            if not u or not u["white_perceived"] or not u["black_perceived"]:
                return None
            counted = u["white_perceived"]["moves"] + u["black_perceived"]["moves"]
            return u if counted == total else None

        update = wait_until(final_update, 20, "the update that evaluates the last ply")
        for color in ("white", "black"):
            head = headline(update, color)
            assert head is not None and not head["early"]
            value = page.get_by_test_id(f"{color}-headline")
            expect(value).to_have_attribute("data-value", js_number(head["rating"]))
            expect(value).to_have_text(str(js_round(head["rating"])))

        # ... and every value equals a fresh snapshot of the board.
        state = fresh_state(serve.ws_url, bid)
        assert state["seq"] >= update["seq"]
        assert state["white_accuracy"]["overall"] is not None  # every move evaluated
        assert state["black_accuracy"]["overall"] is not None
        expect_matches_state(page, state)
        expect(page.get_by_test_id("result")).to_have_text(state["result"])
    finally:
        watcher.close()


def test_widgets_and_layouts_from_url_parameters(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, _replay = live_round
    bid = board_id_of(serve, "Polgar, Judit")
    page = page_factory()
    page.goto(f"{serve.url}/overlay/board?board={bid}&show=players,eval&theme=light")
    expect(page.get_by_test_id("white-name")).to_have_text("Polgar, Judit")
    assert page.evaluate("document.body.dataset.theme") == "light"
    expect(page.get_by_test_id("eval-bar")).to_be_visible()
    expect(page.get_by_test_id("trace")).to_be_hidden()
    expect(page.get_by_test_id("h2h")).to_be_hidden()

    page.goto(f"{serve.url}/overlay/board?board={bid}&layout=lower-third&bg=transparent&hide=h2h")
    expect(page.get_by_test_id("white-name")).to_have_text("Polgar, Judit")
    assert page.evaluate("document.body.dataset.layout") == "lower-third"
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg in ("rgba(0, 0, 0, 0)", "transparent")
    expect(page.get_by_test_id("h2h")).to_be_hidden()
    expect(page.get_by_test_id("trace")).to_be_hidden()  # not in the lower third by default
    expect(page.get_by_test_id("last-move-box")).to_be_visible()


def test_hostile_player_name_renders_as_text(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    replay.advance(replay.total_plies)
    bid = board_id_of(serve, XSS_NAME)
    page = page_factory()
    page.goto(f"{serve.url}/overlay/board?board={bid}")
    expect(page.get_by_test_id("white-name")).to_have_text(XSS_NAME)
    expect(page.get_by_test_id("trace-white-label")).to_have_text(XSS_NAME)
    assert page.locator("img").count() == 0
    for path in ("/overlay/boards", "/"):
        page.goto(serve.url + path)
        expect(page.get_by_text(XSS_NAME, exact=True).first).to_be_visible()
        assert page.locator("main img, .wrap img").count() == 0
    # page_factory fails the test if an alert() or a page error happened


def test_multi_board_view_lists_every_board(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    page = page_factory()
    page.goto(f"{serve.url}/overlay/boards")
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "live")
    games = replay.replay.games
    expect(page.get_by_test_id("board-card")).to_have_count(len(games))

    replay.advance(replay.total_plies)
    for g in games:
        bid = board_id_of(serve, g.full.white.name)
        state = wait_settled(serve, bid, len(g.full.moves))
        card = page.locator(f'[data-testid="board-card"][data-board-id="{bid}"]')
        expect(card.get_by_test_id("white-name")).to_have_text(state["white"]["name"])
        expect(card.get_by_test_id("black-name")).to_have_text(state["black"]["name"])
        for color in ("white", "black"):
            per = state[f"{color}_perceived"]
            head = headline(state, color)
            assert head is not None
            value = card.get_by_test_id(f"{color}-headline")
            if head["early"]:
                expect(value).to_have_text("too early")
            else:
                # the form large where there is one, the moves alone beside it
                expect(value).to_have_text(str(js_round(head["rating"])))
                expect(value).to_have_attribute("data-value", js_number(head["rating"]))
                kind = "perceived" if head is per else "form"
                expect(value).to_have_attribute("data-kind", kind)
                if kind == "form":
                    alone = card.get_by_test_id(f"{color}-perceived")
                    expect(alone).to_have_text(str(js_round(per["rating"])))
        expect(card.get_by_test_id("eval-cp")).to_have_attribute(
            "data-cp", str(state["eval"]["cp"])
        )
        result = state["result"]
        expect(card.get_by_test_id("result")).to_have_text("LIVE" if result == "*" else result)
    # board numbers in order
    numbers = [c.inner_text() for c in page.get_by_test_id("board-no").all()]
    assert numbers == sorted(numbers, key=int)
    expect(page.get_by_test_id("legend")).to_contain_text("Large figure: form")

    # rating=algorithm4: the paper's figures instead, said so in the legend
    page.goto(f"{serve.url}/overlay/boards?rating=algorithm4")
    expect(page.get_by_test_id("legend")).to_contain_text("Algorithm 4 (paper)")
    for g in games:
        bid = board_id_of(serve, g.full.white.name)
        state = fresh_state(serve.ws_url, bid)
        card = page.locator(f'[data-testid="board-card"][data-board-id="{bid}"]')
        for color in ("white", "black"):
            a4 = state[f"{color}_algorithm4"]
            value = card.get_by_test_id(f"{color}-headline")
            expect(value).to_have_text(str(js_round(a4["rating"])))
            expect(value).to_have_attribute("data-value", js_number(a4["rating"]))


def test_index_lists_boards_with_overlay_urls_and_preview(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    page = page_factory()
    page.goto(f"{serve.url}/")
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "live")
    rows = page.get_by_test_id("board-row")
    expect(rows).to_have_count(len(replay.replay.games))
    expect(page.get_by_test_id("tournament-name").first).to_contain_text("Overlay Test Open")

    bid = board_id_of(serve, "Polgar, Judit")
    row = page.locator(f'[data-testid="board-row"][data-board-id="{bid}"]')
    url = row.get_by_test_id("board-url").input_value()
    parts = urlsplit(url)
    assert parts.path == "/overlay/board"
    assert parse_qs(parts.query)["board"] == [bid]

    # the picker changes every URL
    page.get_by_test_id("pick-layout").select_option("lower-third")
    expect(page.get_by_test_id("size-hint")).to_have_text("1920 × 280")
    page.get_by_test_id("pick-theme").select_option("light")
    page.get_by_test_id("pick-transparent").check()
    url = row.get_by_test_id("board-url").input_value()
    q = parse_qs(urlsplit(url).query)
    assert q["layout"] == ["lower-third"]
    assert q["theme"] == ["light"]
    assert q["bg"] == ["transparent"]
    assert "rating" not in q  # the calibrated rating is the default
    page.get_by_test_id("pick-rating").select_option("algorithm4")
    url = row.get_by_test_id("board-url").input_value()
    assert parse_qs(urlsplit(url).query)["rating"] == ["algorithm4"]
    boards_url = page.get_by_test_id("boards-url").first.input_value()
    assert parse_qs(urlsplit(boards_url).query)["rating"] == ["algorithm4"]

    # preview shows that very URL, live
    row.get_by_role("button", name="Preview").click()
    frame = page.get_by_test_id("preview")
    expect(frame).to_have_attribute("src", url)
    inner = page.frame_locator('[data-testid="preview"]')
    expect(inner.get_by_test_id("white-name")).to_have_text("Polgar, Judit")
    expect(inner.get_by_test_id("white-headline-label")).to_have_text("Algorithm 4 (paper)")

    # the copied URL opens the same overlay
    page.goto(url)
    expect(page.get_by_test_id("white-name")).to_have_text("Polgar, Judit")
    assert page.evaluate("document.body.dataset.layout") == "lower-third"


def test_a_silent_network_is_detected_and_recovered(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    """No close, no error, just silence: the page must notice by itself (its pings
    go unanswered), stop presenting its figures as live, and reconnect."""
    serve, _ = live_round
    bid = board_id_of(serve, "Polgar, Judit")
    proxy = SilentLinkProxy(serve.port)
    try:
        page = page_factory()
        ws = f"ws://127.0.0.1:{proxy.port}/ws"
        page.goto(f"{serve.url}/overlay/board?board={bid}&ws={ws}&silence=2")
        status = page.get_by_test_id("status")
        overlay = page.get_by_test_id("board-overlay")
        expect(status).to_have_attribute("data-state", "live")
        expect(overlay).to_have_attribute("data-fresh", "true")

        proxy.go_silent()
        expect(status).to_have_attribute("data-state", "reconnecting", timeout=10_000)
        expect(overlay).to_have_attribute("data-fresh", "false")
        page.wait_for_timeout(4000)  # a retry while still silent hangs and is abandoned
        expect(status).to_have_attribute("data-state", "reconnecting")

        proxy.restore()
        expect(status).not_to_have_attribute("data-state", "reconnecting", timeout=20_000)
        expect(overlay).to_have_attribute("data-fresh", "true", timeout=10_000)
        state = fresh_state(serve.ws_url, bid)
        expect(page.get_by_test_id("white-headline")).to_have_attribute(
            "data-value", shown_value(headline(state, "white"))
        )
    finally:
        proxy.close()


def test_lower_third_sparklines_follow_each_players_trace(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    """The lower third's player cards draw each player's perceived rating move
    by move: one point per point of the player's trace."""
    serve, replay = live_round
    replay.advance(replay.total_plies)
    game = next(g for g in replay.replay.games if g.full.white.name == "Polgar, Judit")
    bid = board_id_of(serve, "Polgar, Judit")
    state = wait_settled(serve, bid, len(game.full.moves))
    page = page_factory()
    page.goto(f"{serve.url}/overlay/board?board={bid}&layout=lower-third")
    for color in ("white", "black"):
        spark = page.get_by_test_id(f"{color}-spark")
        expect(spark).to_be_visible()
        trace = state[f"{color}_trace"]
        svg = page.get_by_test_id(f"{color}-spark-svg")
        expect(svg).to_have_attribute("data-points", str(len(trace)))
        # the line joins the points with a value; early ones (too early to tell) have none
        measured = [p for p in trace if not p["early"]]
        assert 2 <= len(measured) < len(trace)
        expect(svg).to_have_attribute("data-early", str(len(trace) - len(measured)))
        line = page.locator(f'[data-testid="{color}-spark-svg"] polyline')
        expect(line).to_have_attribute("data-points", str(len(measured)))
        box = spark.bounding_box()
        assert box is not None and box["height"] >= 20  # it fills the card's free band
    page.goto(f"{serve.url}/overlay/board?board={bid}")
    expect(page.get_by_test_id("white-name")).to_have_text("Polgar, Judit")
    expect(page.get_by_test_id("white-spark")).to_be_hidden()  # the full layout has the chart


def test_algorithm4_on_request(live_round: tuple[Serve, ReplayThread], page_factory: Any) -> None:
    """``rating=algorithm4`` shows the paper's Algorithm 4 (labelled as such) with its
    interval and clamp marks, and charts Algorithm 4's trace, one point per point."""
    serve, replay = live_round
    replay.advance(replay.total_plies)
    game = next(g for g in replay.replay.games if g.full.white.name == "Polgar, Judit")
    bid = board_id_of(serve, "Polgar, Judit")
    state = wait_settled(serve, bid, len(game.full.moves))
    page = page_factory()
    page.goto(f"{serve.url}/overlay/board?board={bid}&rating=algorithm4")
    expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
    expect(page.get_by_test_id("trace-title")).to_have_text("Algorithm 4 (paper), move by move")
    for color in ("white", "black"):
        a4 = state[f"{color}_algorithm4"]
        per = state[f"{color}_perceived"]
        expect(page.get_by_test_id(f"{color}-headline-label")).to_have_text("Algorithm 4 (paper)")
        value = page.get_by_test_id(f"{color}-headline")
        expect(value).to_have_text(str(js_round(a4["rating"])))
        expect(value).to_have_attribute("data-value", js_number(a4["rating"]))
        assert a4["rating"] != per["rating"]  # not the calibrated figure
        expect(page.get_by_test_id(f"{color}-headline-low")).to_have_text(str(js_round(a4["low"])))
        expect(page.get_by_test_id(f"{color}-headline-high")).to_have_text(
            str(js_round(a4["high"]))
        )
        expect(page.get_by_test_id(f"{color}-moves-alone")).to_be_hidden()
        bound = ("\u2264" if a4["difference"] < 0 else "\u2265") if a4["bounded"] else ""
        expect(page.get_by_test_id(f"{color}-headline-bound")).to_have_text(bound)
        official = state[color]["rating"]
        expect(page.get_by_test_id(f"{color}-headline-diff")).to_have_text(
            f"{signed(a4['rating'] - official)} vs FIDE"
        )
        trace = state[f"{color}_trace"]
        drawn = page.eval_on_selector_all(
            f'[data-testid="trace-{color}-point"]',
            "ps => ps.map(p => [Number(p.dataset.ply), Number(p.dataset.rating)])",
        )
        assert drawn == [[p["ply"], p["algorithm4"]["rating"]] for p in trace]
