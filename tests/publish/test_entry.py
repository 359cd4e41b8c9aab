"""A board entry builds the board-list line without the whole state when it
is given a way to, and the whole state only when a snapshot needs it."""

from __future__ import annotations

from livegain.publish.entry import BoardEntry, summary_of
from livegain.publish.schema import BoardState

from .helpers import board_state


def test_the_list_line_and_key_come_from_the_summary_without_building_the_state() -> None:
    built: list[str] = []
    whole = board_state("b1", plies=3, seq=3)

    def state() -> BoardState:
        built.append("state")
        return whole

    entry = BoardEntry(state, summary=lambda: summary_of(whole))
    assert entry.list_key == ("b1", whole.white.name, whole.black.name, "*")
    assert entry.summary() == summary_of(whole)
    assert entry.summary_json() == summary_of(whole).model_dump_json().encode()
    assert built == []  # the board list never needed the state
    assert b'"type":"snapshot"' in entry.snapshot_bytes()
    assert built == ["state"]


def test_without_a_summary_function_the_line_is_the_state_s() -> None:
    whole = board_state("b2", plies=2, seq=2)
    entry = BoardEntry(lambda: whole)
    assert entry.summary() == summary_of(whole)
    assert entry.list_key[0] == "b2"
