"""A persistent evaluation cache (SQLite, standard library).

One row per (engine key, position). The *engine key* names everything that can
change a fixed-limit result: the engine's ``id name`` (name and version), the
search limit, the Hash size, the thread count and whether the search is
deterministic (``ucinewgame`` before each position). The *position* is the FEN
with both move counters (see docs/engine.md: Stockfish 15.1 scales its
evaluation with the halfmove clock, and its win/draw/loss model depends on the
game ply, so dropping either counter would return another position's numbers).

The database runs in WAL mode with ``synchronous=NORMAL``: readers never block
the writer and a commit does not wait for the disk. Every call is tiny (one
indexed row); the ``a*`` coroutines run them on one dedicated thread so an
asyncio loop is never stalled by a slow disk.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from livegain.core.errors import LivegainError
from livegain.core.evaluation import Evaluation
from livegain.engine import eval_table


class CacheError(LivegainError, ValueError):
    """The cache file cannot be opened or read (names the file and what is wrong)."""


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    writes: int
    rows: int


class EvalCache:
    """Evaluations keyed by (engine key, FEN); survives restarts.

    ``path`` may be ``":memory:"`` for a throw-away cache. Safe to use from
    one asyncio loop (the ``a*`` coroutines) and from plain threads (the sync
    methods); a lock serialises access to the one connection.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            parent = Path(self.path).expanduser().resolve().parent
            if not parent.is_dir():
                raise CacheError(f"{self.path}: directory {parent} does not exist")
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: cannot open the evaluation cache ({exc})") from exc
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.execute(eval_table.SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise CacheError(
                f"{self.path}: not a usable evaluation cache ({exc}); it only saves engine time:"
                " delete it or name another file"
            ) from exc
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._closed = False

    # -- sync API ---------------------------------------------------------

    def get(self, engine: str, fen: str) -> Evaluation | None:
        """The cached evaluation of ``fen`` under ``engine``, or None (counted)."""
        return self.get_many(engine, [fen]).get(fen)

    def get_many(self, engine: str, fens: Sequence[str]) -> dict[str, Evaluation]:
        """The cached evaluations of those of ``fens`` the cache has (counted)."""
        found: dict[str, Evaluation] = {}
        with self._lock:
            self._check_open()
            for fen in fens:
                row = self._db.execute(eval_table.SELECT, (engine, fen)).fetchone()
                if row is None:
                    self.misses += 1
                else:
                    self.hits += 1
                    found[fen] = eval_table.evaluation_of(row)
        return found

    def put(self, engine: str, fen: str, ev: Evaluation) -> None:
        """Store (or replace) the evaluation of ``fen`` under ``engine``."""
        self.put_many(engine, [(fen, ev)])

    def put_many(self, engine: str, items: Sequence[tuple[str, Evaluation]]) -> None:
        """Store (or replace) evaluations under ``engine``, in one transaction."""
        now = time.time()
        rows = [eval_table.row_of(engine, fen, ev, now) for fen, ev in items]
        with self._lock:
            self._check_open()
            self._db.execute("BEGIN")
            try:
                self._db.executemany(eval_table.INSERT, rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self.writes += len(rows)

    def __len__(self) -> int:
        with self._lock:
            self._check_open()
            (n,) = self._db.execute("SELECT COUNT(*) FROM evals").fetchone()
        return int(n)

    def stats(self) -> CacheStats:
        return CacheStats(self.hits, self.misses, self.writes, len(self))

    def close(self) -> None:
        """Close the database (idempotent)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    def __enter__(self) -> EvalCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- async API (one dedicated thread) ------------------------------------

    async def aget(self, engine: str, fen: str) -> Evaluation | None:
        return await asyncio.get_running_loop().run_in_executor(self._pool(), self.get, engine, fen)

    async def aput(self, engine: str, fen: str, ev: Evaluation) -> None:
        await asyncio.get_running_loop().run_in_executor(self._pool(), self.put, engine, fen, ev)

    async def aget_many(self, engine: str, fens: Sequence[str]) -> dict[str, Evaluation]:
        return await asyncio.get_running_loop().run_in_executor(
            self._pool(), self.get_many, engine, fens
        )

    def put_many_soon(
        self, engine: str, items: Sequence[tuple[str, Evaluation]]
    ) -> asyncio.Future[None]:
        """:meth:`put_many` on the cache's thread, queued as :meth:`put_soon` is."""
        return asyncio.get_running_loop().run_in_executor(
            self._pool(), self.put_many, engine, items
        )

    def put_soon(self, engine: str, fen: str, ev: Evaluation) -> asyncio.Future[None]:
        """Queue the write on the cache's thread and return at once (from a
        running event loop). Calls run on that one thread in order, so a later
        ``aget`` of the same position sees this row. The future carries the
        write's outcome."""
        return asyncio.get_running_loop().run_in_executor(self._pool(), self.put, engine, fen, ev)

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcache")
        return self._executor

    def _check_open(self) -> None:
        if self._closed:
            raise CacheError(f"{self.path}: cache is closed")
