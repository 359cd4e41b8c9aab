"""The broadcast delay line on its own: no clock (times passed in), no I/O
but the store it is written to.

What viewers rely on: nothing of a board is released before the time its
move first reached the service plus the delay; a move's evaluation comes out
with the move; the released state is the board as undelayed publishing
would have shown it; a line written to the store and read back after a
restart releases nothing early.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from livegain.app.store import Store
from livegain.publish.delay_line import (
    DelayLine,
    Held,
    Message,
    Remove,
    Unchained,
    decode_held,
    encode_held,
    encode_item,
)
from livegain.publish.fold import apply_update
from livegain.publish.publication import Kind
from livegain.publish.schema import BoardState, EvalInfo, Ply, Update

from .helpers import board_state
from .test_hub import service_output

UCIS = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]
SANS = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]
T0 = 1_700_000_000.0  # wall-clock seconds: the line survives restarts


def ply(n: int, *, cp: int | None = None) -> Ply:
    return Ply(
        ply=n,
        san=SANS[n - 1],
        uci=UCIS[n - 1],
        color="white" if n % 2 else "black",
        eval=None if cp is None else EvalInfo(cp=cp, depth=10),
    )


def update(seq: int, n: int | None, *, cp: int | None = None, result: str = "*") -> Update:
    return Update(
        board_id="b1",
        seq=seq,
        ply=None if n is None else ply(n, cp=cp),
        fen=f"fen after ply {n}",
        eval=None if cp is None else EvalInfo(cp=cp, depth=10),
        result=result,
        status="live" if result == "*" else "finished",
    )


def standings(version: int) -> Message:
    """Event "Open"'s ``standings`` message ``version``."""
    return Message(Kind.STANDINGS, "Open", b'{"version":%d}' % version)


OPEN = standings(0).board_id
"""Where the line holds event "Open"'s standings."""


def started(line: DelayLine, now: float, delay: float) -> BoardState:
    """A new board (no move yet) held at ``now``."""
    state = board_state("b1", seq=0)
    line.hold(now, "b1", state, delay)
    return state


def release_all(line: DelayLine, until: float, step: float = 0.25) -> list[tuple[float, Update]]:
    """Call due() every ``step`` seconds up to ``until``: (time released, update)."""
    out: list[tuple[float, Update]] = []
    t = T0
    while t <= until:
        for r in line.due(t):
            if isinstance(r.held.item, Update):
                out.append((t, r.held.item))
        t += step
    return out


# ------------------------------------------------------------- release times


def test_no_move_is_released_before_its_arrival_plus_the_delay() -> None:
    line = DelayLine()
    started(line, T0, 10)
    arrivals = {1: T0 + 1, 2: T0 + 2.5, 3: T0 + 3, 4: T0 + 7}
    for seq, (n, at) in enumerate(arrivals.items(), start=1):
        held = line.hold(at, "b1", update(seq, n), 10)
        assert held.due == at + 10
    assert [r.held.kind for r in line.due(T0 + 10.99)] == ["state"]  # the board, no move
    released = release_all(line, T0 + 30)
    assert [u.ply.ply for _, u in released if u.ply] == [1, 2, 3, 4]
    for t, u in released:
        assert u.ply is not None
        assert t >= arrivals[u.ply.ply] + 10
    assert len(line) == 0 and line.next_due() is None


def test_an_evaluation_comes_out_with_its_move() -> None:
    """The engine runs ahead: ply 1's evaluation arrives 0.4 s after ply 1;
    both come out at ply 1's time, the move already evaluated."""
    line = DelayLine()
    started(line, T0, 10)
    move = line.hold(T0 + 1, "b1", update(1, 1), 10)
    evaluated = line.hold(T0 + 1.4, "b1", update(2, 1, cp=35), 10)
    assert evaluated.due == move.due == T0 + 11
    assert line.next_due() == T0 + 10  # the board itself, first
    out = line.due(T0 + 11)
    state = out[-1].state
    assert state is not None and state.moves[0].eval == EvalInfo(cp=35, depth=10)
    assert [r.held.n for r in out] == sorted(r.held.n for r in out)
    # An evaluation later than the delay goes out when it comes.
    late = line.hold(T0 + 20, "b1", update(3, 1, cp=40), 10)
    assert late.due == T0 + 11
    assert [r.held.n for r in line.due(T0 + 20)] == [late.n]


def test_an_item_is_never_released_before_an_earlier_item_of_its_board() -> None:
    """A result (no ply) after the last move: released at its own arrival plus
    the delay, and an old ply's evaluation held after it waits for it."""
    line = DelayLine()
    started(line, T0, 10)
    line.hold(T0 + 1, "b1", update(1, 1), 10)
    line.hold(T0 + 2, "b1", update(2, 2), 10)
    result = line.hold(T0 + 5, "b1", update(3, None, result="1-0"), 10)
    backfill = line.hold(T0 + 6, "b1", update(4, 1, cp=10, result="1-0"), 10)
    assert result.due == T0 + 15
    assert backfill.due == T0 + 15  # not ply 1's T0 + 11: it shows the result
    released = release_all(line, T0 + 20)
    assert [(t, u.seq) for t, u in released if u.result != "*"] == [(T0 + 15, 3), (T0 + 15, 4)]


def test_a_shorter_delay_later_does_not_overtake_what_is_held() -> None:
    line = DelayLine()
    started(line, T0, 60)
    first = line.hold(T0 + 1, "b1", update(1, 1), 60)
    second = line.hold(T0 + 2, "b1", update(2, 2), 0)
    assert second.due == first.due == T0 + 61


def test_boards_are_independent_and_each_in_order() -> None:
    line = DelayLine()
    for bid, delay in (("a", 5), ("b", 1)):
        line.hold(T0, bid, board_state(bid, seq=0), delay)
    out = line.due(T0 + 1)
    assert [r.board_id for r in out] == ["b"]
    assert line.released_state("a") is None
    assert line.next_due() == T0 + 5
    assert [r.board_id for r in line.due(T0 + 5)] == ["a"]
    assert set(line.released_states()) == {"a", "b"}


# -------------------------------------------------------- what is released


@pytest.mark.parametrize("calibrated", [False, True], ids=["algorithm4-only", "calibrated"])
def test_the_released_state_is_what_undelayed_publishing_shows(calibrated: bool) -> None:
    """The service's own updates (moves, evaluations, a correction, a
    takeback, a clock fix, a result) held one a second: after each release
    the released state is the state undelayed publishing had at that point."""
    wire, states = service_output(calibrated)
    line = DelayLine()
    line.hold(T0, states[0].board_id, states[0], 30)
    for i, u in enumerate(wire, start=1):
        line.hold(T0 + i, u.board_id, u, 30)
    seen: dict[int, BoardState] = {}
    t = T0
    while len(line):
        for r in line.due(t):
            assert t >= r.held.due
            assert r.state is not None
            if isinstance(r.held.item, Update):
                seen[r.held.item.seq - states[0].seq] = r.state
        t += 1
    for k, want in states.items():
        if k == 0:
            continue
        assert seen[k].model_copy(update={"start_eval": want.start_eval}) == want, k
    final = seen[len(wire)]
    assert final.result == "1-0"
    folded = states[0]
    for u in wire:
        folded = apply_update(folded, u)
    assert final == folded


def test_an_update_must_follow_what_is_held() -> None:
    line = DelayLine()
    assert line.expects("b1") is None
    with pytest.raises(Unchained):
        line.hold(T0, "b1", update(1, 1), 5)  # no state yet
    started(line, T0, 5)
    assert line.expects("b1") == 1
    with pytest.raises(Unchained) as info:
        line.hold(T0, "b1", update(2, 1), 5)
    assert (info.value.expected, info.value.got) == (1, 2)
    with pytest.raises(ValueError, match="board"):
        line.hold(T0, "b2", update(1, 1), 5)
    with pytest.raises(ValueError, match="delay"):
        line.hold(T0, "b1", update(1, 1), -1)
    line.hold(T0, "b1", update(1, 1), 5)
    # a whole state restarts the numbering (a restart, new players)
    line.hold(T0 + 1, "b1", board_state("b1", plies=1, seq=40), 5)
    assert line.expects("b1") == 41


def test_a_removal_is_delayed_too_and_a_drop_is_at_once() -> None:
    line = DelayLine()
    started(line, T0, 5)
    line.hold(T0 + 1, "b1", update(1, 1), 5)
    line.hold(T0 + 2, "b1", Remove("b1"), 5)
    assert line.expects("b1") is None  # after a removal: a whole board again
    out = line.due(T0 + 6)
    assert [r.held.kind for r in out] == ["state", "update"]
    assert line.released_state("b1") is not None
    (gone,) = line.due(T0 + 7)
    assert gone.held.kind == "remove" and gone.state is None and gone.checkpoint
    assert not line.knows("b1") and line.released_states() == {}
    # An operator's removal: at once, with what was held.
    started(line, T0 + 8, 5)
    line.hold(T0 + 9, "b1", update(1, 1), 5)
    assert line.drop("b1") and len(line) == 0
    assert line.next_due() is None and line.due(T0 + 100) == []


def test_messages_are_held_by_key_in_order() -> None:
    line = DelayLine()
    line.hold(T0, OPEN, standings(1), 5)
    line.hold(T0 + 1, OPEN, standings(2), 5)
    assert line.due(T0 + 5.5)[0].held.item == standings(1)
    (second,) = line.due(T0 + 6)
    assert second.state is None and second.checkpoint
    assert not line.knows(OPEN)


def test_the_items_held_of_a_key_in_order() -> None:
    line = DelayLine()
    first = line.hold(T0, OPEN, standings(1), 5)
    second = line.hold(T0 + 1, OPEN, standings(2), 5)
    assert line.held(OPEN) == [first, second] and line.held("b9") == []
    line.due(T0 + 5)
    assert line.held(OPEN) == [second]


def test_checkpoints_come_every_n_updates_and_with_each_state() -> None:
    line = DelayLine(checkpoint_every=3)
    started(line, T0, 0)
    for seq in range(1, 8):
        line.hold(T0, "b1", update(seq, min(seq, 8)), 0)
    marks = [r.checkpoint for r in line.due(T0)]
    assert marks == [True, False, False, True, False, False, True, False]


# ---------------------------------------------------------------- restarts


def store_line(store: Store, line: DelayLine, held: list[Held], now: float) -> None:
    """What the service does: every held item written, checkpoints on release."""
    for h in held:
        store.save_held(h.n, h.board_id, h.due, *encode_item(h.item))
    for r in line.due(now):
        if r.checkpoint:
            store.save_released(
                r.board_id, None if r.state is None else r.state.model_dump_json(), r.held.n
            )


def restored(store: Store) -> DelayLine:
    released, rows = store.load_delayed()
    line = DelayLine()
    line.restore(
        {b: BoardState.model_validate_json(text) for b, _, text in released},
        [decode_held(*row) for row in rows],
    )
    return line


def test_a_restart_releases_nothing_early(tmp_path: Path) -> None:
    line = DelayLine(checkpoint_every=2)
    held = [line.hold(T0, "b1", board_state("b1", seq=0), 10)]
    held += [line.hold(T0 + n, "b1", update(n, n), 10) for n in range(1, 8)]
    held.append(line.hold(T0 + 8, "b2", board_state("b2", seq=0), 10))
    held.append(line.hold(T0 + 8, OPEN, standings(0), 10))
    store = Store(tmp_path / "s.sqlite3")
    store_line(store, line, held, T0 + 13.5)  # plies 1-3 out; 4-7 held
    shown = line.released_state("b1")
    assert shown is not None and len(shown.moves) == 3
    store.close()

    store = Store(tmp_path / "s.sqlite3")
    again = restored(store)
    # Viewers see what they saw (items released since the last checkpoint
    # are due at once and folded in again), and nothing more.
    assert again.due(T0 + 13.5) != []
    assert again.released_state("b1") == shown
    assert again.released_state("b2") is None
    assert again.expects("b1") == 8
    for t in (T0 + 13.9, T0 + 14.5, T0 + 16):
        for r in again.due(t):
            assert r.held.due <= t
    assert again.next_due() == T0 + 17
    rest = again.due(T0 + 100)
    assert [r.board_id for r in rest] == ["b1", "b2", OPEN]
    final = again.released_state("b1")
    assert final is not None and [m.ply for m in final.moves] == list(range(1, 8))
    store.close()


def test_a_stored_item_reads_back_the_same() -> None:
    items: list[BoardState | Update | Remove | Message] = [
        board_state("b1", plies=3, seq=3),
        update(4, 4, cp=12),
        Remove("b1"),
        Message(Kind.MOMENT, "b1", b'{"type":"moment"}'),
        Message(Kind.STANDINGS, "Open/A", b'{"type":"standings"}'),
    ]
    for n, item in enumerate(items, start=1):
        kind, body = encode_item(item)
        back = decode_held(n, item.board_id, T0 + n, kind, body)
        assert (back.n, back.due, back.item, back.kind) == (n, T0 + n, item, kind)
    # A message's kind and key stay apart from the boards' ids in the line.
    assert Message(Kind.MOMENT, "b1", b"{}").board_id != "b1"
    with pytest.raises(ValueError):
        decode_held(1, "gossip/b1", T0, "message", "{}")
    with pytest.raises(ValueError):
        decode_held(1, "b1", T0, "gossip", "{}")
    with pytest.raises(ValueError):
        decode_held(1, "b2", T0, *encode_item(update(1, 1)))


def test_a_held_update_is_stored_and_read_back_in_the_bytes_it_was_published_in() -> None:
    """An update held with its published bytes is stored in them (not encoded
    again) and comes back from the store with them, to be released as they are."""
    line = DelayLine()
    line.hold(T0, "b1", board_state("b1", plies=0, seq=0), 5)
    u = update(1, 1, cp=20)
    published = u.model_dump_json().encode()
    held = line.hold(T0, "b1", u, 5, published)
    assert held.data == published
    kind, body = encode_held(held)
    assert (kind, body) == ("update", published.decode())
    back = decode_held(held.n, "b1", held.due, kind, body)
    assert back.item == u and back.data == published
    # without the bytes (a state): encoded as before
    state = line.held("b1")[0]
    assert state.data is None and encode_held(state) == encode_item(state.item)
