"""The SQLite store: snapshots and evaluations survive a reopen."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from livegain.app.store import Store, StoreError, snapshot_from_json, snapshot_to_json
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo


def snap(moves: tuple[str, ...], **kw: object) -> GameSnapshot:
    return GameSnapshot(
        source="test",
        white=PlayerInfo("A <b>", title="GM", rating=2700, fide_id="1"),
        black=PlayerInfo("B", federation="NOR"),
        moves=moves,
        clocks=tuple(range(len(moves))),
        game_id="g1",
        round="1.1",
        board=1,
        tags=(("Event", "X"), ("Site", "Y")),
        **kw,  # type: ignore[arg-type]
    )


def test_snapshot_json_round_trip() -> None:
    s = snap(("e4", "e5"), result="1-0", clock_white=10, initial_fen=None)
    assert snapshot_from_json(snapshot_to_json(s)) == s


def test_snapshot_json_round_trip_keeps_sources_and_an_illegal_move() -> None:
    """A restart must not lose a board's event group (its mirror would make a
    second board) nor the moves played on from an illegal one."""
    s = snap(
        ("e4", "e5"),
        after_illegal=("Ke3", "Nf6"),
        fens=(None, None, "rnbqkbnr/pppp1ppp/8/4p3/4P3/4K3/PPPP1PPP/RNBQ1BNR b kq - 1 2", None),
        group="tata",
        priority=1,
        takeover_after=12.5,
    )
    assert snapshot_from_json(snapshot_to_json(s)) == s


def test_store_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "d" / "store.sqlite3"
    st = Store(path)
    st.save_snapshot("b2", snap(("d4",)))
    st.save_snapshot("b1", snap(("e4",)))
    st.save_snapshot("b2", snap(("d4", "d5")))  # replaces, keeps first-seen order
    ev = Evaluation(cp=31, wdl=(100, 850, 50), depth=8, nodes=1234, best="e5", pv=("e5",))
    st.save_eval("SF depth 8", "fen1", ev)
    st.save_eval("SF depth 8", "fen2", Evaluation(cp=3900, mate=3, depth=8))
    st.close()
    st = Store(path)
    boards = st.load_snapshots()
    assert [b for b, _ in boards] == ["b2", "b1"]
    assert boards[0][1].moves == ("d4", "d5")
    assert st.get_eval("SF depth 8", "fen1") == ev
    assert st.get_eval("SF depth 8", "fen2") == Evaluation(cp=3900, mate=3, depth=8)
    assert st.get_eval("SF depth 9", "fen1") is None  # never reused for another limit
    assert st.count_evals() == 2
    assert (st.eval_reads, st.eval_hits) == (3, 2)
    st.delete_board("b2")
    assert [b for b, _ in st.load_snapshots()] == ["b1"]
    st.close()


def test_what_viewers_were_shown_survives_reopen(tmp_path: Path) -> None:
    """Each event's latest standings (the same bytes, in the order the events
    were first shown) and the latest moments (the newest ``kept``, oldest
    first, none twice, a removed board's forgotten)."""
    path = tmp_path / "store.sqlite3"
    st = Store(path)
    assert st.load_shown() == ([], [])
    st.save_shown_standings("Open B", b'{"version":1}')
    st.save_shown_standings("Open A", b'{"version":1}')
    st.save_shown_standings("Open B", b'{"version":2}')  # replaces, keeps its place
    for k in range(5):
        st.save_shown_moment(f"b{k % 2}", f'{{"n":{k}}}'.encode(), kept=3)
    st.save_shown_moment("b0", b'{"n":4}', kept=3)  # kept already: not twice
    st.close()
    st = Store(path)
    standings, moments = st.load_shown()
    assert standings == [("Open B", b'{"version":2}'), ("Open A", b'{"version":1}')]
    assert moments == [("b0", b'{"n":2}'), ("b1", b'{"n":3}'), ("b0", b'{"n":4}')]
    st.forget_shown_moments("b0")
    assert st.load_shown()[1] == [("b1", b'{"n":3}')]
    st.close()


def test_a_store_from_before_gets_the_shown_tables(tmp_path: Path) -> None:
    """A store written before the shown tables existed opens, with its boards."""
    path = tmp_path / "store.sqlite3"
    st = Store(path)
    st.save_snapshot("b1", snap(("e4",)))
    st.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE shown_standings")
    db.execute("DROP TABLE shown_moments")
    db.commit()
    db.close()
    st = Store(path)
    assert [b for b, _ in st.load_snapshots()] == ["b1"]
    assert st.load_shown() == ([], [])
    st.save_shown_standings("Open", b"{}")
    assert st.load_shown()[0] == [("Open", b"{}")]
    st.close()


def test_corrupt_store_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"bad\.sqlite3"):
        Store(bad)


def test_schema_version_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value='99' WHERE key='schema'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="schema 99"):
        Store(path)


def test_a_store_of_schema_1_keeps_its_evaluations(tmp_path: Path) -> None:
    """A store written before the evaluation table was the cache's (W/D/L and
    PV as JSON text) opens with every readable evaluation, in the cache's layout."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema', '1');
        CREATE TABLE boards (board_id TEXT PRIMARY KEY, ord INTEGER NOT NULL,
                             snapshot TEXT NOT NULL, updated REAL NOT NULL);
        CREATE TABLE evals (engine TEXT NOT NULL, fen TEXT NOT NULL, cp INTEGER NOT NULL,
                            mate INTEGER, wdl TEXT, depth INTEGER NOT NULL,
                            nodes INTEGER NOT NULL, best TEXT, pv TEXT NOT NULL,
                            created REAL NOT NULL, PRIMARY KEY (engine, fen));
        INSERT INTO evals VALUES ('sf', 'fen-a', 31, NULL, '[412, 500, 88]', 10, 5000,
                                  'e2e4', '["e2e4", "e7e5"]', 1.0);
        INSERT INTO evals VALUES ('sf', 'fen-b', 9999, 3, NULL, 10, 7, 'h5f7', '["h5f7"]', 1.0);
        INSERT INTO evals VALUES ('sf', 'fen-c', 0, NULL, 'not json', 10, 7, NULL, '[]', 1.0);
        """
    )
    db.commit()
    db.close()
    store = Store(path)
    try:
        assert store.get_eval("sf", "fen-a") == Evaluation(
            cp=31, wdl=(412, 500, 88), depth=10, nodes=5000, best="e2e4", pv=("e2e4", "e7e5")
        )
        assert store.get_eval("sf", "fen-b") == Evaluation(
            cp=9999, mate=3, depth=10, nodes=7, best="h5f7", pv=("h5f7",)
        )
        assert store.get_eval("sf", "fen-c") is None  # unreadable: searched again
        assert store.count_evals() == 2
    finally:
        store.close()
    again = Store(path)  # now schema 2: opens as it is
    try:
        assert again.count_evals("sf") == 2
    finally:
        again.close()
    check = sqlite3.connect(path)
    assert check.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("2",)
    check.close()
