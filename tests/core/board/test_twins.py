"""Results and rounds are read one way, whichever feed brings them: the PGN
parser, the MQTT ingest and the board registry share one rule for each."""

from __future__ import annotations

import pytest

from livegain.core.board.identity import positive_number, split_round
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.results import normalize_result
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds.mqtt_ingest import MqttIngest, move_event
from livegain.feeds.pgn import parse_pgn


@pytest.mark.parametrize(
    ("text", "board", "expected"),
    [
        ("3.5", None, ("3", 5)),
        ("3.5", 7, ("3", 7)),
        ("R1.5", None, ("R1", 5)),
        (" 12.40 ", None, ("12", 40)),
        ("3", None, ("3", None)),
        ("3.0", None, ("3", None)),
        ("?", None, (None, None)),
        ("-", 4, (None, 4)),
        (None, None, (None, None)),
        ("²", None, ("²", None)),
        ("3.²", None, ("3.²", None)),
        ("1.2.3", None, ("1.2.3", None)),
        (".5", None, (".5", None)),
    ],
)
def test_one_round_rule(text: str | None, board: int | None, expected: object) -> None:
    assert split_round(text, board) == expected


def test_positive_numbers_are_ascii_digits() -> None:
    assert positive_number(" 7 ") == 7
    assert positive_number("0") is None and positive_number("²") is None
    assert positive_number("1" * 13) is None and positive_number(None) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1-0", "1-0"),
        ("0-1", "0-1"),
        ("1/2-1/2", "1/2-1/2"),
        ("½-½", "1/2-1/2"),
        ("draw", "1/2-1/2"),
        ("Draw", "1/2-1/2"),
        ("DRAW", "1/2-1/2"),
        ("WhiteWin", "1-0"),
        ("1/2 - 1/2", "1/2-1/2"),
        ("*", "*"),
        ("", "*"),
        ("2-0", None),
        (None, None),
    ],
)
def test_one_result_rule(text: str | None, expected: str | None) -> None:
    assert normalize_result(text) == expected


def test_a_pgn_round_r1_5_is_round_r1_board_5() -> None:
    (g,) = parse_pgn('[Round "R1.5"]\n[White "A"]\n[Black "B"]\n\n1. e4 *')
    assert g.snapshot is not None
    assert (g.snapshot.round, g.snapshot.board) == ("R1", 5)
    (g,) = parse_pgn('[Round "3.²"]\n[White "A"]\n[Black "B"]\n\n1. e4 *')
    assert g.snapshot is not None and (g.snapshot.round, g.snapshot.board) == ("3.²", None)


def test_an_mqtt_draw_in_any_case_is_a_draw() -> None:
    for spelling in ("draw", "Draw", "1/2-1/2"):
        ing = MqttIngest("mq")
        topic = "livegain/in/open/R1.5/x"
        ing.handle(topic, move_event(1, 1, "e4"), 0.0)
        r = ing.handle(topic, move_event(2, result=spelling), 0.0)  # type: ignore[arg-type]
        assert r.errors == [], spelling
        assert r.snapshots[-1].result == "1/2-1/2"
        assert r.snapshots[-1].round == "R1"


def test_mqtt_topic_round_r1_5_is_round_r1_board_5() -> None:
    ing = MqttIngest("mq")
    r = ing.handle("livegain/in/open/R1.5/-", move_event(1, 1, "e4"), 0.0)
    assert r.errors == []
    snap = r.snapshots[-1]
    assert (snap.round, snap.board) == ("R1", 5)


def test_the_registry_files_r1_5_under_board_5_whatever_the_feed() -> None:
    """A PGN feed and a snapshot with the round left whole meet on one board."""
    t = BoardRegistry(PAPER_ENGINE_RATING)
    (g,) = parse_pgn('[Round "R1.5"]\n[White "Anand"]\n[Black "Kramnik"]\n\n1. e4 *')
    assert g.snapshot is not None
    a = t.apply(g.snapshot)
    raw = GameSnapshot(
        source=g.snapshot.source,
        round="R1.5",
        white=PlayerInfo(name="Anand"),
        black=PlayerInfo(name="Kramnik"),
        moves=("e4", "e5"),
    )
    b = t.apply(raw)
    assert a.board_id == b.board_id and t.board(a.board_id).board == 5


def test_lcc_results_are_read_by_the_same_rule() -> None:
    from livegain.feeds.lcc_json import pairing_result

    assert pairing_result({"result": "½-½"}) == "1/2-1/2"
    assert pairing_result({"result": " 1-0 "}) == "1-0"
    assert pairing_result({"result": "DRAW"}) == "1/2-1/2"
    assert pairing_result({"result": "2-0"}) == "*" and pairing_result({}) == "*"
