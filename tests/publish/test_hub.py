"""The publish hub on its own: no sockets, no event loop, times passed in.

Clients are plain strings; each hub method's answer (what to send to whom,
whom to close) is checked as data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from toy_human import forward_model, toy_wdl_model

from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import BoardUpdate
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.publish import convert, schema
from livegain.publish.actions import Action, BoardsChanged, Close, Send
from livegain.publish.entry import BoardEntry
from livegain.publish.fold import SeqGap, apply_update
from livegain.publish.hub import Hub
from livegain.publish.limits import ServerLimits

from .helpers import board_state, moment_bytes, update_for
from .test_convert import ENGINE, MOVES, ev_of, snap

# ------------------------------------------------------------ apply_update


def service_output(calibrated: bool) -> tuple[list[schema.Update], dict[int, schema.BoardState]]:
    """A board's updates as the service publishes them (core -> wire), and its
    state after some of them: {number of updates applied: state}."""
    # calibrated: with forward curves (form) and a human W/D/L model too
    t = BoardRegistry(
        PAPER_ENGINE_RATING,
        model=forward_model() if calibrated else None,
        wdl_model=toy_wdl_model() if calibrated else None,
    )
    bid = t.apply(snap(MOVES[:4])).board_id
    assert bid is not None
    game = t.board(bid)
    wire: list[schema.Update] = []
    states = {0: convert.board_state(game, engine=ENGINE)}

    def step(core: Iterable[BoardUpdate]) -> None:
        wire.extend(convert.update(u) for u in core)
        states[len(wire)] = convert.board_state(game, engine=ENGINE)

    def evaluate(pick: str) -> None:
        reqs = t.pending()
        chosen = reqs if pick == "all" else [r for r in reqs if r.priority == 0]
        out: list[BoardUpdate] = []
        for r in chosen:
            out.extend(t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen)))
        step(out)

    evaluate("latest")
    step(t.apply(snap(MOVES[:10])).updates)
    evaluate("latest")
    evaluate("all")
    step(t.apply(snap(MOVES[:12])).updates)
    # a correction (4...O-O rewritten as 4...Ne4), a takeback, then the game again
    step(t.apply(snap([*MOVES[:7], "Ne4", "Qc2"])).updates)
    evaluate("latest")
    step(t.apply(snap(MOVES[:5])).updates)
    step(t.apply(snap(MOVES[:16])).updates)
    evaluate("all")
    # the operator fixes the clock of an old move, then the game ends
    step(t.apply(snap(MOVES[:16], clocks=(None, None, 7133))).updates)
    step(t.apply(snap(MOVES, result="1-0")).updates)
    evaluate("all")
    return wire, states


@pytest.mark.parametrize("calibrated", [False, True], ids=["algorithm4-only", "calibrated"])
def test_updates_n_plus_1_to_m_turn_state_n_into_state_m(calibrated: bool) -> None:
    wire, states = service_output(calibrated)
    assert [u.seq for u in wire] == list(range(states[0].seq + 1, states[0].seq + 1 + len(wire)))
    assert any(u.truncate_to is not None for u in wire)
    checkpoints = sorted(states)
    assert len(checkpoints) >= 8
    for i, n in enumerate(checkpoints):
        for m in checkpoints[i + 1 :]:
            state = states[n]
            for u in wire[n:m]:
                state = apply_update(state, u)
            # The start position's evaluation travels in snapshots only (no
            # update carries it): the one field folding cannot follow.
            want = states[m]
            assert state.model_copy(update={"start_eval": want.start_eval}) == want, (n, m)
    assert states[checkpoints[-1]].result == "1-0"


def test_old_updates_change_nothing_and_a_gap_is_refused() -> None:
    s2 = board_state("b1", plies=2, seq=2)
    s3 = board_state("b1", plies=3, seq=3)
    u3 = update_for(s3)
    assert apply_update(s2, update_for(s2)) is s2  # a duplicate
    assert apply_update(s3, u3) is s3
    folded = apply_update(s2, u3)
    assert (folded.seq, [p.ply for p in folded.moves]) == (3, [1, 2, 3])
    with pytest.raises(SeqGap) as info:
        apply_update(board_state("b1", plies=1, seq=1), u3)
    assert (info.value.have, info.value.got) == (1, 3)
    with pytest.raises(ValueError, match="board"):
        apply_update(board_state("other", seq=2), u3)


# --------------------------------------------------------------------- hub


def sends(actions: list[Action[str]]) -> list[Send[str]]:
    return [a for a in actions if isinstance(a, Send)]


def msgs(actions: list[Action[str]], client: str) -> list[dict[str, Any]]:
    """The messages ``client`` would receive, decoded."""
    return [json.loads(a.data) for a in sends(actions) if client in a.clients]


def subscribed_hub(*clients: str, **limits: Any) -> Hub[str]:
    hub: Hub[str] = Hub(ServerLimits(**limits))
    hub.set_board(board_state("b1"))
    for c in clients:
        hub.connect(c)
        hub.receive(c, '{"type":"subscribe","boards":"*"}', 0.0)
    return hub


def test_hello_subscribe_snapshot_update_unsubscribe() -> None:
    hub: Hub[str] = Hub(ServerLimits())
    hub.set_board(board_state("b1", plies=2, seq=2))
    hub.set_board(board_state("b2"))
    (hello,) = msgs(hub.connect("a"), "a")
    assert hello["type"] == "hello" and [b["board_id"] for b in hello["boards"]] == ["b1", "b2"]
    hub.connect("b")
    out = hub.receive("a", '{"type":"subscribe","boards":["b1"]}', 0.0)
    (snap1,) = sends(out)
    assert (snap1.clients, snap1.board_id) == (["a"], "b1")
    assert json.loads(snap1.data)["state"]["seq"] == 2
    s = board_state("b1", plies=3, seq=3)
    data, out = hub.publish(update_for(s), s)
    (upd,) = sends(out)
    assert (list(upd.clients), upd.data, upd.board_id) == (["a"], data, "b1")
    assert hub.state("b1") == s
    s2 = board_state("b2", plies=1, seq=1)
    assert hub.publish(update_for(s2), s2)[1] == []  # nobody follows b2
    assert msgs(hub.receive("a", '{"type":"unsubscribe","boards":"*"}', 0.0), "a") == []
    s = board_state("b1", plies=4, seq=4)
    assert hub.publish(update_for(s), s)[1] == []
    hub.receive("b", '{"type":"subscribe","boards":"*"}', 0.0)
    hub.disconnect("b")
    assert hub.publish(update_for(s), s)[1] == []
    assert hub.client_count == 1


def test_one_entry_serialises_the_snapshot_once_for_every_publisher() -> None:
    built: list[int] = []

    def state() -> schema.BoardState:
        built.append(1)
        return board_state("b1", plies=1, seq=1)

    hub = subscribed_hub("a")
    entry = BoardEntry(state)
    _, out = hub.publish(update_for(board_state("b1", plies=1, seq=1)), entry)
    assert built == []  # the update goes out without building the state
    assert hub.snapshot_bytes("b1") is entry.snapshot_bytes()  # what MQTT would send
    assert built == [1]
    assert len(sends(out)) == 1


def test_client_messages_are_checked_and_rate_limited_on_the_given_clock() -> None:
    hub = subscribed_hub("a", burst=3, rate=1.0, max_errors=50, max_board_id=10)
    kinds = [msgs(hub.receive("a", '{"type":"ping"}', 10.0), "a")[0]["type"] for _ in range(4)]
    assert kinds == ["pong", "pong", "pong", "error"]
    assert msgs(hub.receive("a", '{"type":"ping"}', 10.5), "a")[0]["type"] == "error"
    assert msgs(hub.receive("a", '{"type":"ping"}', 11.6), "a")[0]["type"] == "pong"
    cases: list[tuple[str | bytes, str]] = [
        ("{nope", "invalid JSON"),
        ('{"type":"launch"}', "unknown message type"),
        (b"\x00", "binary"),
        ("x" * 5000, "too large"),
        ('{"type":"subscribe","boards":["' + "x" * 11 + '"]}', "11 characters (limit 10)"),
    ]
    for i, (payload, needle) in enumerate(cases):
        (err,) = msgs(hub.receive("a", payload, 100.0 + 5 * i), "a")
        assert err["type"] == "error" and needle in err["message"], payload[:40]
    assert hub.stats.protocol_errors == 7


def test_too_many_errors_close_the_client_1008() -> None:
    hub = subscribed_hub("a", "b", max_errors=3)
    assert not [a for a in hub.receive("a", "junk", 0.0) if isinstance(a, Close)]
    assert not [a for a in hub.receive("a", "junk", 0.0) if isinstance(a, Close)]
    closes = [a for a in hub.receive("a", "junk", 0.0) if isinstance(a, Close)]
    assert closes == [Close("a", 1008, "too many protocol errors")]
    assert hub.stats.closed_abusive == 1


def test_subscriptions_are_bounded() -> None:
    hub = subscribed_hub(max_subscriptions=3)
    hub.connect("a")
    (err,) = msgs(hub.receive("a", '{"type":"subscribe","boards":["a","b","c","d"]}', 0), "a")
    assert "4 boards (limit 3" in err["message"]
    assert hub.subscriptions("a") == set()
    (snap1,) = msgs(hub.receive("a", '{"type":"subscribe","boards":["b1","x","y"]}', 0), "a")
    assert snap1["type"] == "snapshot"
    assert hub.subscriptions("a") == {"b1", "x", "y"}


def test_board_list_changes_are_gathered_into_one_diff() -> None:
    hub: Hub[str] = Hub(ServerLimits(board_page=2))
    hub.connect("a")
    assert not hub.list_pending
    for i in range(3):
        hub.set_board(board_state(f"b{i}"))
    assert hub.list_pending
    out = hub.flush_list()
    assert not hub.list_pending
    (diff,) = msgs(out, "a")
    assert [b["board_id"] for b in diff["added"]] == ["b0", "b1", "b2"]
    assert sends(out)[0].board_list
    (whole,) = [a for a in out if isinstance(a, BoardsChanged)]
    assert [b["board_id"] for b in json.loads(whole.page())["boards"]] == ["b0", "b1", "b2"]
    # moves alone change nothing in the list; a result and a removal do
    s = board_state("b1", plies=1, seq=1)
    hub.publish(update_for(s), s)
    assert not hub.list_pending
    s = board_state("b1", plies=2, seq=2).model_copy(update={"result": "1-0"})
    hub.publish(update_for(s), s)
    assert hub.remove_board("b0") and not hub.remove_board("b0")
    (diff,) = msgs(hub.flush_list(), "a")
    assert [(b["board_id"], b["result"]) for b in diff["changed"]] == [("b1", "1-0")]
    assert diff["removed"] == ["b0"]
    assert hub.flush_list() == []
    # pages: two boards at most, with the cursor of the next page
    (page,) = msgs(hub.receive("a", '{"type":"list_boards","limit":9}', 0), "a")
    assert ([b["board_id"] for b in page["boards"]], page["next"]) == (["b1", "b2"], None)


def test_a_lagging_client_misses_updates_then_gets_a_fresh_snapshot() -> None:
    hub = subscribed_hub("slow", "fast", soft_backlog=1000, low_backlog=100, stale_timeout=30)
    s = board_state("b1", plies=1, seq=1)
    _, out = hub.publish(update_for(s), s)
    (send,) = sends(out)
    # Writing, the adapter finds slow's buffer above the soft limit: not written.
    assert hub.lagging("slow", send, 5000, now=1.0) == []
    assert hub.lagging_clients() == ["slow"]
    for seq in range(2, 6):
        s = board_state("b1", plies=seq, seq=seq)
        _, out = hub.publish(update_for(s), s)
        (send,) = sends(out)
        assert list(hub.recipients(send, send.clients)) == ["fast"]
    assert hub.stats.dropped_updates == 5
    # A new board and its list diff while behind: the list is missed too.
    hub.set_board(board_state("b2"))
    (diff,) = [a for a in hub.flush_list() if isinstance(a, Send)]
    hub.lagging("slow", diff, 4000, now=2.0)
    assert hub.poll("slow", 500, now=3.0) == []  # still above the low mark
    out = hub.poll("slow", 50, now=4.0)  # drained: the resync
    got = msgs(out, "slow")
    assert [m["type"] for m in got] == ["boards", "snapshot"]
    assert got[0]["reset"] is True and [b["board_id"] for b in got[0]["boards"]] == ["b1", "b2"]
    assert got[1]["state"]["seq"] == 5
    assert hub.lagging_clients() == [] and hub.stats.resyncs == 1
    s = board_state("b1", plies=6, seq=6)
    _, out = hub.publish(update_for(s), s)
    (send,) = sends(out)
    assert set(hub.recipients(send, send.clients)) == {"slow", "fast"}


def test_slow_clients_are_aborted_past_the_hard_limit_or_the_timeout() -> None:
    hub = subscribed_hub(
        "a", "b", soft_backlog=1000, low_backlog=100, hard_backlog=10_000, stale_timeout=30
    )
    s = board_state("b1", plies=1, seq=1)
    (send,) = sends(hub.publish(update_for(s), s)[1])
    assert hub.lagging("a", send, 20_000, now=0.0) == [
        Close("a", 1008, "write backlog 20000 bytes", abort=True)
    ]
    hub.lagging("b", send, 2000, now=0.0)
    assert hub.poll("b", 2000, now=29.0) == []
    (close,) = hub.poll("b", 2000, now=31.0)
    assert isinstance(close, Close) and close.abort and close.client == "b"
    assert hub.stats.closed_slow == 2
    assert hub.lagging_clients() == []


# ------------------------------------------------------------- standings


def standings(event: str, version: int) -> bytes:
    row = schema.StandingsRow(
        rank=1,
        key="a",
        name="A",
        points=float(version),
        games=version,
        tiebreaks={"SB": 0.0},
        win=1.0,
        win_se=0.0,
        live=False,
    )
    msg = schema.Standings(
        event=event,
        format="round-robin",
        round=version,
        rounds=None,
        tiebreaks=["SB"],
        playoff="share",
        rows=[row],
        sims=1000,
        version=version,
        plies=0,
        finished=version,
        live=0,
        upcoming=0,
    )
    return msg.model_dump_json().encode()


def test_standings_go_to_those_who_asked_latest_first() -> None:
    hub = subscribed_hub("boards-only", "a", "b")
    assert hub.publish_standings("Open", standings("Open", 1)) == []  # nobody asked yet
    assert hub.publish_standings("Open", standings("Open", 2)) == []
    (got,) = msgs(hub.receive("a", '{"type":"subscribe_standings","events":["Open"]}', 0.0), "a")
    assert (got["type"], got["event"], got["version"]) == ("standings", "Open", 2)
    assert msgs(hub.receive("b", '{"type":"subscribe_standings","events":"*"}', 0.0), "b") == [
        json.loads(standings("Open", 2))
    ]
    (send,) = sends(hub.publish_standings("Masters", standings("Masters", 1)))
    assert (list(send.clients), send.standings) == (["b"], "Masters")  # "*": later events too
    (send,) = sends(hub.publish_standings("Open", standings("Open", 3)))
    assert sorted(send.clients) == ["a", "b"] and send.checked
    assert hub.standings_events() == ["Masters", "Open"]
    assert json.loads(hub.standings("Open") or b"")["version"] == 3
    # board updates do not go to standings subscribers, nor standings to board ones
    s = board_state("b1", plies=1, seq=1)
    (upd,) = sends(hub.publish(update_for(s), s)[1])
    assert sorted(upd.clients) == ["a", "b", "boards-only"]  # subscribed_hub: boards "*"
    hub.receive("a", '{"type":"unsubscribe_standings","events":["Open"]}', 0.0)
    (send,) = sends(hub.publish_standings("Open", standings("Open", 4)))
    assert list(send.clients) == ["b"]
    # an event name too long, too many events: an error, nothing subscribed
    long = json.dumps({"type": "subscribe_standings", "events": ["x" * 300]})
    (err,) = msgs(hub.receive("a", long, 1.0), "a")
    assert err["type"] == "error" and "300 characters" in err["message"]
    many = json.dumps({"type": "subscribe_standings", "events": [f"e{i}" for i in range(70)]})
    (err,) = msgs(hub.receive("a", many, 2.0), "a")
    assert "70 events (limit 64" in err["message"]


def test_a_lagging_client_gets_the_latest_standings_when_it_catches_up() -> None:
    hub = subscribed_hub("slow", "fast", soft_backlog=1000, low_backlog=100)
    for c in ("slow", "fast"):
        hub.receive(c, '{"type":"subscribe_standings","events":"*"}', 0.0)
    (send,) = sends(hub.publish_standings("Open", standings("Open", 1)))
    hub.lagging("slow", send, 5000, now=1.0)
    for v in (2, 3):
        (send,) = sends(hub.publish_standings("Open", standings("Open", v)))
        assert list(hub.recipients(send, send.clients)) == ["fast"]
    got = msgs(hub.poll("slow", 50, now=2.0), "slow")
    assert [(m["type"], m["version"]) for m in got] == [("standings", 3)]  # only the latest
    (send,) = sends(hub.publish_standings("Open", standings("Open", 4)))
    assert set(hub.recipients(send, send.clients)) == {"slow", "fast"}


def test_a_late_subscriber_gets_the_boards_kept_moments_after_their_snapshots() -> None:
    hub: Hub[str] = Hub(ServerLimits())
    hub.set_board(board_state("b1"))
    hub.set_board(board_state("b2"))
    hub.connect("early")
    hub.receive("early", '{"type":"subscribe","boards":["b1"]}', 0.0)
    (live,) = sends(hub.publish_moment("b1", moment_bytes("b1", 7)))
    assert (live.clients, live.board_id) == (["early"], "b1")
    hub.publish_moment("b2", moment_bytes("b2", 9))
    hub.publish_moment("b1", moment_bytes("b1", 20, "game-end"))
    assert (
        hub.publish_moment("b1", moment_bytes("b1", 7)) == []
    )  # the same moment again: not resent
    # one who comes later gets each board's snapshot, then its moments, oldest first
    hub.connect("late")
    got = msgs(hub.receive("late", '{"type":"subscribe","boards":["b1"]}', 0.0), "late")
    assert [(m["type"], m.get("ply")) for m in got] == [
        ("snapshot", None),
        ("moment", 7),
        ("moment", 20),
    ]
    got = msgs(hub.receive("late", '{"type":"subscribe","boards":"*"}', 0.0), "late")
    assert [
        (m["type"], m.get("board_id") or m["state"]["board_id"], m.get("ply")) for m in got
    ] == [
        ("snapshot", "b1", None),
        ("snapshot", "b2", None),
        ("moment", "b1", 7),  # in the order they happened
        ("moment", "b2", 9),
        ("moment", "b1", 20),
    ]
    # a removed board's moments are forgotten
    hub.remove_board("b1")
    assert [b for b, _ in hub.moments()] == ["b2"]


def test_only_the_latest_moments_are_kept() -> None:
    from livegain.publish.recent_moments import KEPT

    hub: Hub[str] = Hub(ServerLimits())
    hub.set_board(board_state("b1"))
    for ply in range(1, KEPT + 11):
        hub.publish_moment("b1", moment_bytes("b1", ply))
    hub.connect("late")
    got = msgs(hub.receive("late", '{"type":"subscribe","boards":["b1"]}', 0.0), "late")
    plies = [m["ply"] for m in got if m["type"] == "moment"]
    assert plies == list(range(11, KEPT + 11))


def test_a_lagging_client_gets_the_moments_it_missed_with_its_resync() -> None:
    hub = subscribed_hub("slow", "fast", soft_backlog=1000, low_backlog=100)
    (send,) = sends(hub.publish_moment("b1", moment_bytes("b1", 5)))
    hub.lagging("slow", send, 5000, now=1.0)
    (send,) = sends(hub.publish_moment("b1", moment_bytes("b1", 6)))
    assert list(hub.recipients(send, send.clients)) == ["fast"]
    got = msgs(hub.poll("slow", 50, now=2.0), "slow")
    assert [(m["type"], m.get("ply")) for m in got] == [
        ("snapshot", None),
        ("moment", 5),
        ("moment", 6),
    ]
