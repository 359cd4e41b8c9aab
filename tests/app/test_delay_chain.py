"""Every kind of publication goes through the one chain
(:mod:`livegain.publish.publication`): with the broadcast delay on, the delay
step holds each (the outputs get nothing before its time) and releases them
in the order they were made, across a restart too; without a delay each goes
straight on to the outputs. No clock: times are passed in."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from livegain.app.broadcast_delay import BroadcastDelay
from livegain.app.stats import ServiceStats
from livegain.app.store import Store
from livegain.app.store_writes import StoreWrites
from livegain.publish.entry import BoardEntry
from livegain.publish.publication import Kind, Publication
from livegain.publish.schema import BoardState, Player, Update

from .conftest import settings_for

T0 = 1_700_000_000.0
DELAY = 10
BID = "open-r1-b1"


class Outputs:
    """The chain's last step, recording what reaches it."""

    def __init__(self) -> None:
        self.got: list[Publication] = []

    def deliver(self, p: Publication, /) -> None:
        self.got.append(p)


def delay_step(
    tmp_path: Path, outputs: Outputs, delay: int, store: Store | None, now: float = T0
) -> BroadcastDelay:
    settings = settings_for(tmp_path, broadcast={"delay": delay})
    stats = ServiceStats()
    step = BroadcastDelay(settings, outputs, StoreWrites(stats, store), stats, lambda s: None)
    step.start([], store, now)
    return step


def board(seq: int) -> BoardState:
    return BoardState(
        board_id=BID,
        tournament="Open",
        round="1",
        board=1,
        white=Player(name="Alpha"),
        black=Player(name="Beta"),
        result="*",
        status="live",
        fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        moves=[],
        white_trace=[],
        black_trace=[],
        engine="material",
        engine_rating=2860.0,
        seq=seq,
    )


def one_of_each(delay: int) -> list[Publication]:
    """A publication of every kind, in the order a service makes them, one
    second apart: a new board, an update of it, a key moment, the event's
    standings, the board list, the board's removal."""
    update = Update(board_id=BID, seq=1, fen="after e4", result="*", status="live")
    made = [
        Publication.board_change(BID, BoardEntry(board(0)), whole=True, at=T0, delay=delay),
        Publication.board_change(BID, BoardEntry(board(1)), (update,), at=T0 + 1, delay=delay),
        Publication.moment(BID, b'{"type":"moment"}', at=T0 + 2, delay=delay),
        Publication.standings("Open", b'{"type":"standings"}', at=T0 + 3, delay=delay),
        replace(Publication.board_list(lambda: b'{"type":"boards"}', at=T0 + 4), delay=delay),
        Publication.removal(BID, at=T0 + 5, delay=delay),
    ]
    assert {p.kind for p in made} == set(Kind), "a kind of publication is missing here"
    return made


def assert_released_as_made(got: list[Publication], made: list[Publication]) -> None:
    assert [(p.kind, p.key) for p in got] == [(p.kind, p.key) for p in made]
    for out, made_p in zip(got, made, strict=True):
        if made_p.kind is Kind.BOARD:
            assert out.whole == made_p.whole
            assert out.encoded == made_p.encoded  # the very update messages
            assert out.entry.state.seq == made_p.entry.state.seq
            assert out.entry.state.delay == DELAY  # what viewers see is marked late
        elif made_p.kind is not Kind.REMOVAL:
            assert out.message == made_p.message
        assert out.delay == 0


def test_with_a_delay_every_kind_is_held_then_released_in_order(tmp_path: Path) -> None:
    outputs = Outputs()
    step = delay_step(tmp_path, outputs, DELAY, None)
    made = one_of_each(DELAY)
    for p in made:
        step.deliver(p)
    assert outputs.got == []  # every kind held
    step.release_due(made[0].shown_from - 0.5)
    assert outputs.got == []  # nothing before its time
    for i, p in enumerate(made):
        step.release_due(p.shown_from)  # one a second, as they were made
        assert len(outputs.got) == i + 1
    assert_released_as_made(outputs.got, made)


def test_what_the_delay_holds_comes_out_after_a_restart_in_order(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    step = delay_step(tmp_path, Outputs(), DELAY, store)
    made = one_of_each(DELAY)
    for p in made:
        step.deliver(p)
    store.close()

    store = Store(tmp_path / "s.sqlite3")
    outputs = Outputs()
    step = delay_step(tmp_path, outputs, DELAY, store, now=T0 + 6)
    assert outputs.got == []  # nothing was due, nothing released before
    step.release_due(T0 + DELAY + len(made))
    assert_released_as_made(outputs.got, made)
    store.close()


def test_without_a_delay_every_kind_goes_straight_on(tmp_path: Path) -> None:
    outputs = Outputs()
    step = delay_step(tmp_path, outputs, 0, None)
    assert step.line is None
    made = one_of_each(0)
    for p in made:
        step.deliver(p)
    assert outputs.got == made


def test_the_board_list_and_an_operators_removal_are_never_held(tmp_path: Path) -> None:
    """The board list shows what viewers have (delay 0: it passes); an
    operator's removal goes out now and takes what was held of the board."""
    outputs = Outputs()
    step = delay_step(tmp_path, outputs, DELAY, None)
    step.deliver(one_of_each(DELAY)[0])
    listed = Publication.board_list(lambda: b'{"type":"boards","boards":[]}', at=T0 + 1)
    step.deliver(listed)
    removal = Publication.removal(BID, at=T0 + 2, delay=DELAY, at_once=True)
    step.deliver(removal)
    assert outputs.got == [listed, removal]
    assert json.loads(outputs.got[0].message)["type"] == "boards"
    assert step.line is not None and not step.line.knows(BID)
    step.release_due(T0 + 100)
    assert outputs.got == [listed, removal]
