"""A Lichess broadcast tournament, followed from its first round to its last.

The Lichess broadcast API (docs/watch.md) gives a tournament's document,
``GET {lichess}/api/broadcast/{tourId}`` (``tour``, its ``rounds`` in order,
each ``ongoing``, ``finished``/``finishedAt`` or neither), each round's games
as PGN, ``GET /api/broadcast/round/{roundId}.pgn``, and a round's live
stream, ``GET /api/stream/broadcast/round/{roundId}.pgn`` (every game once,
then a game again each time it changes; it stays open, silent, after the round
ends). This feed:

* reads the tournament document every ``interval`` seconds (60 by default;
  asked with ``If-None-Match``/``If-Modified-Since`` when it gave an ETag or a
  Last-Modified):
  the round to follow is the **ongoing** one (the last, if several are), else
  the **next not finished** (followed from its first move), else, the event
  over, none (:func:`pick_round`). The next round is found there, never from
  the stream, which says nothing when a round ends;
* streams the round it follows (:class:`~livegain.feeds.pgn_stream.PgnStreamFeed`),
  and moves to the next round without a restart when the document says so;
* reads every **finished** round's PGN once (rounds before the one followed,
  and the followed round once it is over), so that the event's earlier
  results, players and pairings are on the boards, and the standings and the
  player table count the whole event;
* with ``round`` set, follows that round only (streamed while not finished,
  read once when it is).

Every game is placed by the source, not by its tags (:func:`place`): its
event is the tournament's name (lila writes a per-game ``Event`` such as
``"Round 4.1: White - Black"`` when its source has none), its round the
round's place in the tournament's list, its board the game's place in the
round (lila sends a round's games in board order, in its PGN and its stream).

Requests go through the host's etiquette (:mod:`livegain.feeds.hosts`): one
at a time on Lichess, ``Retry-After`` obeyed after a 429 or 503. The stream
holds the host while it opens only. ``status()`` says which round is
followed and why (``/healthz``); each change is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog

from livegain.core.snapshot import GameSnapshot, normalise_name
from livegain.feeds._http import HttpError, HttpResponse, http_get
from livegain.feeds.backoff import BACKOFF, Backoff
from livegain.feeds.base import (
    FeedSink,
    LichessFeedConfig,
    PgnStreamFeedConfig,
    source_sink,
)
from livegain.feeds.emitter import Emitter
from livegain.feeds.hosts import host_of
from livegain.feeds.json_bounds import loads_bounded
from livegain.feeds.pgn import MAX_PLIES, parse_pgn

log = structlog.get_logger("livegain.feeds.lichess")

RoundState = Literal["ongoing", "finished", "upcoming"]
#: Rounds of a tournament considered.
MAX_ROUNDS = 200
#: Characters of a name (event, round) kept.
MAX_NAME = 120
#: Largest tournament document, bytes.
MAX_DOCUMENT = 4 * 1024 * 1024


# --- the rules (pure) ------------------------------------------------------------------------


def clean_name(value: object) -> str | None:
    """A name from a document, fit to print on one line (None if none)."""
    if not isinstance(value, str):
        return None
    text = " ".join("".join(c if c.isprintable() else " " for c in value).split())
    if not text:
        return None
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 3] + "..."


def round_state(doc: Mapping[str, Any]) -> RoundState:
    """How Lichess marks a round: ``ongoing``; ``finished`` (the deprecated
    ``finished`` flag, or a ``finishedAt`` time); else ``upcoming``."""
    if doc.get("ongoing") is True:
        return "ongoing"
    finished_at = doc.get("finishedAt")
    if doc.get("finished") is True or (
        isinstance(finished_at, int | float) and not isinstance(finished_at, bool)
    ):
        return "finished"
    return "upcoming"


@dataclass(frozen=True)
class BroadcastRound:
    """One round of a Lichess broadcast tournament, as its documents list it."""

    number: int
    """Its place in the tournament's list, from 1."""
    id: str
    name: str
    state: RoundState
    scoring: Mapping[str, Any] | None = None
    """The round's ``customScoring`` document, when it has one."""


def read_rounds(rounds: object) -> list[BroadcastRound]:
    """The ``rounds`` of a tournament document, in order (ValueError when there
    is none or one is malformed)."""
    if not isinstance(rounds, list) or not rounds:
        raise ValueError("the tournament lists no rounds")
    out = []
    for n, r in enumerate(rounds[:MAX_ROUNDS], 1):
        if not isinstance(r, Mapping):
            raise ValueError(f"round {n} is not a JSON object")
        rid = r.get("id")
        if not isinstance(rid, str) or len(rid) != 8 or not rid.isascii() or not rid.isalnum():
            raise ValueError(f"round {n} has no valid id")
        scoring = r.get("customScoring")
        out.append(
            BroadcastRound(
                n,
                rid,
                clean_name(r.get("name")) or f"Round {n}",
                round_state(r),
                scoring if isinstance(scoring, Mapping) else None,
            )
        )
    return out


def pick_round(
    rounds: Sequence[BroadcastRound], pinned: str | None = None
) -> tuple[BroadcastRound | None, str]:
    """The round to stream now, and why: the pinned one while not finished; else
    the ongoing one (the last, if several are); else the first not finished;
    else none (the event is over)."""
    if pinned is not None:
        chosen = next((r for r in rounds if r.id == pinned), None)
        if chosen is None:
            return None, f"round {pinned} is not in the tournament"
        if chosen.state == "finished":
            return None, f"{chosen.name} (pinned) is finished"
        return chosen, f"{chosen.name} (pinned) is {chosen.state}"
    ongoing = [r for r in rounds if r.state == "ongoing"]
    if ongoing:
        return ongoing[-1], f"{ongoing[-1].name} is ongoing"
    waiting = [r for r in rounds if r.state != "finished"]
    if waiting:
        return waiting[0], f"{waiting[0].name} is the next round, not started yet"
    return None, "every round is finished"


def rounds_to_read(
    rounds: Sequence[BroadcastRound], read: set[str], pinned: str | None = None
) -> list[BroadcastRound]:
    """The finished rounds whose PGN has not been read since they finished
    (only the pinned one, when one is)."""
    return [
        r
        for r in rounds
        if r.state == "finished" and r.id not in read and (pinned is None or r.id == pinned)
    ]


def place(snap: GameSnapshot, event: str, number: int, board: int) -> GameSnapshot:
    """The snapshot placed by the source: the tournament's name as its event,
    the round's number, the board's; its tags say the same."""
    tags = {k: v for k, v in snap.tags}
    tags.update(Event=event, Round=f"{number}.{board}", Board=str(board))
    return dataclasses.replace(
        snap, event=event, round=str(number), board=board, tags=tuple(tags.items())
    )


def game_key(snap: GameSnapshot) -> str:
    """How a game is known within its round: its Lichess game id (from the
    ``GameURL``/``ChapterURL`` tag, or ``GameId``), else its two players."""
    tags = dict(snap.tags)
    for tag in ("GameURL", "ChapterURL"):
        url = tags.get(tag, "").rstrip("/")
        if url:
            return "id:" + url.rsplit("/", 1)[-1]
    if snap.game_id:
        return "id:" + snap.game_id
    return f"players:{normalise_name(snap.white.name)}|{normalise_name(snap.black.name)}"


@dataclass
class RoundBoards:
    """Each game's board in its round: its place in the order first seen."""

    boards: dict[str, int] = field(default_factory=dict)

    def board_of(self, snap: GameSnapshot) -> int:
        key = game_key(snap)
        found = self.boards.get(key)
        if found is None:
            found = self.boards[key] = len(self.boards) + 1
        return found


class PlacingSink:
    """Passes a round's snapshots on, placed by the source (:func:`place`)."""

    def __init__(
        self, sink: FeedSink, event: str, rnd: BroadcastRound, boards: RoundBoards
    ) -> None:
        self.sink = sink
        self.event = event
        self.round = rnd
        self.boards = boards

    def snapshot(self, snap: GameSnapshot) -> None:
        board = self.boards.board_of(snap)
        self.sink.snapshot(place(snap, self.event, self.round.number, board))

    def error(self, source: str, where: str, message: str) -> None:
        self.sink.error(source, f"{self.round.name}: {where}", message)


# --- the feed ---------------------------------------------------------------------------------


class LichessFeed:
    """Follows a Lichess broadcast tournament; see the module docstring."""

    def __init__(
        self,
        cfg: LichessFeedConfig,
        *,
        backoff: tuple[float, ...] = BACKOFF,
        max_plies: int = MAX_PLIES,
    ) -> None:
        self.cfg = cfg
        self.base = cfg.url.rstrip("/")
        self.name = cfg.name or f"lichess:{cfg.tournament}"
        self.max_plies = max_plies
        self.backoff = Backoff(backoff)
        self.emitter = Emitter(self.name)
        self.event: str | None = None
        self.rounds: list[BroadcastRound] = []
        self.following: BroadcastRound | None = None
        self.why = "not read yet"
        self.read: set[str] = set()
        """Finished rounds whose PGN was read after they finished."""
        self.reads = 0
        self._boards: dict[str, RoundBoards] = {}
        self._stream: asyncio.Task[None] | None = None
        self._tournament_doc: tuple[str, str, Mapping[str, Any]] | None = None
        """The tournament document last read: its ETag, Last-Modified and content."""

    @property
    def errors(self) -> int:
        return self.emitter.errors

    def status(self) -> dict[str, object]:
        """Which round is followed and why, for ``/healthz``."""
        return {
            "tournament": self.event,
            "rounds": len(self.rounds),
            "round": self.following.name if self.following is not None else None,
            "round_number": self.following.number if self.following is not None else None,
            "why": self.why,
            "finished_rounds_read": len(self.read),
            "tournament_reads": self.reads,
        }

    async def run(self, sink: FeedSink) -> None:
        sink = source_sink(sink, self.cfg)
        try:
            while True:
                ok = await self._turn(sink)
                if ok:
                    self.backoff.succeed()
                    await asyncio.sleep(self.cfg.interval)
                else:
                    await asyncio.sleep(max(self.backoff.fail(), 1.0))
        finally:
            await self._stop_stream()

    async def _turn(self, sink: FeedSink) -> bool:
        """Read the tournament, the finished rounds not read yet, and follow the
        round to follow; False when the tournament could not be read."""
        url = f"{self.base}/api/broadcast/{self.cfg.tournament}"
        try:
            doc = await self._json(url)
            tour = doc.get("tour")
            event = clean_name(tour.get("name")) if isinstance(tour, Mapping) else None
            rounds = read_rounds(doc.get("rounds"))
        except (HttpError, ValueError) as exc:
            self.emitter.error(sink, url, f"tournament not read: {exc}")
            return False
        self.reads += 1
        self.event = event or self.event or f"Lichess broadcast {self.cfg.tournament}"
        self.rounds = rounds
        for rnd in rounds_to_read(rounds, self.read, self.cfg.round):
            if await self._read_round(sink, rnd):
                self.read.add(rnd.id)
        chosen, why = pick_round(rounds, self.cfg.round)
        self.why = why
        if chosen != self.following or (chosen is not None and self._stream is None):
            await self._follow(sink, chosen)
        return True

    async def _json(self, url: str) -> Mapping[str, Any]:
        """The tournament document, asked conditionally (ETag, Last-Modified):
        an answer 304 is the document read before."""
        kept = self._tournament_doc
        headers = {}
        if kept is not None and kept[0]:
            headers["If-None-Match"] = kept[0]
        if kept is not None and kept[1]:
            headers["If-Modified-Since"] = kept[1]
        resp = await self._get(url, "application/json", MAX_DOCUMENT, headers)
        if resp.status == 304 and kept is not None:
            return kept[2]
        if resp.status != 200:
            raise HttpError(f"HTTP {resp.status} {resp.reason}".strip())
        data = loads_bounded(resp.body)
        if not isinstance(data, Mapping):
            raise ValueError("not a JSON object")
        self._tournament_doc = (
            resp.headers.get("etag", ""),
            resp.headers.get("last-modified", ""),
            data,
        )
        return data

    async def _get(
        self, url: str, accept: str, max_body: int, headers: Mapping[str, str] | None = None
    ) -> HttpResponse:
        host = host_of(url)
        async with host.slot():
            resp = await http_get(
                url,
                headers={"Accept": accept, **(headers or {})},
                timeout=self.cfg.timeout,
                max_body=max_body,
            )
        host.answered(resp.status, resp.headers)
        return resp

    async def _read_round(self, sink: FeedSink, rnd: BroadcastRound) -> bool:
        """Read a round's PGN once; True when it was read."""
        url = f"{self.base}/api/broadcast/round/{rnd.id}.pgn"
        try:
            resp = await self._get(url, "application/x-chess-pgn", self.cfg.max_bytes)
        except HttpError as exc:
            self.emitter.error(sink, url, f"{rnd.name} not read: {exc}")
            return False
        if resp.status != 200:
            self.emitter.error(sink, url, f"{rnd.name} not read: HTTP {resp.status}")
            return False
        games = await asyncio.to_thread(
            parse_pgn,
            resp.text(),
            self.name,
            max_plies=self.max_plies,
            max_games=self.cfg.max_games,
        )
        placed = PlacingSink(sink, self.event or "", rnd, self._boards_of(rnd))
        await self.emitter.offer_async(games, placed, fallback=url)
        log.info("round_read", tournament=self.event, round=rnd.name, games=len(games))
        return True

    def _boards_of(self, rnd: BroadcastRound) -> RoundBoards:
        return self._boards.setdefault(rnd.id, RoundBoards())

    async def _follow(self, sink: FeedSink, rnd: BroadcastRound | None) -> None:
        await self._stop_stream()
        before, self.following = self.following, rnd
        log.info(
            "following_round",
            tournament=self.event,
            round=rnd.name if rnd is not None else None,
            before=before.name if before is not None else None,
            why=self.why,
        )
        if rnd is None:
            return
        from livegain.feeds.pgn_stream import PgnStreamFeed

        cfg = PgnStreamFeedConfig(
            name=self.name,
            url=f"{self.base}/api/stream/broadcast/round/{rnd.id}.pgn",
            timeout=self.cfg.timeout,
            max_games=self.cfg.max_games,
        )
        feed = PgnStreamFeed(cfg, max_plies=self.max_plies)
        feed.emitter = self.emitter  # one record of what was sent, across reads and streams
        placed = PlacingSink(sink, self.event or "", rnd, self._boards_of(rnd))
        self._stream = asyncio.create_task(feed.run(placed), name=f"{self.name}-stream")

    async def _stop_stream(self) -> None:
        task, self._stream = self._stream, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def scoring_of(rounds: Sequence[BroadcastRound]) -> Mapping[str, Any] | None:
    """The tournament's custom scoring: the ``customScoring`` its rounds carry,
    when every round that carries one carries the same (None otherwise)."""
    docs = [r.scoring for r in rounds if r.scoring is not None]
    if not docs:
        return None
    first = json.dumps(docs[0], sort_keys=True)
    return docs[0] if all(json.dumps(d, sort_keys=True) == first for d in docs) else None
