"""The page's protocol client (lib.js) run in Chromium: how it folds ``update``
messages into a board state (corrections, duplicates, gaps) and how it formats.

The module is loaded from the real HTTP server (``LiveServer``, no feed); the
messages are built here with the wire schema's own models, so they are valid
protocol.
"""

from __future__ import annotations

from typing import Any

import pytest

from livegain.publish import schema

from ._live import StaticServer

pytestmark = [pytest.mark.browser]


def perceived(rating: float, moves: int) -> schema.Perceived:
    return schema.Perceived(
        rating=rating,
        low=rating - 400,
        high=rating + 400,
        moves=moves,
        early=moves < 5,
        model="test",
    )


def algorithm4(rating: float, moves: int, bounded: bool = False) -> schema.Algorithm4:
    return schema.Algorithm4(
        rating=rating,
        low=rating - 150,
        high=rating + 150,
        difference=rating - 2860,
        expected=0.0 if bounded else 0.4,
        moves=moves,
        bounded=bounded,
    )


def point(ply: int, rating: float | None, early: bool = False) -> schema.TracePoint:
    a4 = 2860.0 if rating is None else rating + 300
    return schema.TracePoint(
        ply=ply,
        rating=rating,
        low=None if rating is None else rating - 400,
        high=None if rating is None else rating + 400,
        early=early or rating is None,
        algorithm4=schema.TraceAlgorithm4(
            rating=a4, low=a4 - 150, high=a4 + 150, difference=a4 - 2860, bounded=False
        ),
    )


def ply(n: int, san: str, gain: int) -> schema.Ply:
    color = "white" if n % 2 else "black"
    return schema.Ply(ply=n, san=san, uci="a2a3", color=color, gain=gain)


def state_json() -> dict[str, Any]:
    st = schema.BoardState(
        board_id="b1",
        white=schema.Player(name="A"),
        black=schema.Player(name="B"),
        result="*",
        status="live",
        fen="startpos",
        moves=[ply(1, "e4", -10), ply(2, "e5", 0), ply(3, "Nf3", -5)],
        white_trace=[point(1, 2500), point(3, 2600)],
        black_trace=[point(2, 2700)],
        white_perceived=perceived(2600, 2),
        black_perceived=perceived(2700, 1),
        white_algorithm4=algorithm4(2900, 2),
        black_algorithm4=algorithm4(3000, 1),
        engine="test",
        engine_rating=2860,
        seq=7,
    )
    return st.model_dump(mode="json")


def update_json(seq: int, **kw: Any) -> dict[str, Any]:
    u = schema.Update(board_id="b1", seq=seq, fen="x", result="*", status="live", **kw)
    return u.model_dump(mode="json")


@pytest.fixture
def lib(static_server: StaticServer, page_factory: Any) -> Any:
    page = page_factory()
    page.goto(f"{static_server.url}/overlay/board?board=none")
    return page


APPLY = """async ([state, updates]) => {
  const lib = await import("./static/lib.js");
  const results = updates.map((u) => lib.applyUpdate(state, u));
  return { results, state };
}"""


def test_correction_truncates_then_appends(lib: Any) -> None:
    st = state_json()
    # a takeback of 3.Nf3 replaced by 3.d4 (a correction), then its evaluation
    u1 = update_json(8, truncate_to=2, ply=ply(3, "d4", -30))
    u2 = update_json(
        9,
        ply=ply(3, "d4", -30),
        white_points=[point(3, 2450)],
        white_perceived=perceived(2450, 2),
        black_perceived=perceived(2700, 1),
        white_algorithm4=algorithm4(2750, 2),
        black_algorithm4=algorithm4(3000, 1),
    )
    out = lib.evaluate(APPLY, [st, [u1, u2]])
    assert out["results"] == ["ok", "ok"]
    s = out["state"]
    assert [m["san"] for m in s["moves"]] == ["e4", "e5", "d4"]
    assert [p["ply"] for p in s["white_trace"]] == [1, 3]
    assert s["white_trace"][-1]["rating"] == 2450
    assert s["white_perceived"]["rating"] == 2450
    assert s["white_algorithm4"]["rating"] == 2750
    assert s["seq"] == 9


def test_duplicates_are_ignored_and_gaps_reported(lib: Any) -> None:
    st = state_json()
    out = lib.evaluate(
        APPLY,
        [st, [update_json(7), update_json(5), update_json(8), update_json(10)]],
    )
    assert out["results"] == ["stale", "stale", "ok", "gap"]
    assert out["state"]["seq"] == 8


def test_takeback_to_the_start_clears_the_board(lib: Any) -> None:
    out = lib.evaluate(APPLY, [state_json(), [update_json(8, truncate_to=0)]])
    s = out["state"]
    assert s["moves"] == [] and s["white_trace"] == [] and s["black_trace"] == []
    assert s["white_perceived"] is None and s["eval"] is None
    assert s["white_algorithm4"] is None and s["black_algorithm4"] is None


SHOWN = """async ([src, trace]) => {
  const lib = await import("./static/lib.js");
  const out = {};
  for (const mode of ["calibrated", "algorithm4"]) {
    out[mode] = {
      white: lib.shownRating(src, "white", mode),
      black: lib.shownRating(src, "black", mode),
      trace: lib.shownTrace(trace, mode),
    };
  }
  out.summary = lib.summaryOf(src);
  return out;
}"""


def test_which_rating_is_shown(lib: Any) -> None:
    """The calibrated estimate by default: a number with its interval once it counts,
    "early" (no number) before; Algorithm 4 on request, with its clamp mark."""
    st = state_json()
    st["black_algorithm4"] = algorithm4(2060, 1, bounded=True).model_dump(mode="json")
    st["white_perceived"] = perceived(2600, 6).model_dump(mode="json")
    trace = [
        point(1, 2100, early=True).model_dump(mode="json"),
        point(3, 2600).model_dump(mode="json"),
        point(5, None).model_dump(mode="json"),
    ]
    out = lib.evaluate(SHOWN, [st, trace])
    cal, a4 = out["calibrated"], out["algorithm4"]
    assert cal["white"] == {
        "kind": "calibrated",
        "state": "estimate",
        "rating": 2600,
        "low": 2200,
        "high": 3000,
        "moves": 6,
        "bound": "",
        "label": None,
        "scale": "lichess",
        "model": "test",
    }
    assert cal["black"]["state"] == "early" and cal["black"]["rating"] is None
    assert cal["black"]["moves"] == 1
    assert a4["black"]["state"] == "estimate" and a4["black"]["rating"] == 2060
    assert a4["black"]["bound"] == "\u2264"
    assert a4["white"]["rating"] == 2900 and a4["white"]["bound"] == ""
    assert [(p["ply"], p["rating"], p["early"]) for p in cal["trace"]] == [
        (1, None, True),
        (3, 2600, False),
        (5, None, True),
    ]
    assert [p["none"] for p in cal["trace"]] == [False, False, True]
    assert [(p["ply"], p["rating"]) for p in a4["trace"]] == [(1, 2400), (3, 2900), (5, 2860)]
    assert out["summary"]["white_algorithm4"]["rating"] == 2900


LABELLED = """async ([src]) => {
  const lib = await import("./static/lib.js");
  const out = {};
  for (const mode of ["calibrated", "algorithm4"]) {
    out[mode] = {
      white: lib.shownRating(src, "white", mode),
      versus: lib.versusOfficial(src, "white", mode),
    };
  }
  out.scale = lib.scaleText(src.white_perceived && src.white_perceived.scale);
  return out;
}"""


def test_a_labelled_player_keeps_his_number_and_vs_fide_is_his_form(lib: Any) -> None:
    """A player rated outside the model's range: his number with the model's label;
    "vs FIDE" is his form (official rating updated by his moves) minus his official
    rating; none without a form or while too early; Algorithm 4 its own figure's."""
    st = state_json()
    st["white"]["rating"] = 2865
    late = perceived(1950, 6).model_copy(update={"label": "extrapolated", "scale": "fide"})
    st["white_perceived"] = late.model_dump(mode="json")
    st["white_form"] = late.model_copy(update={"rating": 2840.4}).model_dump(mode="json")
    out = lib.evaluate(LABELLED, [st])
    cal, a4 = out["calibrated"], out["algorithm4"]
    assert cal["white"]["state"] == "estimate" and cal["white"]["rating"] == 1950
    assert cal["white"]["label"] == "extrapolated" and out["scale"] == "FIDE scale"
    assert cal["versus"] == -25
    assert a4["versus"] == 2900 - 2865
    st["white_form"] = None  # no form (no forward curves on the server): no chip
    assert lib.evaluate(LABELLED, [st])["calibrated"]["versus"] is None
    st["white_perceived"] = late.model_copy(update={"moves": 2, "early": True}).model_dump(
        mode="json"
    )
    assert lib.evaluate(LABELLED, [st])["calibrated"]["white"]["state"] == "early"


def test_no_model_and_old_servers_show_nothing_calibrated(lib: Any) -> None:
    st = state_json()
    st["white_perceived"] = None  # no calibrated model
    # a protocol 1 server's `perceived` was Algorithm 4's: never shown as calibrated
    st["black_perceived"] = algorithm4(2700, 1).model_dump(mode="json")
    out = lib.evaluate(SHOWN, [st, []])
    assert out["calibrated"]["white"]["state"] == "none"
    assert out["calibrated"]["black"]["state"] == "none"
    assert out["algorithm4"]["white"]["state"] == "estimate"


def test_formatting(lib: Any) -> None:
    got = lib.evaluate(
        """async () => {
      const l = await import("./static/lib.js");
      return [
        l.evalText({ cp: 137, mate: null }), l.evalText({ cp: -40, mate: null }),
        l.evalText({ cp: 3900, mate: 3 }), l.evalText({ cp: -3900, mate: -2 }),
        l.gainText(-137), l.clockText(5423), l.clockText(59), l.moveNumber(1),
        l.moveNumber(4), l.gainSeverity(-100), l.gainSeverity(-60), l.gainSeverity(-20),
        l.whiteShare({ cp: 0, mate: null }), l.whiteShare({ cp: 100, mate: 2 }),
      ];
    }"""
    )
    assert got == [
        "+1.37",
        "\u22120.40",
        "#3",
        "#\u22122",
        "\u22121.37",
        "1:30:23",
        "0:59",
        "1.",
        "2\u2026",
        "big-loss",
        "loss",
        "",
        0.5,
        1,
    ]


BOARD_LIST = """async (messages) => {
  const lib = await import("./static/lib.js");
  const sent = [];
  const conn = { ws: "socket-1", send: (m) => sent.push(m) };
  const changes = [];
  const list = new lib.BoardList((l, removed) =>
    changes.push({ ids: l.list().map((s) => s.board_id), removed, complete: l.complete }),
  );
  const h = list.handlers(conn);
  for (const m of messages) {
    h[m.type](m);
    await new Promise((r) => setTimeout(r, 100)); // the paced page request goes out
  }
  return { changes, sent };
}"""


def summary(board_id: str, result: str = "*") -> dict[str, Any]:
    s = schema.BoardSummary(
        board_id=board_id,
        white=schema.Player(name="A"),
        black=schema.Player(name="B"),
        result=result,
        plies=0,
    )
    return s.model_dump(mode="json")


def test_board_list_pages_diffs_and_reset(lib: Any) -> None:
    """lib.js's BoardList: pages asked for with list_boards, diffs applied,
    and after a reset only what the new pages and diffs name is kept."""

    def msg(model: Any) -> dict[str, Any]:
        return dict(model.model_dump(mode="json"))

    hello = schema.Hello(server="t", boards=[], boards_total=3, boards_next=2)
    hello = hello.model_copy(
        update={"boards": [schema.BoardSummary(**summary(b)) for b in ("a", "b")]}
    )
    page = schema.Boards(boards=[schema.BoardSummary(**summary("c"))], total=3, next=None)
    diff = schema.BoardsDiff(
        added=[schema.BoardSummary(**summary("d"))],
        changed=[schema.BoardSummary(**summary("a", "1-0"))],
        removed=["b"],
    )
    # A first page again (the client fell behind): "c" and "d" are gone.
    reset = schema.Boards(
        boards=[schema.BoardSummary(**summary("a"))], total=1, next=None, reset=True
    )
    out = lib.evaluate(BOARD_LIST, [msg(m) for m in (hello, page, diff, reset)])
    assert out["sent"] == [{"type": "list_boards", "cursor": 2}]
    ids = [c["ids"] for c in out["changes"]]
    assert ids == [["a", "b"], ["a", "b", "c"], ["a", "c", "d"], ["a"]]
    assert [c["complete"] for c in out["changes"]] == [False, True, True, True]
    assert out["changes"][2]["removed"] == ["b"]
    assert sorted(out["changes"][3]["removed"]) == ["c", "d"]
