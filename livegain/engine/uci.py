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
import contextlib
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import chess
import chess.engine

T = TypeVar("T")

#: Options the pool sets per search or must not change (python-chess's
#: ``MANAGED_OPTIONS`` plus MultiPV, which would reorder the info lines).
MANAGED_OPTIONS = frozenset({"uci_chess960", "uci_variant", "multipv", "ponder"})


class UciError(Exception):
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
        self._pending: asyncio.Future[Any] | None = None
        self._ended: str | None = None  # why the engine cannot answer any more
        self.exited: asyncio.Future[None] = loop.create_future()
        assert proc.stdin is not None and proc.stdout is not None
        self._stdin = proc.stdin
        self._write_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._read_lines, name=f"uci-reader-{proc.pid}", daemon=True
        )
        self._thread.start()

    @classmethod
    def start(cls, path: str) -> UciProcess:
        """Start ``path`` in its own process group (Ctrl-C in a terminal does
        not reach it), from a running event loop (fork and exec, as asyncio's
        own ``subprocess_exec`` does in the loop). Then await
        :meth:`handshake`; the caller bounds the time and kills on failure."""
        proc = subprocess.Popen(
            [path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            process_group=0,
        )
        return cls(proc, asyncio.get_running_loop())

    # -- the reader thread ------------------------------------------------------

    def _read_lines(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            for raw in stdout:
                handler = self._handler
                if handler is not None:
                    handler(raw.decode("utf-8", "replace").rstrip())
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

    async def handshake(self) -> None:
        """``uci`` until ``uciok``: the engine's name and options."""

        def read(line: str) -> bool | None:
            if line.startswith("id name "):
                self.name = line[8:].strip()
            elif line.startswith("option "):
                opt = parse_option(line)
                if opt is not None:
                    self.options[opt.name.lower()] = opt
            elif line.strip() == "uciok":
                return True
            return None

        await self._command(b"uci\n", read)

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
