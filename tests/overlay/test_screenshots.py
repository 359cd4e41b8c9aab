"""Screenshots of every overlay page at broadcast size, from a live replay of
the project's demo round (a club Open, inside the range the shipped models are
validated for), analysed at depth 10 with the shipped calibrated
perceived-rating model for that depth (the tests' hand-made one when none is
shipped: then the pictures are for checking, not for the docs).

They land in artifacts/overlays/ (the current ones are kept in docs/overlays/).
The test also checks what makes an overlay readable on stream: large type for
the key figures, nothing spilling out of the 1920x1080 frame.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from livegain.cli.demo import DEMO_EVENT, demo_points_before

from ._live import (
    GAME_A,
    ReplayThread,
    Serve,
    board_id_of,
    fresh_state,
    model_for_pictures,
    save_artifact,
    wait_settled,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.slow]

DEMO_ROUND = Path(__file__).resolve().parents[2] / "livegain" / "data" / "demo-round.pgn"
REVEAL = 0.55  # share of the round's moves played when the pictures are taken


def demo_event_toml() -> str:
    """The demo's event (round 5 of a 7-round Swiss, the points of rounds 1-4 carried
    in), as `livegain demo --mqtt` configures it, for the standings and player table."""
    carried = ", ".join(f"{json.dumps(k)} = {v}" for k, v in demo_points_before().items())
    return (
        f'[[events]]\nname = {json.dumps(DEMO_EVENT["name"])}\nformat = "swiss"\n'
        f"rounds = {DEMO_EVENT['rounds']}\nsims = 2000\npoints_before = {{ {carried} }}\n"
    )


def round_one() -> str:
    """The project's demo round (the same pictures with or without ../shared)."""
    return DEMO_ROUND.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def showcase(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[tuple[Serve, ReplayThread, str]]:
    tmp = tmp_path_factory.mktemp("overlay-showcase")
    replay = ReplayThread(round_one())
    # the featured board: the longest game, still being played when the pictures are taken
    first = max(replay.replay.games, key=lambda g: len(g.full.moves)).full
    a = first.white.name.split(",")[0]
    b = first.black.name.split(",")[0]
    match = f'[[matches]]\na = "{a}"\nb = "{b}"\ngames = 2\n\n{demo_event_toml()}'
    serve = Serve(
        tmp,
        replay.url,
        engine_path,
        depth=10,
        matches=match,
        perceived_model=model_for_pictures(tmp),
    )
    try:
        serve.start()
        replay.advance(int(replay.total_plies * REVEAL))
        for i, g in enumerate(replay.replay.games):
            bid = board_id_of(serve, g.full.white.name)
            wait_settled(serve, bid, replay.replay.revealed[i], timeout=120)
        yield serve, replay, board_id_of(serve, first.white.name)
    finally:
        serve.stop()
        replay.close()


def fits_in_frame(page: Any) -> None:
    over = page.evaluate(
        "() => [document.documentElement.scrollWidth > innerWidth,"
        " document.documentElement.scrollHeight > innerHeight]"
    )
    assert over == [False, False], f"{page.url} scrolls: something does not fit the frame"


def font_px(page: Any, testid: str) -> float:
    return float(
        page.evaluate(
            "id => parseFloat(getComputedStyle(document.querySelector(`[data-testid='${id}']`))"
            ".fontSize)",
            testid,
        )
    )


def assert_rating_px(page: Any, number_px: float) -> None:
    """White's large number is set large: at ``number_px`` or more (every player
    gets a number; one rated outside the model's range has its label beside it)."""
    assert font_px(page, "white-headline") >= number_px


def assert_headline_is_form(page: Any, serve: Serve, bid: str) -> None:
    """The demo's players are rated: each card's large number is the message's
    form, the moves alone (the message's perceived rating) beside it, smaller."""
    state = fresh_state(serve.ws_url, bid)
    for color in ("white", "black"):
        form, per = state[f"{color}_form"], state[f"{color}_perceived"]
        assert form is not None and not form["early"], "the shipped model gives a form"
        value = page.get_by_test_id(f"{color}-headline")
        expect(value).to_have_attribute("data-kind", "form")
        expect(value).to_have_text(str(math.floor(form["rating"] + 0.5)))
        alone = page.get_by_test_id(f"{color}-perceived")
        expect(alone).to_have_text(str(math.floor(per["rating"] + 0.5)))
        assert font_px(page, f"{color}-headline") >= 1.5 * font_px(page, f"{color}-perceived")


def shipped_model() -> bool:
    """Whether the pictures are taken with a shipped model (with forward curves: forms)."""
    from livegain.models.perceived import load_perceived_models

    return bool(load_perceived_models())


def open_board(page: Any, serve: Serve, query: str) -> None:
    page.goto(f"{serve.url}/overlay/board?{query}")
    expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
    expect(page.get_by_test_id("white-headline")).not_to_have_text("–")
    page.wait_for_timeout(800)  # let the eval bar's transition finish


def test_board_screenshots(showcase: tuple[Serve, ReplayThread, str], page_factory: Any) -> None:
    serve, _, bid = showcase
    page = page_factory(1920, 1080)
    open_board(page, serve, f"board={bid}")
    fits_in_frame(page)
    assert_rating_px(page, 48)
    if shipped_model():
        assert_headline_is_form(page, serve, bid)
    assert font_px(page, "white-name") >= 32
    assert font_px(page, "eval-cp") >= 22
    assert page.locator('[data-testid="trace-white-point"]').count() > 5
    # the board and the evaluation graph have their room in the full layout
    board = page.get_by_test_id("board-svg").bounding_box()
    assert board is not None and board["width"] >= 360
    assert page.locator('[data-testid="evalgraph-point"]').count() > 5
    graph = page.get_by_test_id("evalgraph-svg").bounding_box()
    assert graph is not None and graph["height"] >= 80
    save_artifact(page, "board-full.png")

    open_board(page, serve, f"board={bid}&theme=light")
    fits_in_frame(page)
    save_artifact(page, "board-full-light.png")

    open_board(page, serve, f"board={bid}&rating=algorithm4")
    fits_in_frame(page)
    expect(page.get_by_test_id("white-headline-label")).to_have_text("Algorithm 4 (paper)")
    save_artifact(page, "board-full-algorithm4.png")

    open_board(page, serve, f"board={bid}&layout=compact")
    fits_in_frame(page)
    assert_rating_px(page, 36)
    save_artifact(page, "board-compact.png")

    lower = page_factory(1920, 280)
    open_board(lower, serve, f"board={bid}&layout=lower-third&bg=transparent")
    fits_in_frame(lower)
    assert_rating_px(lower, 40)
    save_artifact(lower, "board-lower-third.png", omit_background=True)


def test_corner_and_widget_screenshots(
    showcase: tuple[Serve, ReplayThread, str], page_factory: Any
) -> None:
    """The corner layout and each widget alone, at the sizes docs/obs.md suggests."""
    serve, _, bid = showcase
    corner = page_factory(560, 720)
    open_board(corner, serve, f"board={bid}&layout=corner")
    fits_in_frame(corner)
    assert_rating_px(corner, 32)
    assert font_px(corner, "white-name") >= 22
    board = corner.get_by_test_id("board-svg").bounding_box()
    assert board is not None and board["width"] >= 440
    save_artifact(corner, "board-corner.png")

    for name, (width, height), query in (
        ("board", (560, 620), ""),
        ("evalgraph", (1000, 240), ""),
        ("evalbar", (720, 130), ""),
        ("evalbar", (100, 620), "&orient=vertical"),
    ):
        page = page_factory(width, height)
        page.goto(f"{serve.url}/overlay/static/widget-{name}.html?board={bid}{query}")
        expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true")
        page.wait_for_timeout(800)  # the eval bar's transition
        fits_in_frame(page)
        shot = f"widget-{name}{'-vertical' if query else ''}.png"
        save_artifact(page, shot, omit_background=True)


def test_multi_board_and_index_screenshots(
    showcase: tuple[Serve, ReplayThread, str], page_factory: Any
) -> None:
    serve, replay, bid = showcase
    page = page_factory(1920, 1080)
    page.goto(f"{serve.url}/overlay/boards")
    expect(page.get_by_test_id("board-card")).to_have_count(len(replay.replay.games))
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "live")
    page.wait_for_timeout(800)
    fits_in_frame(page)
    assert font_px(page, "white-name") >= 22
    save_artifact(page, "boards.png")

    page.goto(f"{serve.url}/")
    expect(page.get_by_test_id("board-row")).to_have_count(len(replay.replay.games))
    row = page.locator(f'[data-testid="board-row"][data-board-id="{bid}"]')
    row.get_by_role("button", name="Preview").click()
    inner = page.frame_locator('[data-testid="preview"]')
    expect(inner.get_by_test_id("status")).to_have_attribute("data-state", "live")
    page.wait_for_timeout(800)
    save_artifact(page, "index.png")


class MomentCollector:
    """A WebSocket client of every board that keeps each ``moment`` message in order.
    :meth:`drain` waits for the server's answer to a ping: the moments the server
    sent before it are all here then."""

    def __init__(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(connect(ws_url, open_timeout=5))
        assert json.loads(self.ws.recv(timeout=5))["type"] == "hello"
        self.moments: list[dict[str, Any]] = []
        self.pongs = 0
        self.lock = threading.Lock()
        self.ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with contextlib.suppress(Exception):
            for raw in self.ws:
                msg = json.loads(raw)
                with self.lock:
                    if msg["type"] == "moment":
                        self.moments.append(msg)
                    elif msg["type"] == "pong":
                        self.pongs += 1

    def drain(self, timeout: float = 10.0) -> list[dict[str, Any]]:
        with self.lock:
            seen = self.pongs
        self.ws.send(json.dumps({"type": "ping"}))
        wait_until(lambda: self.pongs > seen, timeout, "the server's pong")
        with self.lock:
            return list(self.moments)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stack.close()
        self.thread.join(5)


def shown_moments(page: Any) -> list[tuple[str, int, str]]:
    return [
        (str(b), int(p), str(k))
        for b, p, k in page.eval_on_selector_all(
            '[data-testid="moment"]',
            "rows => rows.map(r => [r.dataset.board, r.dataset.ply, r.dataset.kind])",
        )
    ]


def test_producer_and_moments_screenshots(
    showcase: tuple[Serve, ReplayThread, str], page_factory: Any
) -> None:
    """The producer's view at 55 % of the round; then the key moments widget, open
    while the rest of the round is played (the moments so far come when it opens,
    the others as they happen), at the end of the round. It plays the round out."""
    serve, replay, _ = showcase
    games = replay.replay.games

    # the producer's view, for the crew (a 1920 x 1080 screen, not a stream scene)
    page = page_factory(1920, 1080)
    page.goto(f"{serve.url}/overlay/producer")
    expect(page.get_by_test_id("producer")).to_have_attribute("data-state", "ok")
    expect(page.get_by_test_id("producer-row")).to_have_count(len(games))
    ranks = page.eval_on_selector_all(
        '[data-testid="producer-rank"]', "cells => cells.map(c => c.textContent)"
    )
    assert ranks == [str(i + 1) for i in range(len(games))]
    for reason in page.get_by_test_id("producer-reason").all_text_contents():
        assert reason.strip(), "a board without its reason"
    for button in page.get_by_test_id("producer-copy").all():
        assert "/overlay/board?board=" in (button.get_attribute("data-url") or "")
    fits_in_frame(page)
    assert font_px(page, "producer-game") >= 16
    save_artifact(page, "producer.png")

    # the key moments widget (720 x 660, its default 8 rows)
    widget = page_factory(720, 660)
    widget.goto(f"{serve.url}/overlay/static/widget-moments.html")
    expect(widget.get_by_test_id("widget")).to_have_attribute("data-fresh", "true")
    collector = MomentCollector(serve.ws_url)
    try:
        collector.drain()  # subscribed before the round goes on
        replay.advance(replay.total_plies)
        for i, g in enumerate(games):
            bid = board_id_of(serve, g.full.white.name)
            wait_settled(serve, bid, replay.replay.revealed[i], timeout=180)
        # each moment once, as the widget keeps it (board, ply, kind)
        sent = list({(m["board_id"], m["ply"], m["kind"]): m for m in collector.drain()}.values())
    finally:
        collector.close()
    ends = [m for m in sent if m["kind"] == "game-end"]
    assert len(ends) == len(games), ends  # every game of the round ended
    wait_until(
        lambda: widget.get_by_test_id("widget").get_attribute("data-count") == str(len(sent)),
        20,
        f"the widget to have the {len(sent)} moments sent",
    )
    newest = [(m["board_id"], m["ply"], m["kind"]) for m in reversed(sent)][:8]
    assert shown_moments(widget) == newest
    expect(widget.get_by_test_id("waiting")).to_be_hidden()
    fits_in_frame(widget)
    assert font_px(widget, "moment-move") >= 20
    assert font_px(widget, "moment-kind") >= 14
    save_artifact(widget, "widget-moments.png", omit_background=True)


def test_standings_screenshot(showcase: tuple[Serve, ReplayThread, str], page_factory: Any) -> None:
    """The demo Open's standings in round 5 of 7: the chances of first place and of
    the top 3 are of the whole event (rounds 6 and 7 simulated, each paired as a
    Swiss), the page's numbers those of the standings message."""
    serve, _, _ = showcase
    quoted = urllib.parse.quote(DEMO_EVENT["name"])

    def message() -> dict[str, Any] | None:
        with urllib.request.urlopen(f"{serve.url}/api/standings/{quoted}", timeout=5) as r:
            msg: dict[str, Any] = json.loads(r.read())
        return msg if msg["sims"] > 0 else None

    msg = wait_until(message, 60, "the demo Open's odds")
    assert (msg["round"], msg["rounds"], msg["top_k"]) == (5, 7, 3)
    assert math.isclose(sum(r["top"] for r in msg["rows"]), 3.0, abs_tol=1e-6)
    assert math.isclose(sum(r["win"] for r in msg["rows"]), 1.0, abs_tol=1e-6)
    assert "only round" not in (msg["note"] or "")
    page = page_factory(1000, 600)
    page.goto(f"{serve.url}/overlay/static/widget-standings.html?event={quoted}")
    widget = page.get_by_test_id("widget")
    expect(widget).to_have_attribute("data-fresh", "true")
    expect(page.get_by_test_id("head-win")).to_have_text("1st place")
    expect(page.get_by_test_id("head-top")).to_have_text("Top 3")
    expect(page.get_by_test_id("standings-round")).to_have_text("round 5 of 7")

    def shown() -> list[tuple[str, float, float]]:
        return [
            (k, float(p), float(t))
            for k, p, t in page.eval_on_selector_all(
                '[data-testid="standings-row"]',
                """rows => rows.map(r => [r.dataset.key,
                    r.querySelector('[data-testid="row-win"]').dataset.p,
                    r.querySelector('[data-testid="row-top"]').dataset.p])""",
            )
        ]

    def latest_shown() -> bool:
        m = message()
        return m is not None and shown() == [(r["key"], r["win"], r["top"]) for r in m["rows"]]

    wait_until(latest_shown, 20, "the page to show the latest standings")
    fits_in_frame(widget)
    save_artifact(widget, "widget-standings.png", omit_background=True)


def test_player_table_screenshot(
    showcase: tuple[Serve, ReplayThread, str], page_factory: Any
) -> None:
    """The player table at the end of the round (after the moments' test played it
    out): every player's points, performance, rating change, perceived rating and
    accuracy over the event, the numbers those of the standings message."""
    serve, replay, _ = showcase
    quoted = urllib.parse.quote(DEMO_EVENT["name"])

    def finished() -> dict[str, Any] | None:
        with urllib.request.urlopen(f"{serve.url}/api/standings/{quoted}", timeout=5) as r:
            msg: dict[str, Any] = json.loads(r.read())
        done = msg["finished"] == len(replay.replay.games) and all(
            row["accuracy"] for row in msg["rows"]
        )
        return msg if done else None

    wait_until(finished, 60, "the standings of the finished round")
    page = page_factory(1000, 660)
    page.goto(f"{serve.url}/overlay/static/widget-players.html?event={quoted}")
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true")

    def shown() -> list[list[str]]:
        return list(
            page.eval_on_selector_all(
                '[data-testid="player-row"]',
                """rows => rows.map(r => [r.dataset.key,
                    r.querySelector('[data-testid="player-performance-value"]').textContent,
                    r.querySelector('[data-testid="player-accuracy"]').textContent])""",
            )
        )

    def latest_shown() -> bool:
        """The page shows the latest message (the last evaluations may still move it)."""
        msg = finished()
        return msg is not None and shown() == [
            [r["key"], str(math.floor(r["performance"] + 0.5)), f"{r['accuracy']['overall']:.1f}"]
            for r in msg["rows"]
        ]

    wait_until(latest_shown, 30, "the page's table to be the latest standings message")
    fits_in_frame(page)
    assert font_px(page, "player-points") >= 20
    save_artifact(page, "widget-players.png", omit_background=True)


def test_too_early_screenshot(
    tmp_path: Path, engine_path: str, chromium_path: str, page_factory: Any
) -> None:
    """The opening of a game: too few moves for the calibrated rating to say anything."""
    replay = ReplayThread(GAME_A)
    serve = Serve(tmp_path, replay.url, engine_path, perceived_model=model_for_pictures(tmp_path))
    try:
        serve.start()
        replay.advance(5)
        bid = board_id_of(serve, "Fischer, Robert J.")
        wait_settled(serve, bid, 5)
        page = page_factory(1920, 1080)
        page.goto(f"{serve.url}/overlay/board?board={bid}")
        expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
        expect(page.get_by_test_id("white-headline")).to_have_text("too early")
        expect(page.get_by_test_id("white-headline-moves")).to_have_text("3 moves so far")
        expect(page.get_by_test_id("black-headline")).to_have_text("too early")
        page.wait_for_timeout(800)
        fits_in_frame(page)
        save_artifact(page, "board-early.png")
    finally:
        serve.stop()
        replay.close()
