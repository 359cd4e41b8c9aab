"""The board and evaluation-graph widgets: in the board overlay, in its corner
layout and alone on their own pages (``/overlay/static/widget-*.html``).

The live test replays a game into a real ``livegain serve`` and reads the
position back from the SVG (each piece's ``data-square`` / ``data-piece``),
comparing it with the game itself played by python-chess. The others publish
hand-made boards through the real server component, as test_rendering does.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

import chess
import chess.pgn
import pytest
from playwright.sync_api import expect

from livegain.publish import schema

from ._live import (
    GAME_A,
    ReplayThread,
    Serve,
    StaticServer,
    WsWatcher,
    board_id_of,
    fresh_state,
    wait_settled,
    wait_until,
)

pytestmark = [pytest.mark.browser]

WIDGETS = "/overlay/static/widget-{}.html"


# ------------------------------------------------------------------ reading the page


def drawn_pieces(page: Any) -> dict[str, str]:
    """Square -> FEN letter of every piece drawn on the page's board."""
    pairs = page.eval_on_selector_all(
        '[data-testid="board-piece"]', "ps => ps.map(p => [p.dataset.square, p.dataset.piece])"
    )
    return {sq: piece for sq, piece in pairs}


def pieces_of(board: chess.Board) -> dict[str, str]:
    return {chess.square_name(sq): p.symbol() for sq, p in board.piece_map().items()}


def marked_squares(page: Any) -> set[str]:
    return set(
        page.eval_on_selector_all(
            '[data-testid="board-lastmove"]', "rs => rs.map(r => r.dataset.square)"
        )
    )


def pieces_sit_on_their_squares(page: Any) -> bool:
    """Every piece is drawn inside the square its data-square names."""
    return bool(
        page.evaluate(
            """() => [...document.querySelectorAll('[data-testid="board-piece"]')].every(p => {
                const sq = document.querySelector(`rect.cb-sq[data-square="${p.dataset.square}"]`);
                const a = p.getBoundingClientRect(), b = sq.getBoundingClientRect();
                const x = a.left + a.width / 2, y = a.top + a.height / 2;
                return x > b.left && x < b.right && y > b.top && y < b.bottom;
            })"""
        )
    )


def graph_points(page: Any) -> list[tuple[int, float]]:
    pts = page.eval_on_selector_all(
        '[data-testid="evalgraph-point"]', "ps => ps.map(p => [p.dataset.ply, p.dataset.win])"
    )
    return [(int(ply), float(win)) for ply, win in pts]


def graph_losses(page: Any) -> list[tuple[int, str]]:
    pts = page.eval_on_selector_all(
        '[data-testid="evalgraph-loss"]', "ps => ps.map(p => [p.dataset.ply, p.dataset.color])"
    )
    return [(int(ply), color) for ply, color in pts]


def win_chance(ev: dict[str, Any]) -> float:
    """White's winning chances as the graph defines them (docs/obs.md): win + half
    the draws from the engine's WDL, else the eval bar's curve of the centipawns."""
    wdl = ev.get("wdl")
    if wdl:
        return float(wdl["win"] + wdl["draw"] / 2) / float(wdl["win"] + wdl["draw"] + wdl["loss"])
    if ev.get("mate") is not None:
        return 1.0 if ev["mate"] >= 0 else 0.0
    return 1 / (1 + math.exp(-0.00368208 * float(ev["cp"])))


def shows_position(page: Any, want: dict[str, str]) -> Callable[[], bool]:
    return lambda: drawn_pieces(page) == want


def has_points(page: Any, n: int) -> Callable[[], bool]:
    return lambda: len(graph_points(page)) == n


# ------------------------------------------------------------------ live: a replayed game


@pytest.mark.engine
@pytest.mark.slow
def test_board_and_graph_follow_the_replay(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    """Ply by ply, the overlay's board and the board widget show the game's position
    (the game itself played by python-chess, not the server's FEN), the last move's
    squares marked; once evaluated, the graph has one point per ply."""
    serve, replay = live_round
    if replay.replay.position:
        replay.reset()
    bid = board_id_of(serve, "Fischer, Robert J.")
    wait_until(lambda: fresh_state(serve.ws_url, bid)["moves"] == [], 20, "a board with no moves")
    game = chess.pgn.read_game(io.StringIO(GAME_A))
    assert game is not None
    moves = list(game.mainline_moves())
    index = next(
        i for i, g in enumerate(replay.replay.games) if g.full.white.name.startswith("Fischer")
    )

    overlay = page_factory()
    overlay.goto(f"{serve.url}/overlay/board?board={bid}")
    widget = page_factory(640, 700)
    widget.goto(f"{serve.url}{WIDGETS.format('board')}?board={bid}")
    graph = page_factory(900, 240)
    graph.goto(f"{serve.url}{WIDGETS.format('evalgraph')}?board={bid}")
    for page in (overlay, widget, graph):
        expect(page.locator("[data-fresh]").first).to_have_attribute("data-fresh", "true")
    start = chess.Board()
    for page in (overlay, widget):
        assert drawn_pieces(page) == pieces_of(start)
        assert marked_squares(page) == set()

    board = chess.Board()
    seen = 0
    while seen < 12:
        replay.advance(1)
        revealed = replay.replay.revealed[index]
        if revealed == seen:
            continue
        for move in moves[seen:revealed]:
            board.push(move)
        seen = revealed
        want = pieces_of(board)
        last = moves[seen - 1]
        for page in (overlay, widget):
            wait_until(shows_position(page, want), 20, f"the position after ply {seen}")
            assert marked_squares(page) == {
                chess.square_name(last.from_square),
                chess.square_name(last.to_square),
            }
            assert pieces_sit_on_their_squares(page)

    # every evaluated ply is one point of the graph, at White's winning chances
    state = wait_settled(serve, bid, seen)
    want_points = [(m["ply"], win_chance(m["eval"])) for m in state["moves"] if m["eval"]]
    assert len(want_points) == seen
    for page in (overlay, graph):
        wait_until(has_points(page, seen), 20, f"{seen} graph points")
        drawn = graph_points(page)
        assert [ply for ply, _ in drawn] == [ply for ply, _ in want_points]
        assert [w for _, w in drawn] == pytest.approx([w for _, w in want_points], abs=1e-4)


@pytest.mark.engine
@pytest.mark.slow
def test_eval_bar_widget_shows_the_latest_evaluation(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    replay.advance(replay.total_plies)
    game = next(g for g in replay.replay.games if g.full.white.name == "Polgar, Judit")
    bid = board_id_of(serve, "Polgar, Judit")
    state = wait_settled(serve, bid, len(game.full.moves))
    watcher = WsWatcher(serve.ws_url, [bid])
    try:
        page = page_factory(700, 140)
        page.goto(f"{serve.url}{WIDGETS.format('evalbar')}?board={bid}")
        expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true")
        ev = fresh_state(serve.ws_url, bid)["eval"] or state["eval"]
        expect(page.get_by_test_id("eval-cp")).to_have_attribute("data-cp", str(ev["cp"]))
        if ev.get("wdl"):
            expect(page.get_by_test_id("wdl-win")).to_have_attribute(
                "data-permille", str(ev["wdl"]["win"])
            )
        # widgets are transparent unless asked otherwise
        bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg in ("rgba(0, 0, 0, 0)", "transparent")
    finally:
        watcher.close()


# ------------------------------------------------------------------ hand-made boards


def ply(
    n: int, san: str, uci: str, gain: int | None, ev: schema.EvalInfo | None = None
) -> schema.Ply:
    return schema.Ply(
        ply=n, san=san, uci=uci, color="white" if n % 2 else "black", eval=ev, gain=gain
    )


def wdl(win: int, draw: int, loss: int) -> schema.EvalInfo:
    return schema.EvalInfo(cp=0, wdl=schema.Wdl(win=win, draw=draw, loss=loss), depth=10)


def hand_made(board_id: str, fen: str, moves: list[schema.Ply], **kw: Any) -> schema.BoardState:
    base: dict[str, Any] = dict(
        board_id=board_id,
        tournament="Widget Cup",
        round="1",
        board=1,
        white=schema.Player(name="White, Player", rating=2100),
        black=schema.Player(name="Black, Player", rating=2050),
        result="*",
        status="live",
        fen=fen,
        moves=moves,
        eval=moves[-1].eval if moves else None,
        white_trace=[],
        black_trace=[],
        engine="Stockfish 15.1 depth 10",
        engine_rating=2860,
        seq=len(moves),
    )
    base.update(kw)
    return schema.BoardState(**base)


#: A game whose evaluations are chosen (White's winning chances in brackets): a
#: blunder by Black at ply 4 (gain -260, chances 0.55 -> 0.875), a move by White at
#: ply 5 that loses only 150 cp but drops White's chances 0.875 -> 0.60 (more than
#: 20 points), a loss of 120 cp at ply 6 that is not big, a loss of 250 cp at ply 8
#: in a won position (mate either way) and ply 9 not evaluated yet.
GRAPH_MOVES = [
    ply(1, "e4", "e2e4", 0, wdl(60, 900, 40)),  # 0.51
    ply(2, "e5", "e7e5", -5, schema.EvalInfo(cp=25, depth=10)),  # the bar's curve: 0.523
    ply(3, "Qh5", "d1h5", -40, wdl(300, 500, 200)),  # 0.55
    ply(4, "Ke7", "e8e7", -260, wdl(800, 150, 50)),  # 0.875: Black's blunder
    ply(5, "Qxe5+", "h5e5", -150, wdl(350, 500, 150)),  # 0.60: White's chances drop 0.275
    ply(6, "Kf6", "e7f6", -120, wdl(400, 450, 150)),  # 0.625: not big
    ply(7, "Nf3", "g1f3", 0, schema.EvalInfo(cp=3900, mate=3, depth=10)),  # 1.0
    ply(8, "d6", "d7d6", -250, schema.EvalInfo(cp=3900, mate=2, depth=10)),  # 1.0: -250 cp
    ply(9, "Qf4+", "e5f4", None),  # waiting for the engine
]
GRAPH_FEN = "rnbq1bnr/ppp2ppp/3p1k2/8/5Q2/5N2/PPPP1PPP/RNB1KB1R b KQ - 2 5"


def test_eval_graph_marks_big_losses_and_follows_updates(
    static_server: StaticServer, page_factory: Any
) -> None:
    start = schema.EvalInfo(cp=20, wdl=schema.Wdl(win=50, draw=920, loss=30), depth=10)
    state = hand_made("w-graph", GRAPH_FEN, GRAPH_MOVES, start_eval=start)
    static_server.set_board(state)
    for url in (
        "/overlay/board?board=w-graph",
        f"{WIDGETS.format('evalgraph')}?board=w-graph",
    ):
        page = page_factory()
        page.goto(static_server.url + url)
        expect(page.locator('[data-testid="evalgraph-point"]')).to_have_count(8)
        drawn = graph_points(page)
        assert [p for p, _ in drawn] == list(range(1, 9))  # ply 9 is not evaluated yet
        want = [0.51, 1 / (1 + math.exp(-0.00368208 * 25)), 0.55, 0.875, 0.60, 0.625, 1, 1]
        assert [w for _, w in drawn] == pytest.approx(want, abs=1e-4)
        assert graph_losses(page) == [(4, "black"), (5, "white"), (8, "black")]
        fills = page.eval_on_selector_all(
            '[data-testid="evalgraph-loss"]', "ds => ds.map(d => getComputedStyle(d).fill)"
        )
        assert fills[0] != fills[1]  # coloured by side: Black's and White's colours

    # ply 9 is evaluated: White's move gave the game away (chances 1.0 -> 0.05)
    after = [*GRAPH_MOVES[:-1], ply(9, "Qf4+", "e5f4", -3900, wdl(0, 100, 900))]
    later = hand_made("w-graph", GRAPH_FEN, after, start_eval=start, seq=10)
    update = schema.Update(
        board_id="w-graph",
        seq=10,
        ply=after[-1],
        fen=GRAPH_FEN,
        eval=after[-1].eval,
        result="*",
        status="live",
    )
    static_server.publish(update, later)
    expect(page.locator('[data-testid="evalgraph-point"]')).to_have_count(9)
    assert graph_losses(page)[-1] == (9, "white")
    assert graph_points(page)[-1][1] == pytest.approx(0.05)


#: Black has lost the g8 knight and the e-pawn, White the d-pawn: White is 3 ahead.
MATERIAL_FEN = "rnbqkb1r/pppp1ppp/8/8/8/8/PPP1PPPP/RNBQKBNR w KQkq - 0 5"
MATERIAL_PIECES = 29


def test_captured_material_and_last_move(static_server: StaticServer, page_factory: Any) -> None:
    moves = [ply(1, "d4", "d2d4", 0), ply(2, "e5", "e7e5", -90)]
    static_server.set_board(hand_made("w-material", MATERIAL_FEN, moves))
    for url in (
        "/overlay/board?board=w-material",
        f"{WIDGETS.format('board')}?board=w-material",
    ):
        page = page_factory()
        page.goto(static_server.url + url)
        expect(page.get_by_test_id("board-piece")).to_have_count(MATERIAL_PIECES)
        assert drawn_pieces(page) == pieces_of(chess.Board(MATERIAL_FEN))
        assert marked_squares(page) == {"e7", "e5"}
        expect(page.get_by_test_id("captured-white")).to_have_attribute("data-pieces", "np")
        expect(page.get_by_test_id("captured-black")).to_have_attribute("data-pieces", "p")
        expect(page.get_by_test_id("material-white")).to_have_text("+3")
        expect(page.get_by_test_id("material-black")).to_have_text("")
        assert pieces_sit_on_their_squares(page)

    # two queens after a promotion: the promoted pawn is not counted as captured
    promoted = "4k3/8/8/8/8/8/8/QQ2K3 w - - 0 60"
    static_server.set_board(hand_made("w-promoted", promoted, moves))
    page = page_factory()
    page.goto(f"{static_server.url}{WIDGETS.format('board')}?board=w-promoted")
    expect(page.get_by_test_id("board-piece")).to_have_count(4)
    expect(page.get_by_test_id("captured-white")).to_have_attribute(
        "data-pieces", "qrrbbnn" + "p" * 8
    )
    expect(page.get_by_test_id("captured-black")).to_have_attribute(
        "data-pieces", "rrbbnn" + "p" * 7
    )
    expect(page.get_by_test_id("material-white")).to_have_text("+18")


def test_flip(static_server: StaticServer, page_factory: Any) -> None:
    """flip=1 and side=black show the board from Black's side: a1 top right, h8
    bottom left, White's captured row above the board."""
    static_server.set_board(hand_made("w-flip", MATERIAL_FEN, [ply(1, "d4", "d2d4", 0)]))

    def corners(page: Any) -> dict[str, dict[str, float]]:
        boxes: dict[str, dict[str, float]] = page.evaluate(
            """() => Object.fromEntries(['a1', 'h8'].map(s => {
                const r = document.querySelector(`rect.cb-sq[data-square="${s}"]`)
                    .getBoundingClientRect();
                return [s, {x: r.left, y: r.top}];
            }))"""
        )
        return boxes

    def top_row(page: Any) -> str:
        row: str = page.evaluate(
            """() => [...document.querySelectorAll('.cb-captured')]
                .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0]
                .dataset.testid"""
        )
        return row

    base = f"{static_server.url}{WIDGETS.format('board')}?board=w-flip"
    page = page_factory(600, 700)
    page.goto(base)
    expect(page.get_by_test_id("board-piece")).to_have_count(MATERIAL_PIECES)
    c = corners(page)
    assert c["a1"]["x"] < c["h8"]["x"] and c["a1"]["y"] > c["h8"]["y"]  # White at the bottom
    assert top_row(page) == "captured-black"
    for query in ("&flip=1", "&side=black"):
        page.goto(base + query)
        expect(page.get_by_test_id("board-svg")).to_have_attribute("data-flip", "true")
        expect(page.get_by_test_id("board-piece")).to_have_count(MATERIAL_PIECES)
        c = corners(page)
        assert c["a1"]["x"] > c["h8"]["x"] and c["a1"]["y"] < c["h8"]["y"]
        assert top_row(page) == "captured-white"
        assert pieces_sit_on_their_squares(page)
        assert marked_squares(page) == {"d2", "d4"}


def test_corner_layout(static_server: StaticServer, page_factory: Any) -> None:
    """layout=corner: the board, the eval bar beside it and the two perceived
    ratings, nothing else; the player at the top of the board above it."""
    perceived = schema.Perceived(
        rating=1987.4, low=1600, high=2380, moves=9, early=False, model="t"
    )
    state = hand_made(
        "w-corner",
        MATERIAL_FEN,
        [ply(1, "d4", "d2d4", 0, schema.EvalInfo(cp=-80, depth=10))],
        white_perceived=perceived,
        black_perceived=perceived.model_copy(update={"rating": 1710.0}),
    )
    static_server.set_board(state)
    page = page_factory(560, 700)
    for query, top in (("", "black"), ("&side=black", "white")):
        page.goto(f"{static_server.url}/overlay/board?board=w-corner&layout=corner{query}")
        expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
        expect(page.get_by_test_id("board-piece")).to_have_count(MATERIAL_PIECES)
        for visible in ("chessboard", "eval-bar", "white-headline", "black-headline"):
            expect(page.get_by_test_id(visible)).to_be_visible()
        # no form in the message: the moves alone are the large numbers
        expect(page.get_by_test_id("white-headline")).to_have_text("1987")
        expect(page.get_by_test_id("black-headline")).to_have_text("1710")
        for hidden in ("trace", "h2h", "last-move-box", "evalgraph", "white-clock"):
            expect(page.get_by_test_id(hidden)).to_be_hidden()
        bottom = "white" if top == "black" else "black"
        y = {c: page.get_by_test_id(f"{c}-card").bounding_box()["y"] for c in ("white", "black")}
        board_y = page.get_by_test_id("board-svg").bounding_box()["y"]
        assert y[top] < board_y < y[bottom]
        # the bar stands beside the board: taller than wide, Black ahead fills less than half
        bar = page.get_by_test_id("eval-bar").bounding_box()
        assert bar["height"] > 3 * bar["width"]
        page.wait_for_timeout(700)  # the bar's transition
        white = page.get_by_test_id("eval-bar-white").bounding_box()
        assert 0.3 * bar["height"] < white["height"] < 0.5 * bar["height"]
        # nothing spills out of the source
        over = page.evaluate(
            "() => [document.documentElement.scrollWidth > innerWidth,"
            " document.documentElement.scrollHeight > innerHeight]"
        )
        assert over == [False, False]


@pytest.mark.parametrize("name", ["board", "evalgraph", "evalbar"])
def test_each_widget_alone_at_its_url(
    static_server: StaticServer, page_factory: Any, name: str
) -> None:
    """Each widget page shows its widget for the board asked for, on a transparent
    background unless bg=solid, and only that widget."""
    static_server.set_board(hand_made("w-alone", GRAPH_FEN, GRAPH_MOVES))
    page = page_factory(800, 500)
    page.goto(f"{static_server.url}{WIDGETS.format(name)}?board=w-alone")
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg in ("rgba(0, 0, 0, 0)", "transparent")
    if name == "board":
        expect(page.get_by_test_id("board-piece")).to_have_count(
            len(pieces_of(chess.Board(GRAPH_FEN)))
        )
        assert drawn_pieces(page) == pieces_of(chess.Board(GRAPH_FEN))
    elif name == "evalgraph":
        expect(page.get_by_test_id("evalgraph-point")).to_have_count(8)
    else:
        expect(page.get_by_test_id("eval-cp")).to_have_text("#2")  # the last evaluation
    own = {"board": "board-piece", "evalgraph": "evalgraph-point", "evalbar": "eval-cp"}
    for other, testid in own.items():
        if other != name:
            expect(page.get_by_test_id(testid)).to_have_count(0)
    page.goto(f"{static_server.url}{WIDGETS.format(name)}?board=w-alone&bg=solid")
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg not in ("rgba(0, 0, 0, 0)", "transparent")
