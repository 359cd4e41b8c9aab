"""SQLite persistence: restart mid-round without losing a ply or re-analysing one.

Design (documented in docs/service.md):

- ``boards``: the latest :class:`~livegain.core.snapshot.GameSnapshot` of every
  board (what the feed last said about it), keyed by board id, in the order the
  boards first appeared. Corrections simply replace the row: the latest
  snapshot *is* the game.
- ``evals``: every evaluation the engine produced, keyed by the engine's
  description (engine name + search limit, e.g. ``Stockfish 15.1 depth 12``)
  and the position's FEN. A value is never reused for another engine or limit.

On start the service re-applies the stored snapshots (in their original
order) to a fresh game registry; the positions that then need evaluation are
answered from ``evals`` first, so the engine only runs for positions it never
saw. Gains, histograms and perceived-rating traces are recomputed exactly from
those evaluations (the core is deterministic), so every trace is intact.

With a broadcast delay (docs/service.md, "Broadcast delay") two more tables
keep the :class:`~livegain.publish.delay_line.DelayLine`, so that a restart
releases nothing early: ``delay_held``, every item held (a board state, an
update, a removal, another message: its number, board, release time as
wall-clock seconds, kind and JSON body), and ``delay_released``, each board's
released state as of its last checkpoint (``through``: the number of the
last item folded into it; the rows up to it are deleted with each
checkpoint). Items released since the last checkpoint stay in
``delay_held``: on restart they are due at once and folded in again.

What viewers were shown besides the boards is kept too, as the very bytes
they got, so that a restart serves it again at once (with a delay or
without): ``shown_standings``, each event's latest ``standings`` message
(in the order the events were first shown), and ``shown_moments``, the
latest key moments (:data:`livegain.publish.recent_moments.KEPT` across all
boards, oldest first; a removed board's are forgotten). Both are written as
they go out to viewers: with a broadcast delay, when they are released, not
when they are held.

This store is separate from ENGINE's :class:`EvalCache` on purpose: the cache
is an optimisation that may be disabled, shared or cleared; the store is the
service's record of a broadcast and lives in the configured data directory.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import structlog

from livegain.core.errors import LivegainError
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.engine import eval_table

log = structlog.get_logger("livegain.store")

SCHEMA_VERSION = 2
"""2: the ``evals`` table is :mod:`livegain.engine.eval_table`'s (the cache's);
a store of schema 1 (W/D/L and PV as JSON text) is brought to it on open."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS boards (
    board_id TEXT PRIMARY KEY,
    ord INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS delay_held (
    n INTEGER PRIMARY KEY,
    board_id TEXT NOT NULL,
    due REAL NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS delay_held_board ON delay_held(board_id, n);
CREATE TABLE IF NOT EXISTS delay_released (
    board_id TEXT PRIMARY KEY,
    ord INTEGER NOT NULL,
    through INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS shown_standings (
    event TEXT PRIMARY KEY,
    ord INTEGER NOT NULL,
    message BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS shown_moments (
    n INTEGER PRIMARY KEY,
    board_id TEXT NOT NULL,
    message BLOB NOT NULL
);
"""


class StoreError(LivegainError, RuntimeError):
    """The store file is unusable (names the file and the problem)."""


class NotAStore(StoreError):
    """The file is not a livegain store this version reads (another SQLite
    file, a damaged one, another schema): ``--fresh-store`` sets it aside."""


class StoreUnavailable(StoreError):
    """The store cannot be written or read *now* (disk full, I/O error,
    permissions, locked by another process): nothing is wrong with the file,
    so nothing may rename it; the service can start once the cause is gone."""


DAMAGED_HINT = "move it aside or start with --fresh-store"
UNAVAILABLE_HINT = "the store is left as it is; start again once this is fixed"

# SQLite's primary result codes that say "not now" rather than "not a store"
_NOT_NOW = {
    3: "permission denied",  # SQLITE_PERM
    5: "the database is locked by another process",  # SQLITE_BUSY
    6: "the database is locked",  # SQLITE_LOCKED
    7: "out of memory",  # SQLITE_NOMEM
    8: "the file or its directory is read-only",  # SQLITE_READONLY
    10: "disk I/O error",  # SQLITE_IOERR
    13: "the disk is full",  # SQLITE_FULL
    14: "cannot open the file",  # SQLITE_CANTOPEN
    23: "not authorized",  # SQLITE_AUTH
}
FULL_BELOW = 1 << 20
"""Free bytes under which a disk counts as full (SQLite needs a few pages for
its WAL and shared-memory files even to read)."""


def disk_full(path: Path) -> bool:
    """Is the file system holding ``path`` (or its nearest existing parent) full?"""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        st = os.statvfs(probe)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < FULL_BELOW


def unavailable_reason(path: Path, exc: BaseException) -> str | None:
    """Why ``exc`` (met opening or using the store at ``path``) means "cannot
    write or read now", in words; None when it means "not a livegain store"."""
    if isinstance(exc, sqlite3.DatabaseError):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is None:
            return None
        reason = _NOT_NOW.get(int(code) & 0xFF)
        if reason is None:
            return None
    elif isinstance(exc, OSError):
        if exc.errno == errno.ENOSPC:
            reason = "the disk is full"
        elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            reason = "permission denied"
        else:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
    else:
        return None
    if reason != "the disk is full" and disk_full(path):
        reason = f"the disk is full ({reason})"
    return reason


def set_aside(path: Path | str) -> Path:
    """Rename a damaged store (and its ``-wal``/``-shm`` files) beside itself,
    as ``NAME.damaged-<UTC time>``; return the new name of the store file."""
    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    path.rename(target)
    return target


def snapshot_to_json(snap: GameSnapshot) -> str:
    return json.dumps(asdict(snap), separators=(",", ":"))


def snapshot_from_json(text: str) -> GameSnapshot:
    d: dict[str, Any] = json.loads(text)
    return GameSnapshot(
        source=d["source"],
        white=PlayerInfo(**d["white"]),
        black=PlayerInfo(**d["black"]),
        moves=tuple(d.get("moves", ())),
        clocks=tuple(d.get("clocks", ())),
        result=d.get("result", "*"),
        game_id=d.get("game_id"),
        event=d.get("event"),
        round=d.get("round"),
        board=d.get("board"),
        initial_fen=d.get("initial_fen"),
        tags=tuple((str(k), str(v)) for k, v in d.get("tags", ())),
        clock_white=d.get("clock_white"),
        clock_black=d.get("clock_black"),
        after_illegal=tuple(d.get("after_illegal", ())),
        fens=tuple(d.get("fens", ())),
        group=d.get("group"),
        priority=int(d.get("priority", 0)),
        takeover_after=d.get("takeover_after"),
        # received_at is a time on the last run's monotonic clock: meaningless now
    )


class Store:
    """A small synchronous SQLite store (WAL; one row per change, well under 1 ms)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if disk_full(self.path):
            # Refused before SQLite touches anything: on a full disk it may
            # open (its WAL files left from before) or fail half-way ("disk I/O
            # error"), and the service could record nothing of the round.
            raise StoreUnavailable(
                f"{self.path}: cannot open the store: the disk is full (under "
                f"{FULL_BELOW // 1024} KiB free); {UNAVAILABLE_HINT}"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            why = unavailable_reason(self.path, exc) or str(exc)
            detail = "" if str(exc) in why else f" ({exc})"
            raise StoreUnavailable(
                f"{self.path}: cannot open the store: {why}{detail}; {UNAVAILABLE_HINT}"
            ) from exc
        try:
            tables = {
                str(r[0])
                for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if tables and "meta" not in tables:
                raise NotAStore(
                    f"{self.path}: not a livegain store (an SQLite file with tables "
                    f"{', '.join(sorted(tables))}); {DAMAGED_HINT}"
                )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            row = self._db.execute(
                "SELECT value FROM meta WHERE key='schema'" if "meta" in tables else "SELECT NULL"
            ).fetchone()
            if row is not None and str(row[0]) == "1":
                _evals_from_schema_1(self._db)
                row = (str(SCHEMA_VERSION),)
            self._db.executescript(_SCHEMA)
            self._db.execute(eval_table.SCHEMA)
            if row is None or row[0] is None:
                self._db.execute(
                    "INSERT INTO meta(key, value) VALUES('schema', ?)", (str(SCHEMA_VERSION),)
                )
            elif str(row[0]) != str(SCHEMA_VERSION):
                raise NotAStore(
                    f"{self.path}: store schema {row[0]}, this version reads {SCHEMA_VERSION}; "
                    f"{DAMAGED_HINT}"
                )
            self._ord = self._db.execute("SELECT COALESCE(MAX(ord), 0) FROM boards").fetchone()[0]
            # Reading every row's page finds a damaged file now, not mid-round.
            check = self._db.execute("PRAGMA quick_check(1)").fetchone()
            if check is None or check[0] != "ok":
                raise NotAStore(
                    f"{self.path}: not a livegain store (damaged: "
                    f"{check[0] if check else 'no answer'}); {DAMAGED_HINT}"
                )
        except (sqlite3.DatabaseError, OSError) as exc:
            self._db.close()
            reason = unavailable_reason(self.path, exc)
            if reason is not None:
                detail = "" if str(exc) in reason else f" ({exc})"
                raise StoreUnavailable(
                    f"{self.path}: cannot read or write the store now: {reason}{detail}; "
                    f"{UNAVAILABLE_HINT}"
                ) from exc
            raise NotAStore(f"{self.path}: not a livegain store ({exc}); {DAMAGED_HINT}") from exc
        except StoreError:
            self._db.close()
            raise
        self.eval_reads = 0
        self.eval_hits = 0
        self.bad_rows = 0
        """Rows that could not be read (logged, skipped)."""

    def close(self) -> None:
        self._db.close()

    # -------------------------------------------------------------- boards

    def save_snapshot(self, board_id: str, snap: GameSnapshot) -> None:
        self._ord += 1
        self._db.execute(
            "INSERT INTO boards(board_id, ord, snapshot, updated) VALUES(?, ?, ?, ?) "
            "ON CONFLICT(board_id) DO UPDATE SET snapshot=excluded.snapshot, "
            "updated=excluded.updated",
            (board_id, self._ord, snapshot_to_json(snap), time.time()),
        )

    def delete_board(self, board_id: str) -> None:
        self._db.execute("DELETE FROM boards WHERE board_id=?", (board_id,))

    def load_snapshots(self) -> list[tuple[str, GameSnapshot]]:
        """Every stored board's latest snapshot, in first-seen order."""
        rows = self._db.execute("SELECT board_id, snapshot FROM boards ORDER BY ord").fetchall()
        out = []
        for b, s in rows:
            try:
                out.append((str(b), snapshot_from_json(s)))
            except (ValueError, TypeError, KeyError) as exc:  # one bad row loses one board
                self.bad_rows += 1
                log.error("store_bad_row", store=str(self.path), board_id=str(b), error=repr(exc))
        return out

    # --------------------------------------------------------------- delay

    def save_held(self, n: int, board_id: str, due: float, kind: str, body: str) -> None:
        """One item entering the delay line."""
        self._db.execute(
            "INSERT OR REPLACE INTO delay_held(n, board_id, due, kind, body) VALUES(?, ?, ?, ?, ?)",
            (n, board_id, due, kind, body),
        )

    def save_released(self, board_id: str, state: str | None, through: int) -> None:
        """A checkpoint: the board's released state (JSON; None: the board is
        gone) with every item up to ``through`` folded in; those items are
        deleted, in the same transaction."""
        db = self._db
        db.execute("BEGIN")
        try:
            if state is None:
                db.execute("DELETE FROM delay_released WHERE board_id=?", (board_id,))
            else:
                db.execute(
                    "INSERT INTO delay_released(board_id, ord, through, state) "
                    "VALUES(?, ?, ?, ?) ON CONFLICT(board_id) DO UPDATE SET "
                    "through=excluded.through, state=excluded.state",
                    (board_id, through, through, state),
                )
            db.execute("DELETE FROM delay_held WHERE board_id=? AND n<=?", (board_id, through))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def forget_delayed(self, board_id: str) -> None:
        """Drop a board from the delay line's tables (removed by an operator)."""
        self._db.execute("DELETE FROM delay_released WHERE board_id=?", (board_id,))
        self._db.execute("DELETE FROM delay_held WHERE board_id=?", (board_id,))

    def load_delayed(
        self,
    ) -> tuple[list[tuple[str, int, str]], list[tuple[int, str, float, str, str]]]:
        """The stored delay line: released states ``(board_id, through, JSON)``
        in the order the boards were first released, and items held
        ``(n, board_id, due, kind, body)`` in order."""
        released = [
            (str(b), int(t), str(st))
            for b, t, st in self._db.execute(
                "SELECT board_id, through, state FROM delay_released ORDER BY ord"
            )
        ]
        held = [
            (int(n), str(b), float(d), str(k), str(body))
            for n, b, d, k, body in self._db.execute(
                "SELECT n, board_id, due, kind, body FROM delay_held ORDER BY n"
            )
        ]
        return released, held

    def clear_delayed(self) -> None:
        """Empty the delay line's tables (a service without a delay, nothing held)."""
        self._db.execute("DELETE FROM delay_released")
        self._db.execute("DELETE FROM delay_held")

    # --------------------------------------------------------------- shown

    def save_shown_standings(self, event: str, message: bytes) -> None:
        """The event's ``standings`` message viewers now have (replaces the last)."""
        self._db.execute(
            "INSERT INTO shown_standings(event, ord, message) VALUES(?, "
            "(SELECT COALESCE(MAX(ord), 0) + 1 FROM shown_standings), ?) "
            "ON CONFLICT(event) DO UPDATE SET message=excluded.message",
            (event, message),
        )

    def save_shown_moment(self, board_id: str, message: bytes, kept: int) -> None:
        """A ``moment`` message viewers got: kept among the latest ``kept``
        (one already kept, the same bytes, is not kept twice)."""
        db = self._db
        db.execute("BEGIN")
        try:
            db.execute(
                "INSERT INTO shown_moments(board_id, message) SELECT ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM shown_moments WHERE message=?)",
                (board_id, message, message),
            )
            db.execute(
                "DELETE FROM shown_moments WHERE n NOT IN "
                "(SELECT n FROM shown_moments ORDER BY n DESC LIMIT ?)",
                (kept,),
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def forget_shown_moments(self, board_id: str) -> None:
        """The board left the viewers' view: its moments are not kept."""
        self._db.execute("DELETE FROM shown_moments WHERE board_id=?", (board_id,))

    def load_shown(self) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
        """What viewers were shown besides the boards: ``(event, message)``
        of each event's latest standings, in the order the events were first
        shown, and ``(board_id, message)`` of the kept moments, oldest first."""
        standings = [
            (str(e), _blob(m))
            for e, m in self._db.execute("SELECT event, message FROM shown_standings ORDER BY ord")
        ]
        moments = [
            (str(b), _blob(m))
            for b, m in self._db.execute("SELECT board_id, message FROM shown_moments ORDER BY n")
        ]
        return standings, moments

    # --------------------------------------------------------------- evals

    def save_eval(self, engine: str, fen: str, ev: Evaluation) -> None:
        self._db.execute(eval_table.INSERT, eval_table.row_of(engine, fen, ev, time.time()))

    def get_eval(self, engine: str, fen: str) -> Evaluation | None:
        self.eval_reads += 1
        row = self._db.execute(eval_table.SELECT, (engine, fen)).fetchone()
        if row is None:
            return None
        try:
            ev = eval_table.evaluation_of(row)
        except (ValueError, TypeError) as exc:  # an unreadable row is a miss: searched again
            self.bad_rows += 1
            log.error("store_bad_row", store=str(self.path), fen=fen, error=repr(exc))
            return None
        self.eval_hits += 1
        return ev

    def count_evals(self, engine: str | None = None) -> int:
        if engine is None:
            return int(self._db.execute("SELECT COUNT(*) FROM evals").fetchone()[0])
        return int(
            self._db.execute("SELECT COUNT(*) FROM evals WHERE engine=?", (engine,)).fetchone()[0]
        )


def _blob(value: object) -> bytes:
    """A message column read back as bytes (written as a BLOB; text is encoded)."""
    return value if isinstance(value, bytes) else str(value).encode()


def _evals_from_schema_1(db: sqlite3.Connection) -> None:
    """A store of schema 1 kept W/D/L and PV as JSON text: its evaluations are
    rewritten into :mod:`livegain.engine.eval_table`'s layout, in one
    transaction, and the store marked schema 2. A row that cannot be read is
    dropped (its position is searched again)."""
    rows = db.execute(
        "SELECT engine, fen, cp, mate, wdl, depth, nodes, best, pv, created FROM evals"
    ).fetchall()
    kept = []
    for engine, fen, cp, mate, wdl, depth, nodes, best, pv, created in rows:
        try:
            w = None if wdl is None else tuple(int(x) for x in json.loads(wdl))
            moves = " ".join(str(m) for m in json.loads(pv))
            kept.append(
                (
                    engine,
                    fen,
                    cp,
                    mate,
                    *(w or (None, None, None)),
                    depth,
                    nodes,
                    best,
                    moves,
                    created,
                )
            )
        except (ValueError, TypeError):
            continue
    db.execute("BEGIN")
    try:
        db.execute("DROP TABLE evals")
        db.execute(eval_table.SCHEMA)
        db.executemany(eval_table.INSERT, kept)
        db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
