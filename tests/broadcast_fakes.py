"""Local fakes of the broadcast services `livegain watch` looks sources up in.

:class:`FakeLichess` serves the Lichess broadcast API on 127.0.0.1: a
tournament (``GET /api/broadcast/{tourId}``: ``tour`` and its ``rounds``), a
round (``GET /api/broadcast/{tourSlug}/{roundSlug}/{roundId}``: ``round``,
``tour``, ``games``), a round's PGN (``GET /api/broadcast/round/{id}.pgn``)
and its live PGN stream
(``GET /api/stream/broadcast/round/{roundId}.pgn``), the stream being a
:class:`~livegain.relay.replay.Replay` of real games passed through as it
grows. :class:`FakeLcc` serves a LiveChess Cloud tournament's
``tournament.json`` and its rounds' ``index.json``. Both are real HTTP
servers (aiohttp, through the project's MiniHttpServer).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from livegain.feeds._http import http_stream
from livegain.relay.http import MiniHttpServer, Reply
from livegain.relay.replay import Replay


@dataclass
class FakeRound:
    round_id: str
    name: str
    slug: str
    ongoing: bool = False
    finished: bool = False
    replay: Replay | None = None

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.round_id,
            "name": self.name,
            "slug": self.slug,
            "createdAt": 1_700_000_000_000,
            "startsAt": 1_700_000_000_000,
            "rated": True,
        }
        if self.ongoing:
            out["ongoing"] = True
        if self.finished:
            out["finished"] = True
            out["finishedAt"] = 1_700_000_900_000
        return out


@dataclass
class FakeTour:
    tour_id: str
    name: str
    slug: str
    rounds: list[FakeRound] = field(default_factory=list)
    info: dict[str, str] = field(
        default_factory=lambda: {"format": "10-player round robin", "tc": "Classical"}
    )

    def json(self) -> dict[str, Any]:
        return {
            "id": self.tour_id,
            "name": self.name,
            "slug": self.slug,
            "info": self.info,
            "createdAt": 1_700_000_000_000,
            "tier": 5,
        }


def _json(doc: object) -> Reply:
    return Reply(200, json.dumps(doc).encode(), "application/json")


class FakeLichess(MiniHttpServer):
    """The Lichess broadcast API, for the tournaments added to it."""

    def __init__(self) -> None:
        super().__init__(self._handle)
        self.tours: dict[str, FakeTour] = {}
        self.paths: list[str] = []

    def add(self, tour: FakeTour) -> FakeTour:
        self.tours[tour.tour_id] = tour
        return tour

    def _round(self, round_id: str) -> tuple[FakeTour, FakeRound] | None:
        for tour in self.tours.values():
            for r in tour.rounds:
                if r.round_id == round_id:
                    return tour, r
        return None

    def round_url(self, round_id: str) -> str:
        """The round's page as Lichess links it."""
        found = self._round(round_id)
        assert found is not None
        tour, r = found
        return f"https://lichess.org/broadcast/{tour.slug}/{r.slug}/{r.round_id}"

    def tour_url(self, tour_id: str) -> str:
        tour = self.tours[tour_id]
        return f"https://lichess.org/broadcast/{tour.slug}/{tour.tour_id}"

    def _handle(self, path: str, headers: Mapping[str, str]) -> Reply:
        path = path.split("?", 1)[0]
        self.paths.append(path)
        seg = [s for s in path.split("/") if s]
        if seg[:4] == ["api", "stream", "broadcast", "round"] and len(seg) == 5:
            found = self._round(seg[4].removesuffix(".pgn"))
            if found is None or found[1].replay is None:
                return Reply(404, b'{"error":"Not found"}', "application/json")
            return Reply(200, content_type="application/x-chess-pgn", stream=self._stream(found[1]))
        if seg[:3] == ["api", "broadcast", "round"] and len(seg) == 4:
            found = self._round(seg[3].removesuffix(".pgn"))
            if found is None:
                return Reply(404, b'{"error":"Not found"}', "application/json")
            pgn = found[1].replay.round_pgn() if found[1].replay is not None else ""
            return Reply(200, pgn.encode(), "application/x-chess-pgn")
        if seg[:2] == ["api", "broadcast"] and len(seg) == 3:
            tour = self.tours.get(seg[2])
            if tour is None:
                return Reply(404, b'{"error":"Not found"}', "application/json")
            return _json({"tour": tour.json(), "rounds": [r.json() for r in tour.rounds]})
        if seg[:2] == ["api", "broadcast"] and len(seg) == 5:
            found = self._round(seg[4])
            if found is None:
                return Reply(404, b'{"error":"Not found"}', "application/json")
            tour, r = found
            games = []
            if r.replay is not None:
                for i, snap in enumerate(r.replay.snapshots()):
                    games.append(
                        {
                            "id": f"game{i + 1:04d}",
                            "name": f"{snap.white.name} - {snap.black.name}",
                            "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                            "players": [{"name": snap.white.name}, {"name": snap.black.name}],
                            "status": "*",
                        }
                    )
            return _json(
                {
                    "round": r.json(),
                    "tour": tour.json(),
                    "study": {"writeable": False},
                    "games": games,
                }
            )
        return Reply(404, b'{"error":"Not found"}', "application/json")

    @staticmethod
    def _stream(r: FakeRound) -> Any:
        replay = r.replay
        assert replay is not None

        async def body() -> AsyncIterator[bytes]:
            # The replay's own endless PGN response, passed through as it grows.
            async for _status, chunk in http_stream(replay.stream_url):
                if chunk:
                    yield chunk

        return body


class FakeLcc(MiniHttpServer):
    """A LiveChess Cloud pool: ``/get/{id}/tournament.json`` and ``round-N/index.json``,
    and LiveChess Cloud's lookup of a tournament's host, ``/meta/{id}``."""

    def __init__(self) -> None:
        super().__init__(self._handle)
        self.tournaments: dict[str, dict[str, Any]] = {}
        self.indexes: dict[tuple[str, int], dict[str, Any]] = {}
        self.hosts: dict[str, str] = {}
        """Tournament id -> the host LiveChess Cloud's lookup names (``/meta/{id}``)."""
        self.paths: list[str] = []

    @property
    def pool(self) -> str:
        return f"{self.base_url}/get"

    def add(
        self,
        tournament_id: str,
        name: str,
        rounds: list[tuple[int, int]],
        results: Mapping[int, list[str]] | None = None,
    ) -> None:
        """A tournament: ``rounds`` as (games, live games); ``results``: round -> the
        result of each pairing (rounds without: no index.json)."""
        self.tournaments[tournament_id] = {
            "id": tournament_id,
            "name": name,
            "location": "Wijk aan Zee",
            "country": "NED",
            "timecontrol": "100 min/40 mov. + 50 min/20 mov. + 15 min/rest",
            "rules": "STANDARD",
            "chess960": "STANDARD",
            "eboards": [],
            "rounds": [{"count": c, "live": live} for c, live in rounds],
        }
        for rnd, res in (results or {}).items():
            self.indexes[(tournament_id, rnd)] = {
                "date": "2024-01-20",
                "pairings": [
                    {
                        "white": {"fname": "Ann", "lname": f"White{i}", "fideid": None},
                        "black": {"fname": "Bob", "lname": f"Black{i}", "fideid": None},
                        "result": x,
                        "live": x == "*",
                    }
                    for i, x in enumerate(res, 1)
                ],
            }

    def _handle(self, path: str, headers: Mapping[str, str]) -> Reply:
        path = path.split("?", 1)[0]
        self.paths.append(path)
        m = re.fullmatch(r"/meta/([^/]+)", path)
        if m and m.group(1) in self.hosts:
            return _json({"host": self.hosts[m.group(1)], "format": "1"})
        m = re.fullmatch(r"/get/([^/]+)/tournament\.json", path)
        if m and m.group(1) in self.tournaments:
            return _json(self.tournaments[m.group(1)])
        m = re.fullmatch(r"/get/([^/]+)/round-(\d+)/index\.json", path)
        if m and (m.group(1), int(m.group(2))) in self.indexes:
            return _json(self.indexes[(m.group(1), int(m.group(2)))])
        return Reply(404, b"not found\n")
