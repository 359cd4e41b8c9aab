"""A local PGN file, or a directory of ``*.pgn`` files, watched by polling.

What an arbiter's laptop produces: DGT LiveChess or a transmission program
rewrites ``games.pgn`` (or one file per board) every few seconds. Each poll
compares every file's (mtime, size) with what was last read; a changed file
is read and its size and mtime checked again: if they moved during the read
the file was being rewritten, so the content is dropped and read at the next
poll. A file whose text ends mid-move or mid-comment is parsed for its legal
prefix, but its truncation is reported only if the file stays that way for
two polls in a row (a writer caught half-way is not an error). A file that
disappears emits nothing (its games are not deleted).

Limits: a file larger than ``max_bytes`` is not read (reported once per
version of the file); past ``max_games`` games in one file the rest are
refused; a game longer than ``max_plies`` is refused. Parsing runs in a
thread, and games are handed on with a turn of the event loop between them.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path

from livegain.feeds.base import FeedSink, FileFeedConfig, source_sink
from livegain.feeds.emitter import Emitter
from livegain.feeds.pgn import MAX_PLIES, ParsedGame, parse_pgn


@dataclass
class _FileState:
    stamp: tuple[int, int] | None = None  # (mtime_ns, size) last parsed
    truncated_stamp: tuple[int, int] | None = None  # seen once with truncated content
    cache: dict[tuple[int, str], ParsedGame] = field(default_factory=dict)


class FileFeed:
    """Polls a PGN file or directory and emits a snapshot for each game that changed."""

    def __init__(self, cfg: FileFeedConfig, *, max_plies: int = MAX_PLIES) -> None:
        self.cfg = cfg
        self.max_plies = max_plies
        self.path = Path(cfg.path)
        self.name = cfg.name or f"file:{self.path.name or cfg.path}"
        self.emitter = Emitter(self.name)
        self._files: dict[Path, _FileState] = {}
        self.reads = 0
        self.retries = 0
        self._missing_reported = False

    async def run(self, sink: FeedSink) -> None:
        sink = source_sink(sink, self.cfg)
        while True:
            try:
                await self.poll_once(sink)
            except Exception as exc:  # a bug must not end the feed: report it, go on
                self.emitter.error(
                    sink, str(self.path), f"internal error: {type(exc).__name__}: {exc}"
                )
            await asyncio.sleep(self.cfg.interval)

    async def poll_once(self, sink: FeedSink) -> None:
        """Check every file once (reads run in a thread: a slow disk never blocks the loop)."""
        files = await asyncio.to_thread(self._list)
        if files is None:
            if not self._missing_reported:
                self._missing_reported = True
                self.emitter.error(sink, str(self.path), "no such file or directory (waiting)")
            return
        self._missing_reported = False
        for path in files:
            st = self._files.setdefault(path, _FileState())
            read = await asyncio.to_thread(_read_stable, path, st.stamp, self.cfg.max_bytes)
            if read is None:
                continue
            if isinstance(read, _Unstable):
                self.retries += 1
                continue
            if isinstance(read, _TooLarge):
                st.stamp = read.stamp  # reported once; read again when the file changes
                self.emitter.error(
                    sink,
                    str(path),
                    f"file of {read.stamp[1]} bytes is larger than the limit of "
                    f"{self.cfg.max_bytes} (max_bytes): not read",
                )
                continue
            if isinstance(read, OSError):
                self.emitter.error(sink, str(path), f"cannot read: {read}")
                continue
            stamp, text = read
            self.reads += 1
            games = await asyncio.to_thread(
                parse_pgn,
                text,
                self.name,
                st.cache,
                max_plies=self.max_plies,
                max_games=self.cfg.max_games,
            )
            truncated = any(g.truncated for g in games)
            prefix = f"{path.name} " if self.path.is_dir() else ""
            if truncated and st.truncated_stamp != stamp:
                # maybe caught mid-write: use the legal prefix, report only if it stays so
                st.truncated_stamp = stamp
                await self.emitter.offer_async(
                    games, sink, fallback=str(path), where_prefix=prefix, report_truncated=False
                )
                continue
            st.stamp = stamp
            st.truncated_stamp = None
            await self.emitter.offer_async(games, sink, fallback=str(path), where_prefix=prefix)

    def _list(self) -> list[Path] | None:
        try:
            if self.path.is_dir():
                return sorted(p for p in self.path.iterdir() if p.suffix.lower() == ".pgn")
            if self.path.exists():
                return [self.path]
        except OSError:
            return None
        return None


class _Unstable:
    """The file changed while it was being read."""


@dataclass(frozen=True)
class _TooLarge:
    """The file is larger than the limit: not read."""

    stamp: tuple[int, int]


def _read_stable(
    path: Path, last: tuple[int, int] | None, max_bytes: int | None = None
) -> tuple[tuple[int, int], str] | _Unstable | _TooLarge | OSError | None:
    """Read ``path`` if its (mtime, size) differs from ``last``; None when unchanged."""
    try:
        before = os.stat(path)
        stamp = (before.st_mtime_ns, before.st_size)
        if stamp == last:
            return None
        if max_bytes is not None and before.st_size > max_bytes:
            return _TooLarge(stamp)
        data = path.read_bytes()
        after = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc
    if (after.st_mtime_ns, after.st_size) != stamp or len(data) != stamp[1]:
        return _Unstable()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return stamp, text
