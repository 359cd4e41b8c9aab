"""The pure MQTT ingest: restart restore, stale boards and their healing, caps."""

from __future__ import annotations

import json

from livegain.feeds.mqtt_ingest import MqttIngest, move_event

T = "livegain/in/wijk/3/5"
GAME = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5"]


def feed_moves(
    ing: MqttIngest, upto: int, now: float = 0.0, *, skip: frozenset[int] = frozenset()
) -> None:
    """Game start (seq 1) then plies 1..upto as seq 2..upto+1 (minus ``skip`` plies)."""
    ing.handle(T, move_event(1, white="A", black="B", epoch="e1"), now)
    for ply in range(1, upto + 1):
        if ply not in skip:
            ing.handle(T, move_event(ply + 1, ply, GAME[ply - 1], epoch="e1"), now)


def test_restore_continues_the_board_and_ignores_old_events() -> None:
    ing = MqttIngest("mq")
    feed_moves(ing, 10)
    snap = ing.boards[T].last_emitted
    assert snap is not None and len(snap.moves) == 10
    seqs = ing.sequence_state()
    assert seqs == {T: {"seq": 11, "epoch": "e1"}}

    again = MqttIngest("mq")
    assert again.restore([snap], seqs) == 1
    # a redelivered old event (the game's start, which cuts to ply 0) is a duplicate
    res = again.handle(T, move_event(1, truncate=0, white="A", black="B", epoch="e1"), 1.0)
    assert res.snapshots == [] and again.duplicates == 1
    res = again.handle(T, move_event(12, 11, "Re1", epoch="e1"), 1.0)
    assert res.errors == []
    assert res.snapshots[-1].moves == tuple(GAME[:11])
    assert res.snapshots[-1].white.name == "A"


def test_restore_without_sequence_state_joins_at_the_next_event() -> None:
    ing = MqttIngest("mq")
    feed_moves(ing, 10)
    snap = ing.boards[T].last_emitted
    assert snap is not None
    again = MqttIngest("mq")
    again.restore([snap])
    res = again.handle(T, move_event(12, 11, "Re1", epoch="e1"), 1.0)
    assert res.errors == [] and res.snapshots[-1].moves == tuple(GAME[:11])


def test_restore_takes_only_this_feeds_boards() -> None:
    ing = MqttIngest("mq")
    feed_moves(ing, 2)
    snap = ing.boards[T].last_emitted
    assert snap is not None
    assert MqttIngest("other").restore([snap]) == 0


def test_a_lost_move_makes_the_board_stale_and_a_whole_game_heals_it() -> None:
    ing = MqttIngest("mq", gap_timeout=1.0)
    feed_moves(ing, 8, skip=frozenset({5}))  # seq 6 (ply 5) lost
    assert len(ing.boards[T].moves) == 4 and ing.waiting
    res = ing.expire_gaps(2.0)
    assert any("seq 6 never arrived" in m for _, m in res.errors)
    assert res.resyncs == [T]  # the whole game is asked for
    assert T in ing.stale_boards() and ing.stale_marked == 1
    assert any("moves are missing" in m for _, m in res.errors)
    # asked again, but not more than once per gap_timeout
    assert ing.expire_gaps(2.5).resyncs == []
    assert ing.expire_gaps(3.1).resyncs == [T]
    # the relay answers with the game's PGN so far
    pgn = '[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 *'
    res = ing.handle(T, pgn.encode(), 4.0)
    assert res.snapshots[-1].moves == tuple(GAME[:8])
    assert ing.stale_boards() == {} and ing.healed == 1
    res = ing.handle(T, move_event(10, 9, "O-O", epoch="e1"), 4.0)
    assert res.errors == [] and res.snapshots[-1].moves == tuple(GAME[:9])


def test_a_moves_event_replaces_the_game_without_waiting_for_a_gap() -> None:
    ing = MqttIngest("mq", gap_timeout=100.0)
    feed_moves(ing, 6, skip=frozenset({3}))
    assert len(ing.boards[T].moves) == 2 and ing.boards[T].pending
    full = json.dumps({"seq": 20, "epoch": "e1", "moves": GAME[:6], "result": "*"}).encode()
    res = ing.handle(T, full, 1.0)
    assert res.errors == []
    assert res.snapshots[-1].moves == tuple(GAME[:6])
    assert ing.boards[T].pending == {} and ing.boards[T].gap_since is None
    res = ing.handle(T, move_event(21, 7, "Ba4", epoch="e1"), 1.0)
    assert res.snapshots[-1].moves == tuple(GAME[:7])


def test_a_bad_moves_list_keeps_its_legal_prefix_and_names_the_ply() -> None:
    ing = MqttIngest("mq")
    full = json.dumps({"seq": 1, "moves": ["e4", "e5", "Ke3", "Nc6"]}).encode()
    res = ing.handle(T, full, 0.0)
    assert res.snapshots[-1].moves == ("e4", "e5")
    ((where, message),) = res.errors
    assert where == f"{T} seq 1 ply 3 (Ke3)" and "illegal" in message


def test_uci_moves_and_a_start_position() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    ing = MqttIngest("mq")
    res = ing.handle(T, json.dumps({"seq": 1, "fen": fen, "moves": ["e2e4", "Kd7"]}).encode(), 0)
    assert res.errors == []
    assert res.snapshots[-1].moves == ("e4", "Kd7") and res.snapshots[-1].initial_fen == fen


def test_max_games_refuses_new_topics_naming_them() -> None:
    ing = MqttIngest("mq", max_games=2)
    for b in (1, 2):
        assert ing.handle(f"livegain/in/t/1/{b}", move_event(1, 1, "e4"), 0).errors == []
    res = ing.handle("livegain/in/t/1/3", move_event(1, 1, "e4"), 0)
    ((where, message),) = res.errors
    assert where == "livegain/in/t/1/3" and "max_games" in message
    assert ing.refused_topics == 1 and len(ing.boards) == 2
    # the boards already followed go on
    assert ing.handle("livegain/in/t/1/1", move_event(2, 2, "e5"), 0).errors == []


def test_max_bytes_caps_a_payload() -> None:
    ing = MqttIngest("mq", max_bytes=100)
    res = ing.handle(T, b"{" + b" " * 200 + b"}", 0)
    ((where, message),) = res.errors
    assert where == T and "over the limit of 100" in message
    assert T not in ing.boards


def test_non_finite_or_huge_clocks_are_refused_not_crashing() -> None:
    ing = MqttIngest("mq")
    res = ing.handle(T, b'{"seq":1,"ply":1,"san":"e4","clock":Infinity}', 0)
    assert res.snapshots[-1].moves == ("e4",) and res.snapshots[-1].clocks == (None,)
    ((where, message),) = res.errors
    assert where == f"{T} seq 1 ply 1 (e4)" and "'clock' inf is not a number" in message
    res = ing.handle(T, b'{"seq":2,"clocks":{"white":1e400,"black":NaN}}', 0)
    assert not any("unreadable" in m for _, m in res.errors)
