"""Fuzzing the pure MQTT ingest: arbitrary payloads never raise, never crash
inside (no "unreadable payload"), every error names its topic, and every
snapshot is a legal game."""

from __future__ import annotations

import json
from typing import Any

import chess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livegain.feeds.mqtt_ingest import MqttIngest

TOPICS = ["livegain/in/t/1/1", "livegain/in/t/1/2", "x/t/2/10", "bad", "a//b"]
SANS = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O", "Ke2", "Qh5", "exd5", "e8=Q", "Nbd7", "xx"]
FENS = [
    chess.STARTING_FEN,
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "not a fen",
    "8/8/8/8/8/8/8/8 w - - 0 1",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(SANS),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
event_fields: dict[str, st.SearchStrategy[Any]] = {
    "seq": st.one_of(st.integers(min_value=-1, max_value=25), values),
    "epoch": st.sampled_from([None, "e1", "e2", 7]),
    "ply": st.one_of(st.integers(min_value=-1, max_value=25), values),
    "san": st.one_of(st.sampled_from(SANS), values),
    "uci": st.sampled_from(["e2e4", "e7e5", "g1f3", "e1g1", "a7a8q", "zz"]),
    "clock": st.one_of(numbers := st.floats() | st.integers(-5, 10**30), values),
    "clocks": st.one_of(st.fixed_dictionaries({"white": numbers, "black": numbers}), values),
    "white": values,
    "black": values,
    "result": st.sampled_from(["1-0", "0-1", "1/2-1/2", "*", "draw", 1]),
    "truncate": st.one_of(st.integers(min_value=-1, max_value=25), values),
    "fen": st.one_of(st.sampled_from(FENS), values),
    "moves": st.one_of(st.lists(st.sampled_from([*SANS, "e2e4", "g8f6"]), max_size=12), values),
    "event": values,
    "game_id": values,
}


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["move", "move", "move", "event", "bytes", "pgn", "json"]))
    if kind == "move":  # a well-formed move event with one or two odd fields
        data = {"seq": draw(st.integers(1, 12)), "ply": draw(st.integers(1, 8))}
        data["san"] = draw(st.sampled_from(SANS))
        for k in draw(st.sets(st.sampled_from(sorted(event_fields)), max_size=2)):
            data[k] = draw(event_fields[k])
        return json.dumps(data, default=str).encode()
    if kind == "event":
        keys = draw(st.sets(st.sampled_from(sorted(event_fields)), max_size=6))
        data = {
            k: draw(event_fields[k]) for k in keys | ({"seq"} if draw(st.booleans()) else set())
        }
        return json.dumps(data, default=str).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "json":
        return json.dumps(draw(values), default=str).encode()
    sans = draw(st.lists(st.sampled_from(SANS), max_size=10))
    movetext = " ".join(f"{i // 2 + 1}. {s}" if i % 2 == 0 else s for i, s in enumerate(sans))
    tags = draw(
        st.sampled_from(["", '[White "A"]\n[Black "B"]\n\n', '[FEN "bad"]\n\n', "[Unclosed\n"])
    )
    return f"{tags}{movetext} {draw(st.sampled_from(['*', '1-0', '']))}".encode()


def legal(moves: tuple[str, ...], fen: str | None) -> bool:
    board = chess.Board(fen) if fen else chess.Board()
    try:
        for san in moves:
            board.push_san(san)
    except ValueError:
        return False
    return True


GAME = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5"]


@st.composite
def next_move(draw: st.DrawFn, seq: int) -> bytes:
    """The board's next move, well formed, with one or two odd fields mixed in."""
    ply = min(seq, len(GAME))
    data: dict[str, Any] = {"seq": seq, "ply": ply, "san": GAME[ply - 1]}
    for k in draw(st.sets(st.sampled_from(sorted(event_fields)), min_size=1, max_size=2)):
        if k not in ("seq", "ply", "san"):
            data[k] = draw(event_fields[k])
    return json.dumps(data, default=str).encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_payload_sequence_is_handled_cleanly(data: st.DataObject) -> None:
    ing = MqttIngest("fz", gap_timeout=5.0, max_bytes=4096, max_games=3)
    now = 0.0
    seqs = dict.fromkeys(TOPICS, 0)
    # the moves each topic's last PGN payload passed on (they may end in an
    # illegal tail: a DGT signal); any other payload may pass them on again
    # unchanged (with new player details, say), never make new illegal ones
    pgn_moves: dict[str, tuple[str, ...]] = {}
    for _ in range(data.draw(st.integers(1, 15))):
        topic = data.draw(st.sampled_from(TOPICS))
        if data.draw(st.booleans()):
            seqs[topic] += 1
            payload = data.draw(next_move(seqs[topic]))
        else:
            payload = data.draw(payloads())
        now += data.draw(st.floats(0, 30))
        for res in (ing.handle(topic, payload, now), ing.expire_gaps(now)):
            for where, message in res.errors:
                assert not message.startswith("unreadable payload"), (topic, payload, message)
                assert where.split(" ")[0] in TOPICS and message
            for snap in res.snapshots:
                tags = dict(snap.tags)
                assert tags["MqttTopic"] in TOPICS and snap.source == "fz"
                # a PGN payload may pass a trailing illegal tail on (a DGT signal)
                if payload.lstrip().startswith((b"[", b"1", b"2", b"3", b"4", b"5")):
                    pgn_moves[topic] = snap.moves
                elif not legal(snap.moves, snap.initial_fen):
                    assert snap.moves == pgn_moves.get(topic), (payload, snap.moves)
                assert len(snap.clocks) == len(snap.moves)
    assert len(ing.boards) <= 3
    assert set(ing.stale_boards()) <= set(ing.boards)
