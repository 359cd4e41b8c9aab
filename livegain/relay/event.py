"""A whole event relayed as Lichess and LiveChess Cloud serve a live one, round after round.

The games of a multi-round PGN (rounds from their ``Round`` tags) are served
on 127.0.0.1 in the shapes of the two real services (docs/watch.md), with
documents that change as the event goes on: round 1 live, then finished,
round 2 appears and goes live, and so on. Within a round, moves are revealed
as :class:`~livegain.relay.replay.Replay` reveals them.

* Lichess broadcast API: ``/api/broadcast/{tourId}`` (``tour`` with its
  ``info.format``, ``rounds`` each ``ongoing``, or ``finishedAt`` once over,
  a round's ``customScoring`` when given), ``/api/broadcast/{t}/{r}/{roundId}``
  (the round, its tournament, its ``games``), ``/api/broadcast/round/{id}.pgn``
  and the endless ``/api/stream/broadcast/round/{id}.pgn``. The PGN carries
  lila's tags as a LiveChess-fed broadcast has them: a per-game ``Event``
  (``"Round 4.1: White - Black"``), no ``Round`` and no ``Board``, a
  ``GameURL``; only the documents say which round and board a game is.
* LiveChess Cloud: the lookup ``/meta/{id}`` (``{"host": ..., "format": "1"}``)
  and the pool ``/get/{id}/tournament.json`` (every round listed from the
  start, ``count`` 0 until it is paired: a round is paired when the one
  before it starts), ``round-N/index.json`` (404 until paired) and
  ``round-N/game-M.json``.

``rounds``: the rounds in all, when the event announces more than the PGN
has (a tournament lists its rounds ahead): the rounds past the PGN's are
listed and never paired (no games, a stream that stays silent).

Driven by hand (tests: :meth:`begin`, :meth:`advance`, :meth:`finish`) or on
the clock (:meth:`play`: the demo). Requests are counted per path, and the
most Lichess requests in flight at once (streams apart) is kept
(``max_in_flight``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from livegain.core.board.identity import split_round
from livegain.feeds.pgn import ParsedGame, parse_pgn
from livegain.relay.http import MiniHttpServer, Reply
from livegain.relay.replay import Replay, ReplayError

State = Literal["upcoming", "ongoing", "finished"]
_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


@dataclass
class RelayRound:
    """One round of the relayed event."""

    number: int
    id: str
    replay: Replay | None
    """None: a round announced and never paired."""
    state: State = "upcoming"
    finished_at: int | None = None

    @property
    def name(self) -> str:
        return f"Round {self.number}"


def _lila_tags(g: ParsedGame, number: int, board: int, base: str, round_id: str) -> ParsedGame:
    """The game as a LiveChess-fed Lichess broadcast writes it (see the module docstring)."""
    snap = g.snapshot
    assert snap is not None
    tags = {k: v for k, v in snap.tags if k not in ("Event", "Round", "Board")}
    event = f"Round {number}.{board}: {snap.white.name} - {snap.black.name}"
    tags = {"Event": event, **tags, "GameURL": f"{base}/broadcast/-/-/{round_id}/g{board:07d}"}
    placed = dataclasses.replace(
        snap, event=event, round=None, board=None, tags=tuple(tags.items())
    )
    return dataclasses.replace(g, snapshot=placed)


def _board_of(g: ParsedGame) -> int:
    if g.snapshot is None:
        return 0
    return split_round(g.snapshot.round, g.snapshot.board)[1] or 0


class EventRelay:
    """Serves a multi-round event; see the module docstring."""

    def __init__(
        self,
        games: Sequence[ParsedGame],
        *,
        name: str | None = None,
        tour_id: str = "LgEvent1",
        lcc_id: str = "livegain-event",
        info_format: str | None = None,
        scoring: Mapping[str, Any] | None = None,
        speed: float = 1.0,
        seconds_per_move: float = 10.0,
        host: str = "127.0.0.1",
        port: int = 0,
        hold: float = 0.0,
        rounds: int | None = None,
    ) -> None:
        by_round: dict[int, list[ParsedGame]] = {}
        for g in games:
            if g.snapshot is None:
                continue
            rnd, _ = split_round(g.snapshot.round, g.snapshot.board)
            if rnd is None or not rnd.isdigit():
                raise ReplayError(f"game {g.index + 1}: no round number in its Round tag")
            by_round.setdefault(int(rnd), []).append(g)
        if not by_round:
            raise ReplayError("no playable game in the PGN")
        first = next(g.snapshot for g in games if g.snapshot is not None)
        self.name = name or (first.event if first is not None and first.event else "Event")
        self.tour_id = tour_id
        self.lcc_id = lcc_id
        self.info_format = info_format
        self.scoring = scoring
        self.server = MiniHttpServer(self._handle, host, port)
        self.hold = hold
        """Seconds each Lichess request is held in flight (tests: to see overlaps)."""
        self.requests: dict[str, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.not_modified = 0
        """Answers 304 to the tournament document (it carries an ETag)."""
        self.rounds: list[RelayRound] = []
        for n in sorted(by_round):
            rid = f"{tour_id[:4]}R{n:03d}"[:8].ljust(8, "0")
            ordered = sorted(
                by_round[n], key=lambda g: (g.snapshot.board or 0) if g.snapshot else 0
            )
            lila = [
                _lila_tags(g, n, b, "https://lichess.org", rid) for b, g in enumerate(ordered, 1)
            ]
            replay = Replay(lila, speed=speed, seconds_per_move=seconds_per_move)
            self.rounds.append(RelayRound(n, rid, replay))
        last = max(by_round)
        if rounds is not None and rounds < last:
            raise ReplayError(f"rounds {rounds}: the PGN has round {last}")
        for n in range(last + 1, (rounds or last) + 1):
            self.rounds.append(RelayRound(n, f"{tour_id[:4]}R{n:03d}"[:8].ljust(8, "0"), None))
        self._closed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._clock = 0

    @classmethod
    def from_pgn(cls, text: str, **kwargs: Any) -> EventRelay:
        return cls(parse_pgn(text, "relay", max_games=None), **kwargs)

    # -- addresses

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def lcc_pool(self) -> str:
        return f"{self.base_url}/get"

    @property
    def lcc_lookup(self) -> str:
        return f"{self.base_url}/meta"

    @property
    def tournament_url(self) -> str:
        """The tournament's page as Lichess links it (looked up at ``base_url``)."""
        return f"https://lichess.org/broadcast/event/{self.tour_id}"

    # -- the event as it goes on

    def round(self, number: int) -> RelayRound:
        return next(r for r in self.rounds if r.number == number)

    def begin(self, number: int) -> None:
        """Round ``number`` starts (ongoing)."""
        self.round(number).state = "ongoing"

    async def advance(self, number: int, moves: int | None = None) -> int:
        """Reveal the next ``moves`` moves of round ``number`` (None: all of them)."""
        replay = self._replay(self.round(number))
        return await (replay.advance(moves) if moves is not None else replay.advance_all())

    def finish(self, number: int) -> None:
        """Round ``number`` is over (every game revealed to its end first)."""
        rnd = self.round(number)
        rnd.state = "finished"
        self._clock += 1
        rnd.finished_at = 1_700_000_000_000 + self._clock

    async def play_round(self, number: int) -> None:
        """Round ``number`` from its first move to its last, on the clock, then over."""
        self.begin(number)
        await self._replay(self.round(number)).play()
        self.finish(number)

    async def play(self, start: int = 1, pause: float = 5.0, loop: bool = False) -> None:
        """The rounds before ``start`` over at once; then each round in turn, a
        ``pause`` after each; with ``loop``, those rounds again from their start
        (back to not started), for ever."""
        played = [r for r in self.rounds if r.replay is not None]
        for rnd in played:
            if rnd.number < start:
                await self._replay(rnd).advance_all()
                self.finish(rnd.number)
        while True:
            for rnd in played:
                if rnd.number >= start:
                    await self.play_round(rnd.number)
                    await asyncio.sleep(pause)
            if not loop:
                return
            for rnd in played:
                if rnd.number >= start:
                    rnd.state, rnd.finished_at = "upcoming", None
                    await self._replay(rnd).reset()

    # -- lifecycle

    async def start(self) -> None:
        try:
            await self.server.start()
        except OSError as exc:
            raise ReplayError(f"cannot listen: {exc}") from None

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._closed.set()  # the silent streams of rounds never paired end
        for rnd in self.rounds:
            if rnd.replay is not None:
                await rnd.replay.stop()  # its open streams end
        await self.server.stop()

    async def __aenter__(self) -> EventRelay:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def autoplay(self, start: int = 1, pause: float = 5.0, loop: bool = False) -> None:
        """:meth:`play` as a task of the relay (stopped with it)."""
        self._task = asyncio.create_task(self.play(start, pause, loop), name="event-relay")

    # -- documents

    def _paired(self, rnd: RelayRound) -> bool:
        """A round is paired once it or the round before it has started (a round
        announced without games never is)."""
        if rnd.replay is None:
            return False
        if rnd.state != "upcoming" or rnd is self.rounds[0]:
            return True
        before = self.rounds[self.rounds.index(rnd) - 1]
        return before.state != "upcoming"

    def lichess_round(self, rnd: RelayRound) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": rnd.id,
            "name": rnd.name,
            "slug": f"round-{rnd.number}",
            "createdAt": 1_700_000_000_000,
            "rated": True,
        }
        if rnd.state == "ongoing":
            out["ongoing"] = True
        if rnd.finished_at is not None:
            out["finishedAt"] = rnd.finished_at  # no deprecated "finished" flag
        if self.scoring is not None:
            out["customScoring"] = self.scoring
        return out

    def lichess_tour(self) -> dict[str, Any]:
        tour: dict[str, Any] = {"id": self.tour_id, "name": self.name, "slug": "event"}
        if self.info_format is not None:
            tour["info"] = {"format": self.info_format}
        return tour

    def lichess_games(self, rnd: RelayRound) -> list[dict[str, Any]]:
        if not self._paired(rnd):
            return []
        out = []
        for i, snap in enumerate(self._replay(rnd).snapshots(), 1):
            out.append(
                {
                    "id": f"g{i:07d}",
                    "name": f"{snap.white.name} - {snap.black.name}",
                    "fen": _START,
                    "players": [{"name": snap.white.name}, {"name": snap.black.name}],
                    "status": snap.result,
                }
            )
        return out

    def lcc_tournament(self) -> dict[str, Any]:
        rounds = []
        for rnd in self.rounds:
            games = len(self._replay(rnd).games) if self._paired(rnd) else 0
            live = (
                sum(1 for s in self._replay(rnd).snapshots() if s.result == "*")
                if rnd.state == "ongoing"
                else 0
            )
            rounds.append({"count": games, "live": live})
        return {
            "id": self.lcc_id,
            "name": self.name,
            "location": None,
            "rules": "STANDARD",
            "chess960": "STANDARD",
            "eboards": [],
            "rounds": rounds,
        }

    # -- HTTP

    async def _handle(self, path: str, headers: Mapping[str, str]) -> Reply:
        path = path.split("?", 1)[0]
        self.requests[path] = self.requests.get(path, 0) + 1
        if not path.startswith("/api/") or path.startswith("/api/stream/"):
            return self._route(path, headers)  # LiveChess Cloud, or a stream: not in flight
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.hold)  # a request in flight across a turn of the loop
            return self._route(path, headers)
        finally:
            self.in_flight -= 1

    def _route(self, path: str, headers: Mapping[str, str]) -> Reply:
        seg = [s for s in path.split("/") if s]
        if seg[:4] == ["api", "stream", "broadcast", "round"] and len(seg) == 5:
            rnd = self._by_id(seg[4].removesuffix(".pgn"))
            if rnd is None:
                return _not_found()
            return Reply(200, content_type="application/x-chess-pgn", stream=self._stream(rnd))
        if seg[:3] == ["api", "broadcast", "round"] and len(seg) == 4:
            rnd = self._by_id(seg[3].removesuffix(".pgn"))
            if rnd is None:
                return _not_found()
            body = self._replay(rnd).round_pgn() if self._paired(rnd) else ""
            return Reply(200, body.encode(), "application/x-chess-pgn")
        if seg[:2] == ["api", "broadcast"] and len(seg) == 3 and seg[2] == self.tour_id:
            reply = _json(
                {
                    "tour": self.lichess_tour(),
                    "rounds": [self.lichess_round(r) for r in self.rounds],
                }
            )
            etag = '"' + hashlib.sha256(reply.body).hexdigest()[:16] + '"'
            if headers.get("if-none-match") == etag:
                self.not_modified += 1
                return Reply(304, headers={"ETag": etag})
            reply.headers["ETag"] = etag
            return reply
        if seg[:2] == ["api", "broadcast"] and len(seg) == 5:
            rnd = self._by_id(seg[4])
            if rnd is None:
                return _not_found()
            return _json(
                {
                    "round": self.lichess_round(rnd),
                    "tour": self.lichess_tour(),
                    "study": {"writeable": False},
                    "games": self.lichess_games(rnd),
                }
            )
        return self._lcc(path)

    def _lcc(self, path: str) -> Reply:
        if path == f"/meta/{self.lcc_id}":
            return _json({"host": f"{self.server.host}:{self.server.port}", "format": "1"})
        prefix = f"/get/{self.lcc_id}/"
        if not path.startswith(prefix):
            return _not_found()
        rest = path[len(prefix) :]
        if rest == "tournament.json":
            return _json(self.lcc_tournament())
        m = re.fullmatch(r"round-(\d+)/(index|game-(\d+))\.json", rest)
        if m is None or not any(r.number == int(m.group(1)) for r in self.rounds):
            return _not_found()
        rnd = self.round(int(m.group(1)))
        if not self._paired(rnd):
            return _not_found()
        replay = self._replay(rnd)
        if m.group(2) == "index":
            return _json(replay.lcc_index())
        board = int(m.group(3))
        if not 1 <= board <= len(replay.games) or rnd.state == "upcoming":
            return _not_found()
        return _json(replay.lcc_game(board - 1))

    def _by_id(self, rid: str) -> RelayRound | None:
        return next((r for r in self.rounds if r.id == rid), None)

    @staticmethod
    def _replay(rnd: RelayRound) -> Replay:
        if rnd.replay is None:
            raise ReplayError(f"round {rnd.number} is announced, never paired")
        return rnd.replay

    def _stream(self, rnd: RelayRound) -> Any:
        replay = rnd.replay

        async def silent() -> AsyncIterator[bytes]:
            await self._closed.wait()  # a round never paired: nothing, until the relay stops
            return
            yield b""

        def body() -> AsyncIterator[bytes]:
            return replay.stream() if replay is not None else silent()

        return body


def _json(doc: object) -> Reply:
    return Reply(200, json.dumps(doc, separators=(",", ":")).encode(), "application/json")


def _not_found() -> Reply:
    return Reply(404, b'{"error":"Not found"}', "application/json")
