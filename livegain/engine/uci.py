"""A minimal UCI client for fixed-limit searches: a pure reader, a thin asyncio adapter.

The pool needs five things from a search: the final score, WDL, depth, node
count and principal variation (its first move is the best move). This module
gets exactly those and nothing else.

Why not python-chess's engine protocol (``chess.engine.UciProtocol``), which the
pool used before: it parses every ``info`` line of every depth, replaying each
PV on a board to check its moves. Measured on this project's 2-core machine
(150 Tata Steel positions, depth 10, one process, CPU of the driving process
per position, searches only, load average 0.53; docs/engine.md; with process
start included ``bench/engine_throughput.py --drivers --positions 150
--depths 10``, docs/benchmarks.md): a minimal loop over pipes 0.25 ms; python-chess
``analyse`` 1.8 ms; ``analyse(..., info=INFO_SCORE | INFO_BASIC)`` (no PV)
1.1 ms; ``info=INFO_NONE`` still 0.7 ms, the cost of its command machinery
alone, before the pool does any work of its own. Its public API cannot reach
the pool's budget of 1 ms per position, so the pool speaks UCI itself:

* :class:`SearchReader` and :func:`parse_option` are pure (lines in, values
  out; no I/O): a search keeps only the last ``info`` line that carries a score
  and parses that one line when ``bestmove`` arrives. The PV is kept as the
  engine's UCI strings, not replayed on a board.
* :class:`UciProcess` is the adapter to asyncio: one subprocess, one future
  per command. The engine's output is read by one thread per process with
  blocking reads (as the minimal pipe loop does) and fed to the reader in that
  thread, which also sends a search's ``position``/``go`` as soon as
  ``readyok`` follows ``ucinewgame``; so a search wakes the event loop once,
  at ``bestmove``, instead of once per line. (The same adapter with every line
  going through the event loop on asyncio's subprocess transport used more
  driver CPU in each of six alternating runs at depth 12: 1.0-1.8 against
  0.9-1.4 ms per position on the shared machine.) The process dying (end of
  its output, or its exit) fails the pending command with
  :class:`EngineTerminatedError` at once.

What it sends is what python-chess sent for the same search, so results are
identical to the node (tests/engine/test_pool.py compares them with
``chess.engine`` ``analyse`` on every run): the options with
``UCI_AnalyseMode=true`` when the engine has it, then per search (``ucinewgame``,
``isready``, wait for ``readyok`` when a new game starts), ``position startpos``
or ``position fen FEN``, ``go depth D nodes N``. Option values are checked with
python-chess's public :class:`chess.engine.Option`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import chess
import chess.engine

from livegain.core.errors import LivegainError
from livegain.engine.launch import spawn

T = TypeVar("T")

#: Options the pool sets per search or must not change (python-chess's
#: ``MANAGED_OPTIONS`` plus MultiPV, which would reorder the info lines).
MANAGED_OPTIONS = frozenset({"uci_chess960", "uci_variant", "multipv", "ponder"})


#: Engines that take a search's commands while they run another and start it
#: when that one ends (Stockfish reads its commands in order): a search list
#: keeps the next ones queued in them (:meth:`UciProcess.search_list`).
QUEUE_AHEAD_ENGINES = ("Stockfish",)
#: With searches queued, the reader thread reads the engine's output every
#: POLL_FRACTION of a search (the median of the last POLL_HISTORY), between
#: POLL_MIN and POLL_MAX seconds, instead of at each line.
POLL_FRACTION = 0.25
POLL_HISTORY = 8
POLL_MIN = 0.001
POLL_MAX = 0.05


class UciError(LivegainError):
    """The engine broke the protocol or refused an option."""


class EngineTerminatedError(UciError):
    """The engine process ended (or closed its output) while a command waited."""


# -- the pure part ---------------------------------------------------------------


@dataclass(frozen=True)
class SearchResult:
    """The outcome of one search, from the side to move's point of view.

    ``kind`` is ``"cp"`` or ``"mate"``; ``score`` its value (mate in N moves,
    negative when the side to move is mated). ``wdl`` is (win, draw, loss) per
    mille of the side to move; ``pv`` the engine's UCI strings; ``bestmove``
    None for ``bestmove (none)``.
    """

    kind: str
    score: int
    wdl: tuple[int, int, int] | None
    depth: int
    nodes: int
    pv: tuple[str, ...]
    bestmove: str | None


class SearchReader:
    """Reads the lines of one search; :meth:`feed` returns the result at ``bestmove``.

    Only the last ``info`` line with a score is parsed (python-chess merges
    every line into one dict; for a UCI engine's score lines, which carry all
    their fields, the last one gives the same values). A later ``info depth``
    line without a score (a new iteration's ``currmove``) still updates the
    depth, as the merge did.
    """

    __slots__ = ("_depth_after", "_score_line")

    def __init__(self) -> None:
        self._score_line: str | None = None
        self._depth_after: int | None = None

    def feed(self, line: str) -> SearchResult | None:
        if line.startswith("info "):
            if " score " in line and not line.startswith("info string"):
                self._score_line = line
                self._depth_after = None
            elif line.startswith("info depth "):
                with contextlib.suppress(ValueError, IndexError):
                    self._depth_after = int(line.split(None, 3)[2])
            return None
        if line.startswith("bestmove"):
            return self._result(line)
        return None

    def _result(self, bestmove_line: str) -> SearchResult:
        words = bestmove_line.split()
        best = words[1] if len(words) > 1 and words[1] not in ("(none)", "0000") else None
        if self._score_line is None:
            raise UciError(f"engine sent {bestmove_line!r} without any score")
        kind, score, wdl, depth, nodes, pv = parse_score_line(self._score_line)
        if self._depth_after is not None:
            depth = self._depth_after
        return SearchResult(kind, score, wdl, depth, nodes, pv, best)


def parse_score_line(
    line: str,
) -> tuple[str, int, tuple[int, int, int] | None, int, int, tuple[str, ...]]:
    """(kind, score, wdl, depth, nodes, pv) of one ``info ... score ...`` line."""
    t = line.split()
    n = len(t)
    kind, score = "", 0
    wdl: tuple[int, int, int] | None = None
    depth = nodes = 0
    pv: tuple[str, ...] = ()
    i = 1
    try:
        while i < n:
            key = t[i]
            if key == "score":
                kind, score = t[i + 1], int(t[i + 2])
                i += 3
            elif key == "depth":
                depth = int(t[i + 1])
                i += 2
            elif key == "nodes":
                nodes = int(t[i + 1])
                i += 2
            elif key == "wdl":
                wdl = (int(t[i + 1]), int(t[i + 2]), int(t[i + 3]))
                i += 4
            elif key == "pv":
                pv = tuple(t[i + 1 :])
                break
            elif key == "string":
                break
            else:  # seldepth, multipv, nps, hashfull, tbhits, time and their values
                i += 1
    except (ValueError, IndexError):
        raise UciError(f"cannot read the engine's info line {line!r}") from None
    if kind not in ("cp", "mate"):
        raise UciError(f"unknown score kind in the engine's info line {line!r}")
    return kind, score, wdl, depth, nodes, pv


def parse_option(line: str) -> chess.engine.Option | None:
    """An ``option name N type T [default D] [min M] [max M] [var V]*`` line."""
    words = line.split(" ")
    if len(words) < 5 or words[0] != "option" or words[1] != "name" or "type" not in words:
        return None
    t = words.index("type")
    name = " ".join(words[2:t])
    fields: dict[str, list[str]] = {}
    key = ""
    var: list[str] = []
    for w in words[t:]:
        if w in ("type", "default", "min", "max", "var"):
            key = w
            if key == "var":
                var.append("")
            else:
                fields[key] = []
        elif key == "var":
            var[-1] = f"{var[-1]} {w}".strip()
        elif key:
            fields[key].append(w)
    kind = " ".join(fields.get("type", []))
    default_words = fields.get("default")
    default: Any = None if default_words is None else " ".join(default_words)

    def number(k: str) -> int | None:
        v = fields.get(k)
        try:
            return int(v[0]) if v else None
        except ValueError:
            return None

    if kind == "spin" and default is not None:
        with contextlib.suppress(ValueError):
            default = int(default)
    elif kind == "check" and default is not None:
        default = default == "true"
    return chess.engine.Option(name, kind, default, number("min"), number("max"), var)


def option_line(option: chess.engine.Option, value: Any) -> str:
    """``setoption name N value V`` for a value checked by ``option.parse``."""
    parsed = option.parse(value)
    if parsed is True:
        return f"setoption name {option.name} value true"
    if parsed is False:
        return f"setoption name {option.name} value false"
    if parsed is None:
        return f"setoption name {option.name}"
    return f"setoption name {option.name} value {parsed}"


def position_command(fen: str) -> str:
    """``position startpos`` or ``position fen FEN`` (as python-chess sends it)."""
    return "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"


def go_command(depth: int | None, nodes: int | None) -> str:
    words = ["go"]
    if depth is not None:
        words += ["depth", str(depth)]
    if nodes is not None:
        words += ["nodes", str(nodes)]
    return " ".join(words)


# -- the asyncio adapter ----------------------------------------------------------


class UciProcess:
    """One UCI engine process: start-up handshake, options, searches, quit/kill.

    One command at a time (the pool leases each process to one worker). The
    engine's output is read by one thread per process with blocking reads (as
    a plain pipe loop does) and fed to the command's reader there; the event
    loop is woken once per answer (``readyok``, ``bestmove``), not once per
    ``info`` line. Commands are written from the event loop: a few hundred
    bytes, which the pipe's buffer takes at once.
    """

    def __init__(self, proc: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self.proc = proc
        self.pid: int = proc.pid
        self.name = ""
        self.options: dict[str, chess.engine.Option] = {}  # by lower-case name
        self._loop = loop
        self._first_game = True
        # Called in the reader thread with each line; set by the loop thread.
        self._handler: Callable[[str], None] | None = None
        # Set by a search list's reader (in the reader thread): the pause
        # before the next read while searches are queued in the engine.
        self._pause = 0.0
        self._pending: asyncio.Future[Any] | None = None
        self._ended: str | None = None  # why the engine cannot answer any more
        self.exited: asyncio.Future[None] = loop.create_future()
        assert proc.stdin is not None and proc.stdout is not None
        self._stdin = proc.stdin
        self._write_lock = threading.Lock()
        # `spawn` sent ``uci`` with the process's start: its answer is read
        # from the first line on (the handler is in place before the reader
        # starts), and :meth:`handshake` waits for what is left of it.
        self._uciok: asyncio.Future[bool] = loop.create_future()
        self._pending = self._uciok
        self._handler = self._uci_line
        self._thread = threading.Thread(
            target=self._read_lines, name=f"uci-reader-{proc.pid}", daemon=True
        )
        self._thread.start()

    @classmethod
    def start(cls, path: str, nice: int = 0) -> UciProcess:
        """Start ``path`` in its own process group (Ctrl-C in a terminal does
        not reach it), ``nice`` steps below this process's priority, from a
        running event loop (fork and exec, as asyncio's own
        ``subprocess_exec`` does in the loop). Then await :meth:`handshake`;
        the caller bounds the time and kills on failure."""
        return cls.adopt(spawn(path, nice))

    @classmethod
    def adopt(cls, proc: subprocess.Popen[bytes]) -> UciProcess:
        """Drive ``proc``, an engine process started by
        :func:`~livegain.engine.launch.spawn` (possibly before this event loop
        ran); then await :meth:`handshake`, as after :meth:`start`."""
        return cls(proc, asyncio.get_running_loop())

    # -- the reader thread ------------------------------------------------------

    def _read_lines(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            fd = stdout.fileno()
            tail = b""
            while chunk := os.read(fd, 65536):
                lines = (tail + chunk).split(b"\n")
                tail = lines.pop()
                for raw in lines:
                    handler = self._handler
                    if handler is not None:
                        handler(raw.decode("utf-8", "replace").rstrip())
                if self._pause:
                    time.sleep(self._pause)
        except (OSError, ValueError):  # closed under us by kill()
            pass
        self._call(self._end, "the engine closed its output")
        with contextlib.suppress(Exception):
            stdout.close()
        self.proc.wait()  # reap it (killed, quit or crashed: it is exiting)
        self._call(self._exit)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            self._loop.call_soon_threadsafe(fn, *args)

    # -- the loop thread --------------------------------------------------------

    def _end(self, why: str) -> None:
        if self._ended is None:
            self._ended = why
        pending = self._pending
        if pending is not None and not pending.done():
            pending.set_exception(self._terminated())

    def _exit(self) -> None:
        self._end("the engine process exited")
        if not self.exited.done():
            self.exited.set_result(None)

    def _uci_line(self, line: str) -> None:
        """The answer to ``uci`` (in the reader thread): the engine's name and options."""
        if line.startswith("id name "):
            self.name = line[8:].strip()
        elif line.startswith("option "):
            opt = parse_option(line)
            if opt is not None:
                self.options[opt.name.lower()] = opt
        elif line.strip() == "uciok":
            self._handler = None
            self._call(_settle, self._uciok, True, None)

    async def handshake(self) -> None:
        """Wait for ``uciok`` (``uci`` went with the process's start, in
        :func:`~livegain.engine.launch.spawn`): the engine's name and options.
        An engine that ends first raises :class:`EngineTerminatedError`."""
        try:
            await self._uciok
        finally:
            if self._pending is self._uciok:
                self._pending = None

    def has_option(self, name: str) -> bool:
        return name.lower() in self.options

    async def configure(self, options: Mapping[str, Any]) -> None:
        """Set ``options`` (the ones the engine has; values checked), then ``isready``.

        ``UCI_AnalyseMode`` is switched on when the engine has it (python-chess
        does so for every analysis). Raises :class:`UciError` for a value the
        engine's declaration refuses or an option the pool manages itself.
        """
        lines = []
        given = {k.lower() for k in options}
        for key, value in options.items():
            if key.lower() in MANAGED_OPTIONS:
                raise UciError(f"option {key!r} cannot be set: the pool manages it")
            opt = self.options.get(key.lower())
            if opt is None:
                continue
            try:
                lines.append(option_line(opt, value))
            except chess.engine.EngineError as exc:
                raise UciError(str(exc)) from None
        if "uci_analysemode" in self.options and "uci_analysemode" not in given:
            lines.append(option_line(self.options["uci_analysemode"], True))
        await self.ping("".join(f"{line}\n" for line in lines))

    async def ping(self, before: str = "") -> None:
        """Send ``before`` then ``isready``; wait for ``readyok``."""
        await self._command((before + "isready\n").encode(), _readyok)

    async def search(
        self, fen: str, depth: int | None, nodes: int | None, new_game: bool
    ) -> SearchResult:
        """One search of ``fen`` at the limit; ``new_game``: ``ucinewgame`` first.

        A new game is ``ucinewgame`` and ``isready``; the search commands are
        sent once ``readyok`` is read, as the UCI protocol asks, by the reader
        thread itself (as a plain pipe loop does), so a search costs the event
        loop one wake-up, at ``bestmove``. Outside deterministic mode only the
        first search of a process starts a new game (python-chess's behaviour
        for one ``game`` object).
        """
        search = f"{position_command(fen)}\n{go_command(depth, nodes)}\n".encode()
        reader = SearchReader()
        if not (new_game or self._first_game):
            return await self._command(search, reader.feed)
        self._first_game = False
        waiting = True

        def read(line: str) -> SearchResult | None:  # in the reader thread
            nonlocal waiting
            if waiting:
                if line.strip() == "readyok":
                    waiting = False
                    self._write(search)
                return None
            return reader.feed(line)

        return await self._command(b"ucinewgame\nisready\n", read)

    @property
    def queues_ahead(self) -> bool:
        """The engine takes a search's commands while it runs another and starts
        it when that one ends (Stockfish reads its commands in order)."""
        return self.name.startswith(QUEUE_AHEAD_ENGINES)

    async def search_list(self, work: SearchList, run: ListRun) -> None:
        """Search positions of ``work`` until it has none left to hand out and
        this process's are done; ``run`` shows what is in flight (given back
        to ``work`` by the caller if the process fails) and when a search
        last ended.

        The searches are chained by the reader thread, which sends the next
        as each ends and wakes the event loop once, at the end. On an engine
        that :attr:`queues_ahead`, ``run.ahead`` more searches wait in the
        engine behind the running one, sent whole (``ucinewgame``, ``isready``,
        ``position``, ``go``), so the engine never waits for this process; and
        while they wait the reader thread reads the engine's output a few
        times per search instead of at every line. Elsewhere one search at a
        time, ``position``/``go`` once ``readyok`` follows ``ucinewgame``."""
        eager = self.queues_ahead
        room = 1 + (run.ahead if eager else 0)
        inflight = run.inflight
        durations: collections.deque[float] = collections.deque(maxlen=POLL_HISTORY)

        def take() -> bytes:
            data = b""
            while len(inflight) < room and (i := work.take()) is not None:
                new_game = work.new_game or self._first_game
                self._first_game = False
                search = work.command(i)
                inflight.append(_InFlight(i, SearchReader(), search, new_game))
                if not new_game:
                    data += search
                elif eager:
                    data += b"ucinewgame\nisready\n" + search
                else:
                    data += b"ucinewgame\nisready\n"
                    break
            return data

        def read(line: str) -> bool | None:  # in the reader thread
            head = inflight[0]
            if head.waiting:
                if line.strip() == "readyok":
                    head.waiting = False
                    if not eager:
                        self._write(head.search)
                return None
            result = head.reader.feed(line)
            if result is None:
                return None
            inflight.popleft()
            work.finish(head.index, result)
            now = time.monotonic()
            if run.queued_since_last:
                durations.append(now - run.last_result)
            run.last_result = now
            data = take()
            if data:
                self._write(data)
            run.queued_since_last = len(inflight) > 1
            self._pause = (
                min(POLL_MAX, max(POLL_MIN, POLL_FRACTION * statistics.median(durations)))
                if run.queued_since_last and len(durations) >= 2
                else 0.0
            )
            return None if inflight else True

        first = take()
        if not inflight:
            return
        run.last_result = time.monotonic()
        try:
            await self._command(first, read)
        finally:
            self._pause = 0.0

    def _write(self, data: bytes) -> None:
        """Write to the engine; a broken pipe is left to the end of its output
        (which fails the pending command)."""
        with contextlib.suppress(OSError, ValueError), self._write_lock:
            self._stdin.write(data)
            self._stdin.flush()

    async def _command(self, data: bytes, read: Callable[[str], T | None]) -> T:
        if self._ended is not None:
            raise self._terminated()
        future: asyncio.Future[T] = self._loop.create_future()
        call = self._call

        def on_line(line: str) -> None:  # in the reader thread
            try:
                result = read(line)
            except UciError as exc:
                self._handler = None
                call(_settle, future, None, exc)
                return
            if result is not None:
                self._handler = None
                call(_settle, future, result, None)

        self._pending = future
        self._handler = on_line
        try:
            self._write(data)
            return await future
        finally:
            self._handler = None
            self._pending = None

    def _terminated(self) -> EngineTerminatedError:
        code = self.proc.returncode
        why = self._ended or "the engine process ended"
        return EngineTerminatedError(
            f"engine process died unexpectedly ({why}"
            + (f", exit code {code})" if code is not None else ")")
        )

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def alive(self) -> bool:
        return self._ended is None and self.proc.poll() is None

    async def quit(self) -> None:
        """Ask the engine to quit and wait for it to exit (caller bounds the time)."""
        if self.alive():
            self._write(b"quit\n")
        await asyncio.shield(self.exited)

    async def kill(self, wait_s: float) -> None:
        """Kill the process (if still running) and wait (bounded) until it is reaped."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        with contextlib.suppress(OSError):
            self._stdin.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(wait_s):
                await asyncio.shield(self.exited)


class SearchList:
    """Positions that several processes search together (a batch), handed out
    and collected by their reader threads (:meth:`UciProcess.search_list`).

    ``results[i]`` is the result of ``fens[i]``; a position whose searches
    failed more than ``max_retries`` times gets its reasons in ``errors[i]``.
    """

    def __init__(
        self,
        fens: Sequence[str],
        depth: int | None,
        nodes: int | None,
        new_game: bool,
        max_retries: int = 2,
    ) -> None:
        self.fens = list(fens)
        self.new_game = new_game
        self.max_retries = max_retries
        self._go = go_command(depth, nodes)
        self.results: list[SearchResult | None] = [None] * len(self.fens)
        self.errors: list[list[str]] = [[] for _ in self.fens]
        self._todo: collections.deque[int] = collections.deque(range(len(self.fens)))
        self._lock = threading.Lock()
        self.finished = 0  # positions with a result or given up

    def command(self, i: int) -> bytes:
        return f"{position_command(self.fens[i])}\n{self._go}\n".encode()

    def take(self) -> int | None:
        with self._lock:
            return self._todo.popleft() if self._todo else None

    def finish(self, i: int, result: SearchResult) -> None:
        self.results[i] = result
        with self._lock:
            self.finished += 1

    def give_back(self, i: int, why: str) -> None:
        """A search of ``i`` failed: again later, or given up after the retries."""
        with self._lock:
            self.errors[i].append(why)
            if len(self.errors[i]) > self.max_retries:
                self.finished += 1
            else:
                self._todo.appendleft(i)

    def give_up(self, why: str) -> None:
        """No process can search: every position not handed out fails."""
        with self._lock:
            while self._todo:
                self.errors[self._todo.popleft()].append(why)
                self.finished += 1

    @property
    def waiting(self) -> bool:
        return bool(self._todo)

    @property
    def done(self) -> bool:
        return self.finished == len(self.fens)


@dataclass
class ListRun:
    """One process's part of a :class:`SearchList`: its searches in flight."""

    ahead: int = 2
    inflight: collections.deque[_InFlight] = field(default_factory=collections.deque)
    last_result: float = 0.0
    queued_since_last: bool = False


@dataclass(slots=True)
class _InFlight:
    index: int
    reader: SearchReader
    search: bytes
    waiting: bool  # for the readyok of its ucinewgame


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


def _readyok(line: str) -> bool | None:
    return True if line.strip() == "readyok" else None


__all__ = [
    "EngineTerminatedError",
    "ListRun",
    "SearchList",
    "SearchReader",
    "SearchResult",
    "UciError",
    "UciProcess",
    "go_command",
    "option_line",
    "parse_option",
    "parse_score_line",
    "position_command",
]
