"""The MQTT ingest state machine (pure): sequencing, idempotency, gaps, corrections, garbage."""

from __future__ import annotations

import json

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.feeds.mqtt_ingest import MqttIngest, move_event
from livegain.mqtt.address import parse_mqtt_url

T = "livegain/in/wijk/3/5"


def ev(seq: int, ply: int | None = None, san: str | None = None, **kw: object) -> bytes:
    return move_event(seq, ply, san, **kw)  # type: ignore[arg-type]


def moves(ing: MqttIngest, topic: str = T) -> tuple[str, ...]:
    return tuple(ing.boards[topic].moves)


def test_move_events_build_a_game_and_name_the_board() -> None:
    ing = MqttIngest("mq")
    r = ing.handle(
        T,
        ev(
            1,
            white={"name": "Carlsen, Magnus", "rating": 2830, "fide_id": 1503014},
            black="Giri, Anish",
        ),
        0.0,
    )
    assert r.errors == [] and len(r.snapshots) == 1
    ing.handle(T, ev(2, 1, "e4", clock=5400), 0.0)
    r = ing.handle(T, ev(3, 2, "e5", clock=5390), 0.0)
    snap = r.snapshots[-1]
    assert snap.moves == ("e4", "e5") and snap.clocks == (5400, 5390)
    assert snap.white.name == "Carlsen, Magnus" and snap.white.rating == 2830
    assert snap.white.fide_id == "1503014" and snap.black.name == "Giri, Anish"
    assert (snap.round, snap.board, snap.game_id) == ("3", 5, "mqtt:wijk/3/5")
    assert (snap.clock_white, snap.clock_black) == (5400, 5390)
    assert ("MqttTopic", T) in snap.tags and snap.source == "mq"


def test_redelivery_is_a_no_op() -> None:
    ing = MqttIngest()
    ing.handle(T, ev(1, 1, "e4"), 0.0)
    ing.handle(T, ev(2, 2, "e5"), 0.0)
    r = ing.handle(T, ev(1, 1, "e4"), 0.0)  # QoS 1 duplicate, after later events
    assert r.snapshots == [] and r.errors == []
    r = ing.handle(T, ev(2, 2, "e5"), 0.0)
    assert r.snapshots == [] and ing.duplicates == 2
    assert moves(ing) == ("e4", "e5")


def test_out_of_order_waits_for_the_gap_then_goes_on() -> None:
    ing = MqttIngest(gap_timeout=5.0)
    ing.handle(T, ev(1, 1, "e4"), 0.0)
    r = ing.handle(T, ev(3, 3, "Nf3"), 1.0)  # seq 2 is late
    assert r.snapshots == [] and ing.waiting
    r = ing.handle(T, ev(2, 2, "e5"), 2.0)
    assert moves(ing) == ("e4", "e5", "Nf3") and not ing.waiting
    assert len(r.snapshots) == 1  # one snapshot for both
    # a gap that never fills: reported after the timeout, then later events apply
    ing.handle(T, ev(5, 4, "Nc6"), 10.0)  # seq 4 (a clock-only event, say) is lost
    assert ing.expire_gaps(14.0).errors == []
    r = ing.expire_gaps(15.5)
    assert r.errors == [(T, "seq 4 never arrived within 5 s; going on")]
    assert moves(ing) == ("e4", "e5", "Nf3", "Nc6")


def test_missing_moves_are_not_invented() -> None:
    ing = MqttIngest(gap_timeout=1.0)
    ing.handle(T, ev(1, 1, "e4"), 0.0)
    ing.handle(T, ev(4, 4, "Nc6"), 0.0)  # seq 2 and 3 (plies 2, 3) lost
    r = ing.expire_gaps(2.0)
    assert "seq 2..3 never arrived" in r.errors[0][1]
    assert "ply 4 but only 1 plies known" in r.errors[1][1]
    assert moves(ing) == ("e4",)
    # a whole-PGN payload resynchronises the board
    ing.handle(T, b'[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Nf3 Nc6 *', 3.0)
    assert moves(ing) == ("e4", "e5", "Nf3", "Nc6")
    ing.handle(T, ev(5, 5, "Bb5"), 3.0)
    assert moves(ing)[-1] == "Bb5"


def test_corrections_takebacks_and_uci() -> None:
    ing = MqttIngest()
    for i, san in enumerate(["e4", "e5", "Nf3", "Nc6"], start=1):
        ing.handle(T, ev(i, i, san), 0.0)
    ing.handle(T, ev(5, 3, "Bc4"), 0.0)  # the operator corrects ply 3
    assert moves(ing) == ("e4", "e5", "Bc4")
    ing.handle(T, ev(6, truncate=2), 0.0)  # take back to 2 plies
    assert moves(ing) == ("e4", "e5")
    ing.handle(T, json.dumps({"seq": 7, "ply": 3, "uci": "g1f3"}).encode(), 0.0)
    assert moves(ing) == ("e4", "e5", "Nf3")
    r = ing.handle(T, ev(8, result="1-0"), 0.0)
    assert r.snapshots[-1].result == "1-0"


def test_illegal_and_garbled_payloads_name_the_topic_and_other_boards_carry_on() -> None:
    ing = MqttIngest()
    other = "livegain/in/wijk/3/6"
    ing.handle(T, ev(1, 1, "e4"), 0.0)
    ing.handle(other, ev(1, 1, "d4"), 0.0)
    bad = [
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "ply"),  # PGN-looking text that holds no game: parsed as PGN, reported
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b'{"ply": 2, "san": "e5"}', "valid 'seq'"),
        (b'{"seq": 2, "ply": 2, "san": "Ke3"}', "illegal"),
        (b'{"seq": 3, "ply": "two", "san": "e5"}', "valid 'ply'"),
        (b'{"seq": 4, "result": "white"}', "unknown result"),
        (b'{"seq": 5, "white": 42}', "'white' must be"),
        (b"", "empty payload"),
        (b'"just a string"', "neither"),
    ]
    for payload, _ in bad:
        r = ing.handle(T, payload, 0.0)
        assert r.errors, payload
        assert all(where.startswith(T) for where, _ in r.errors)
    r = ing.handle(T, b'{"seq": 2, "ply": 2, "san": "Ke3"}', 0.0)
    assert r.errors == []  # seq 2 was consumed (and reported) above: a duplicate now
    ing.handle(other, ev(2, 2, "d5"), 0.0)
    assert moves(ing, other) == ("d4", "d5")
    assert moves(ing) == ("e4",)
    assert ing.handle("short/topic", ev(1, 1, "e4"), 0.0).errors[0][0] == "short/topic"
    ing.handle(T, ev(6, 2, "e5"), 0.0)
    assert moves(ing) == ("e4", "e5")


def test_absurd_payloads_never_raise() -> None:
    ing = MqttIngest()
    for payload in [
        b"{" * 100_000,
        b'{"seq": 1, "white": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b"{" + b" " * 2_000_000 + b"}",
        b'{"seq": 1e400}',
        b'{"seq": 1, "fen": 3}',
    ]:
        r = ing.handle(T, payload, 0.0)
        assert r.errors and all(w.startswith(T) for w, _ in r.errors)


def test_epoch_restarts_numbering_and_fen_start() -> None:
    ing = MqttIngest()
    ing.handle(T, ev(1, 1, "e4", epoch="a"), 0.0)
    ing.handle(T, ev(2, 2, "e5", epoch="a"), 0.0)
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    ing.handle(T, ev(1, epoch="b", truncate=0, fen=fen), 0.0)  # a new round on this board
    ing.handle(T, ev(2, 1, "e4", epoch="b"), 0.0)
    b = ing.boards[T]
    assert b.moves == ["e4"] and b.initial_fen == fen


def test_mqtt_urls() -> None:
    a = parse_mqtt_url("mqtt://user:p%40ss@broker.example:1884")
    assert (a.host, a.port, a.tls, a.username, a.password) == (
        "broker.example",
        1884,
        False,
        "user",
        "p@ss",
    )
    assert parse_mqtt_url("mqtts://h").port == 8883
    try:
        parse_mqtt_url("http://h")
    except ValueError as exc:
        assert "not an MQTT URL" in str(exc)
    else:
        raise AssertionError("http:// accepted")


def test_pgn_payload_with_a_kings_signal_then_a_move_event() -> None:
    ing = MqttIngest()
    r = ing.handle(T, b'[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Ke3 *', 0.0)
    assert r.snapshots[-1].moves == ("e4", "e5", "Ke3") and r.errors == []
    r = ing.handle(T, ev(1, 4, "Nc6"), 0.0)
    assert "cannot place ply 4" in r.errors[0][1]
    r = ing.handle(T, ev(2, 3, "Nf3"), 0.0)  # a correction of the illegal ply works
    assert moves(ing) == ("e4", "e5", "Nf3") and r.errors == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["move", "move", "move", "fix", "cut", "dup"]), st.integers(0, 10_000)
        ),
        max_size=40,
    )
)
def test_events_agree_with_a_plain_model(ops: list[tuple[str, int]]) -> None:
    """Moves, corrections, takebacks and redeliveries: the ingest's list is the model's."""
    ing = MqttIngest()
    model: list[str] = []
    seq = 0
    sent: list[bytes] = []
    for op, r in ops:
        if op == "dup" and sent:
            ing.handle(T, sent[r % len(sent)], 0.0)  # redelivery of any earlier event
            continue
        if op == "cut":
            k = r % (len(model) + 1)
            seq += 1
            payload = ev(seq, truncate=k)
            model = model[:k]
        else:
            ply = len(model) + 1 if op != "fix" or not model else (r % len(model)) + 1
            board = chess.Board()
            for san in model[: ply - 1]:
                board.push_san(san)
            legal = list(board.legal_moves)
            if not legal:
                continue
            san = board.san(legal[r % len(legal)])
            seq += 1
            payload = ev(seq, ply, san)
            model = [*model[: ply - 1], san]
        sent.append(payload)
        r_ = ing.handle(T, payload, 0.0)
        assert r_.errors == []
    if T in ing.boards:
        assert moves(ing) == tuple(model)


def test_a_refused_pgn_makes_no_board_and_changes_none() -> None:
    """A game over the ply limit is refused with its topic named: it neither
    takes a board slot as an empty "? - ?" game nor touches a board that exists."""
    ing = MqttIngest("mq")
    huge = "1. " + " ".join("Nf3 Nf6 Ng1 Ng8" for _ in range(400)) + " *"
    r = ing.handle(T, huge.encode(), 0.0)
    assert r.snapshots == [] and T not in ing.boards
    assert any(where.startswith(T) and "max_plies" in msg for where, msg in r.errors), r.errors
    ing.handle(T, b"1. e4 e5 *", 0.0)
    r = ing.handle(T, huge.encode(), 0.0)
    assert r.snapshots == [] and moves(ing) == ("e4", "e5")
