"""The gateway's replica of the boards, fed the service's MQTT messages (no sockets, no asyncio).

The messages are what the service publishes: a game folded by the core
(corrections and evaluations included), its updates and states serialised by
livegain.publish.convert exactly as the service does.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

import chess
import pytest

from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.mqtt.topics import topic_safe
from livegain.publish import convert, schema
from livegain.publish.publication import Kind, Publication
from livegain.publish.recent_moments import RecentMoments
from livegain.publish.replica import Action, Replica, Resync

from .helpers import moment_bytes, toy_model

PREFIX = "livegain/out"
ENGINE = "Stockfish 15.1 depth 8"
MOVES = ["d4", "Nf6", "c4", "e6", "Nc3", "Bb4", "e3", "O-O", "Bd3", "d5", "Nf3", "c5"]


def ev_of(fen: str) -> Evaluation:
    cp = zlib.crc32(fen.encode()) % 301 - 150
    board = chess.Board(fen)
    best = sorted(m.uci() for m in board.legal_moves)[0] if not board.is_game_over() else None
    return Evaluation(cp=cp, depth=8, best=best)


def snap(moves: list[str], board: int = 1, **kw: object) -> GameSnapshot:
    args: dict[str, object] = {
        "source": "lcc",
        "white": PlayerInfo("Kasparov, Garry", rating=2812),
        "black": PlayerInfo("Karpov, Anatoly", rating=2725),
        "moves": tuple(moves),
        "clocks": tuple(7200 - 10 * k for k in range(len(moves))),
        "event": "World Championship",
        "round": "16",
        "board": board,
    }
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


@dataclass
class Stream:
    """One board's messages as the service publishes them."""

    board_id: str
    first: bytes
    """The snapshot message when the board appeared (retained state)."""
    messages: list[tuple[str, bytes]]
    """What follows, in order: ("update", update message), ("state", the
    snapshot message after a batch of updates) or ("reset", a snapshot message
    the service's own viewers get too: the board re-sent whole)."""

    @property
    def updates(self) -> list[bytes]:
        """Every update message, in seq order."""
        return [data for kind, data in self.messages if kind == "update"]

    @property
    def states(self) -> dict[int, bytes]:
        """The board's last snapshot message at each seq it was published at."""
        return {
            json.loads(data)["state"]["seq"]: data
            for kind, data in self.messages
            if kind in ("state", "reset")
        }

    @property
    def state_topic(self) -> str:
        return f"{PREFIX}/{topic_safe(self.board_id)}/state"

    @property
    def update_topic(self) -> str:
        return f"{PREFIX}/{topic_safe(self.board_id)}/update"

    def topic(self, kind: str) -> str:
        return self.update_topic if kind == "update" else self.state_topic

    @property
    def last(self) -> bytes:
        return self.states[max(self.states)]

    def after_reset(self) -> Stream:
        """The stream from its last reset on (only updates and the states after them)."""
        at = max(i for i, (kind, _) in enumerate(self.messages) if kind == "reset")
        return Stream(self.board_id, self.messages[at][1], self.messages[at + 1 :])


def snapshot_bytes(state: schema.BoardState) -> bytes:
    return schema.Snapshot(state=state).model_dump_json().encode()


def service_stream(board: int = 1) -> Stream:
    """A live game with evaluations, a correction and the result, as MQTT bodies."""
    t = BoardRegistry(PAPER_ENGINE_RATING, model=toy_model())
    applied = t.apply(snap(MOVES[:4], board))
    bid = applied.board_id
    assert bid is not None
    game = t.board(bid)
    first = snapshot_bytes(convert.board_state(game, engine=ENGINE))
    messages: list[tuple[str, bytes]] = []

    def batch(core: list[object], reset: bool = False) -> None:
        for u in core:
            messages.append(("update", convert.update(u).model_dump_json().encode()))  # type: ignore[arg-type]
        if core or reset:
            state = snapshot_bytes(convert.board_state(game, engine=ENGINE))
            messages.append(("reset" if reset else "state", state))

    def evaluate() -> None:
        for r in t.pending():
            batch(list(t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))))
            if r.ply == 0:
                # The start position's evaluation travels in snapshots only:
                # the service re-sends the board whole (service.py, _record).
                batch([], reset=True)

    evaluate()
    batch(list(t.apply(snap(MOVES[:8], board)).updates))
    evaluate()
    # a correction: 4...O-O rewritten as 4...Ne4, then the right moves again
    batch(list(t.apply(snap([*MOVES[:7], "Ne4", "Qc2"], board)).updates))
    evaluate()
    batch(list(t.apply(snap(MOVES, board, result="1-0")).updates))
    evaluate()
    stream = Stream(bid, first, messages)
    seqs = [json.loads(u)["seq"] for u in stream.updates]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and len(seqs) > 20
    assert any(json.loads(u)["truncate_to"] is not None for u in stream.updates)
    assert any(kind == "reset" for kind, _ in messages)
    return stream


@pytest.fixture(scope="module")
def whole() -> Stream:
    return service_stream()


@pytest.fixture(scope="module")
def stream(whole: Stream) -> Stream:
    """The board's messages after the service re-sent it whole: updates, and states after them."""
    return whole.after_reset()


def seq_of(update: bytes) -> int:
    return int(json.loads(update)["seq"])


def published(actions: list[Action]) -> list[bytes]:
    """The bytes of each board update published, in order."""
    return [
        data
        for a in actions
        if isinstance(a, Publication) and a.kind is Kind.BOARD and not a.whole
        for data in a.encoded
    ]


def snapshot_of(action: Action) -> schema.BoardState:
    """The state of a board publication sent whole (its subscribers get a
    snapshot); fails on anything else."""
    assert isinstance(action, Publication) and action.kind is Kind.BOARD and action.whole, action
    return action.entry.state


def plain(actions: list[Action]) -> list[tuple[str, str, bytes]]:
    """Publications that carry a message (a removal, standings, a moment) as
    (kind, key, message)."""
    out = []
    for a in actions:
        assert isinstance(a, Publication) and a.kind is not Kind.BOARD, a
        out.append((a.kind.value, a.key, a.data))
    return out


def final_snapshot(replica: Replica, board_id: str) -> bytes:
    state = replica.state(board_id)
    assert state is not None
    return snapshot_bytes(state)


def test_in_order_messages_give_what_the_services_viewers_get(whole: Stream) -> None:
    """Each update goes out byte for byte; a state that follows its updates
    changes nothing; a reset goes out as the same snapshot message."""
    replica = Replica(PREFIX)
    first = replica.feed(whole.state_topic, whole.first)
    assert len(first) == 1
    assert snapshot_of(first[0]) == schema.Snapshot.model_validate_json(whole.first).state
    sent: list[bytes] = []  # what the gateway's viewers get
    for kind, data in whole.messages:
        for action in replica.feed(whole.topic(kind), data):
            if published([action]):
                sent.extend(published([action]))
            else:
                sent.append(snapshot_bytes(snapshot_of(action)))
    viewers = [data for kind, data in whole.messages if kind in ("update", "reset")]
    assert sent == viewers
    # The board after the updates is the service's, serialised the same.
    assert final_snapshot(replica, whole.board_id) == whole.last
    assert replica.stats.updates == len(whole.updates) and replica.stats.gaps == 0
    assert replica.seq_lag() == 0


def test_duplicates_are_ignored(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    out: list[object] = []
    for data in stream.updates[:5]:
        out += replica.feed(stream.update_topic, data)
        out += replica.feed(stream.update_topic, data)  # QoS 1 may deliver twice
    assert published(out) == stream.updates[:5]
    assert replica.stats.duplicates == 5


def test_a_gap_asks_for_the_retained_state_and_rolls_forward(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    ups = stream.updates
    # seqs of the batches' states: pick one a few updates in, and lose the update before it
    k = next(i for i, u in enumerate(ups) if i >= 3 and seq_of(u) in stream.states)
    out: list[object] = []
    for data in ups[: k - 1]:
        out += replica.feed(stream.update_topic, data)
    assert published(out) == ups[: k - 1]
    # update k-1 is lost; update k and the next ones arrive
    gap = replica.feed(stream.update_topic, ups[k])
    assert gap == [Resync(stream.board_id, stream.state_topic)]
    later = [a for data in ups[k + 1 : k + 4] for a in replica.feed(stream.update_topic, data)]
    assert later == [], "nothing goes out while the gap is open"
    assert replica.seq_lag() == 4 + 1
    assert [r.board_id for r in replica.awaiting()] == [stream.board_id]
    # The retained state (at seq of ups[k]) comes back: the board is replaced,
    # then the updates kept aside follow, in order.
    resync = replica.feed(stream.state_topic, stream.states[seq_of(ups[k])])
    assert snapshot_of(resync[0]).seq == seq_of(ups[k])
    assert published(resync[1:]) == ups[k + 1 : k + 4]
    for data in ups[k + 4 :]:
        replica.feed(stream.update_topic, data)
    assert final_snapshot(replica, stream.board_id) == stream.last
    assert replica.awaiting() == [] and replica.seq_lag() == 0
    assert replica.stats.gaps == 1


def test_a_gap_closed_by_the_late_update_needs_no_state(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    ups = stream.updates
    assert replica.feed(stream.update_topic, ups[1]) == [
        Resync(stream.board_id, stream.state_topic)
    ]
    out = replica.feed(stream.update_topic, ups[0])
    assert published(out) == ups[:2]
    assert replica.awaiting() == []


def test_a_state_behind_the_updates_kept_aside_is_rolled_forward(stream: Stream) -> None:
    """The retained state may be older than the gap: the updates kept aside
    that follow it are applied; those still beyond a gap wait for a newer one."""
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    ups = stream.updates
    seqs = sorted(stream.states)
    s1 = seqs[1]
    s2 = next(s for s in seqs if s >= s1 + 4)  # two states of the service, s1 < s2
    first_seq = seq_of(ups[0])
    i1 = s1 + 1 - first_seq  # index of the update right after state s1
    i2 = s2 + 1 - first_seq
    for data in ups[i1 : i1 + 2]:  # updates s1+1, s1+2 arrive: a gap from the first state
        replica.feed(stream.update_topic, data)
    for data in ups[i2 + 1 : i2 + 3]:  # and s2+2, s2+3: another gap beyond
        replica.feed(stream.update_topic, data)
    out = replica.feed(stream.state_topic, stream.states[s1])
    assert snapshot_of(out[0]).seq == s1
    assert published(out[1:]) == ups[i1 : i1 + 2]
    assert replica.awaiting(), "still a gap: s1+3 .. s2+1 missing"
    out = replica.feed(stream.state_topic, stream.states[s2])
    assert snapshot_of(out[0]).seq == s2
    # s2+1 is still missing: s2+2 and s2+3 wait
    assert published(out[1:]) == []
    out = replica.feed(stream.update_topic, ups[i2])
    assert published(out) == ups[i2 : i2 + 3]
    assert replica.awaiting() == []


def test_updates_before_the_first_state_wait_for_it(stream: Stream) -> None:
    replica = Replica(PREFIX)
    ups = stream.updates
    s = sorted(stream.states)[0]
    i = s - seq_of(ups[0])
    assert replica.feed(stream.update_topic, ups[i + 1]) == [
        Resync(stream.board_id, stream.state_topic)
    ]
    assert replica.feed(stream.update_topic, ups[i + 2]) == []
    assert replica.board_ids() == []  # not a board yet: no state
    out = replica.feed(stream.state_topic, stream.states[s])
    snapshot_of(out[0])
    assert published(out[1:]) == ups[i + 1 : i + 3]
    assert replica.board_ids() == [stream.board_id]


def test_an_older_retained_state_is_ignored_unless_resyncing(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    for data in stream.updates:
        replica.feed(stream.update_topic, data)
    old = stream.states[min(stream.states)]
    assert replica.feed(stream.state_topic, old) == []
    assert replica.stats.stale_states == 1
    assert final_snapshot(replica, stream.board_id) == stream.last
    # After a reconnect, the retained state is the truth, whatever its seq.
    replica.begin_resync()
    out = replica.feed(stream.state_topic, old)
    assert [snapshot_of(a) for a in out] == [schema.Snapshot.model_validate_json(old).state]
    assert final_snapshot(replica, stream.board_id) == old
    assert replica.end_resync() == []


def test_a_service_restart_lets_older_states_in(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(f"{PREFIX}/status", b"online")
    replica.feed(stream.state_topic, stream.last)
    replica.feed(f"{PREFIX}/status", b"offline")
    assert replica.service == "offline"
    replica.feed(f"{PREFIX}/status", b"online")
    assert replica.stats.restarts == 1
    out = replica.feed(stream.state_topic, stream.first)
    assert len(out) == 1 and snapshot_of(out[0]) is not None
    assert final_snapshot(replica, stream.board_id) == stream.first


def test_a_reset_with_the_same_seq_is_a_new_snapshot(stream: Stream) -> None:
    """The service re-sends a board whole (new players, the start position's
    evaluation) without an update: a state that differs at the same seq."""
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    state = schema.Snapshot.model_validate_json(stream.first).state
    changed = state.model_copy(update={"white": schema.Player(name="Someone, Else")})
    out = replica.feed(stream.state_topic, snapshot_bytes(changed))
    assert [snapshot_of(a) for a in out] == [changed]
    # and the same state again is nothing new
    assert replica.feed(stream.state_topic, snapshot_bytes(changed)) == []


def test_an_empty_retained_state_removes_the_board(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    assert plain(replica.feed(stream.state_topic, b"")) == [("removal", stream.board_id, b"")]
    assert replica.board_ids() == []
    assert replica.feed(stream.state_topic, b"") == []  # unknown: nothing to do


def test_boards_gone_while_away_are_removed_after_the_resync() -> None:
    a, b = service_stream(1).after_reset(), service_stream(2).after_reset()
    replica = Replica(PREFIX)
    replica.feed(a.state_topic, a.first)
    replica.feed(b.state_topic, b.first)
    replica.begin_resync()
    # only a's retained state comes back (b was removed while we were away)
    assert replica.feed(a.state_topic, a.first) == []
    assert plain(replica.end_resync()) == [("removal", b.board_id, b"")]
    assert replica.board_ids() == [a.board_id]
    assert replica.end_resync() == []


def test_board_order_follows_the_services_list() -> None:
    a, b = service_stream(1).after_reset(), service_stream(2).after_reset()
    replica = Replica(PREFIX)
    replica.feed(a.state_topic, a.first)
    replica.feed(b.state_topic, b.first)
    listing = {"type": "boards", "boards": [{"board_id": b.board_id}, {"board_id": a.board_id}]}
    replica.feed(f"{PREFIX}/boards", json.dumps(listing).encode())
    assert [s.board_id for s in replica.ordered()] == [b.board_id, a.board_id]


def test_junk_is_counted_and_ignored(stream: Stream) -> None:
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    junk = [
        ("other/prefix/x/state", stream.first),
        (stream.state_topic, b"{not json"),
        (stream.update_topic, b'{"type": "update"}'),
        (f"{PREFIX}/someone-else/update", stream.updates[0]),  # board id not the topic's
        (f"{PREFIX}/status", b"maybe"),
        (f"{PREFIX}/boards", b"[]"),
        (f"{PREFIX}/x/other", b"1"),
    ]
    for topic, payload in junk:
        assert replica.feed(topic, payload) == []
    assert replica.stats.junk == len(junk)
    assert published(replica.feed(stream.update_topic, stream.updates[0])) == stream.updates[:1]


def test_updates_kept_aside_are_bounded(stream: Stream) -> None:
    replica = Replica(PREFIX, max_pending=3)
    replica.feed(stream.state_topic, stream.first)
    for data in stream.updates[1:8]:
        replica.feed(stream.update_topic, data)
    assert replica.stats.dropped == 4
    # the state covering the dropped ones rolls forward over the 3 kept
    s = seq_of(stream.updates[4])
    state = snapshot_bytes(stream_state_at(stream, s))
    out = replica.feed(stream.state_topic, state)
    assert published(out[1:]) == stream.updates[5:8]


def stream_state_at(stream: Stream, seq: int) -> schema.BoardState:
    """The board at ``seq``, folded from the first state by a replica (checked
    against the service's states where it published one)."""
    replica = Replica(PREFIX)
    replica.feed(stream.state_topic, stream.first)
    for data in stream.updates:
        if seq_of(data) > seq:
            break
        replica.feed(stream.update_topic, data)
    state = replica.state(stream.board_id)
    assert state is not None and state.seq == seq
    if seq in stream.states:
        assert snapshot_bytes(state) == stream.states[seq]
    return state


def test_an_events_standings_are_forwarded_byte_for_byte() -> None:
    """The service's retained ``standings`` message becomes the gateway's, so
    its widget and ``/api/standings`` show the same table; junk is counted."""
    r = Replica("livegain/out")
    data = json.dumps({"type": "standings", "event": "Tata Steel / Masters", "rows": []}).encode()
    topic = f"livegain/out/standings/{topic_safe('Tata Steel / Masters')}"
    assert r.topics.standings_filter == "livegain/out/standings/+"
    assert plain(r.feed(topic, data)) == [("standings", "Tata Steel / Masters", data)]
    assert r.feed(topic, b"") == []  # cleared retained message
    junk = r.stats.junk
    assert r.feed(topic, b"{not json") == []
    assert r.stats.junk == junk + 1


def test_the_services_latest_moments_each_once_in_order() -> None:
    """``{prefix}/moments`` (retained, published again after each new moment):
    each moment not seen yet is forwarded, byte for byte, in order; junk lines
    are counted and skipped."""
    r = Replica("p")
    recent = RecentMoments()
    recent.add("b1", moment_bytes("b1", 5))
    recent.add("b2", moment_bytes("b2", 9))
    first = r.feed("p/moments", recent.payload())
    assert plain(first) == [
        ("moment", "b1", moment_bytes("b1", 5)),
        ("moment", "b2", moment_bytes("b2", 9)),
    ]
    recent.add("b1", moment_bytes("b1", 30, "game-end"))
    again = r.feed("p/moments", recent.payload() + b"\nnot json")
    assert plain(again) == [("moment", "b1", moment_bytes("b1", 30, "game-end"))]
    assert r.stats.junk == 1
    assert r.feed("p/moments", recent.payload()) == []  # a reconnect's retained copy
    assert [b for b, _ in r.moments.items()] == ["b1", "b2", "b1"]
