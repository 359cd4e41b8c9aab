"""What a source typed on the command line is, and the feed that follows it.

``livegain watch SOURCE...`` (docs/watch.md) takes what a user has at hand
for a real event and finds the feed behind it:

* ``lichess-round``: a Lichess broadcast round URL
  (``https://lichess.org/broadcast/TOUR/ROUND/ROUNDID``, a game's page below
  it, the round's API, PGN or stream URL): a ``pgn-stream`` feed of the round;
* ``lichess-tournament``: a Lichess broadcast tournament URL
  (``https://lichess.org/broadcast/TOUR/TOURID``): its current round's stream;
* ``lcc-url``: a LiveChess Cloud viewer URL (``view.livechesscloud.com/#ID``,
  ``/ROUND`` after it for that round) or a pool document's URL
  (``.../get/ID/tournament.json``, ``.../get/ID/round-N/...``): an ``lcc`` feed
  of the current (or that) round;
* ``pgn-url``: any other ``http(s)://`` URL: a ``pgn-http`` feed, polled;
* ``pgn-path``: an existing local PGN file or folder: a ``file`` feed;
* ``lcc-id``: a bare LiveChess Cloud tournament id (a UUID, ``/ROUND`` after it
  for that round): an ``lcc`` feed of the current (or that) round.

Each rule is a pure function of the text (and of the :class:`Endpoints`:
where Lichess and LiveChess Cloud are), None when it does not apply; the
first that applies names the source (:func:`classify`). A Lichess or LCC
source is then looked up (:func:`resolve`, the only I/O here: one GET per
document through :class:`HttpLookup`) to find its event, its round and how
many boards it has, and the choice of round is pure again
(:func:`pick_lichess_round`, :func:`pick_lcc_round`):

* a Lichess round URL follows that round; its name and its tournament's come
  from ``GET {lichess}/api/broadcast/{tourSlug}/{roundSlug}/{roundId}``;
* a Lichess tournament URL reads ``GET {lichess}/api/broadcast/{tourId}`` and
  follows its ongoing round (the last one, if several are), else the next
  round not finished (it is followed from its first move), else the last;
* a LiveChess Cloud tournament reads ``{lcc}/{id}/tournament.json``: the last
  round with live games, else the first round with pairings whose
  ``round-N/index.json`` has a game without a result, else the last round
  with pairings; that round's ``index.json`` gives its boards.

Every looked-up document is untrusted: a missing or malformed value is an
error naming the source and what was wrong (:class:`ResolveError`), never a
traceback. The addresses of Lichess and LiveChess Cloud can be changed
(:class:`Endpoints`: options or ``LIVEGAIN_LICHESS_URL`` and
``LIVEGAIN_LCC_URL``), which is how the tests run against local fakes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import SplitResult, urlsplit

from livegain.core.errors import LivegainError
from livegain.feeds.base import (
    FeedConfig,
    FileFeedConfig,
    LccFeedConfig,
    PgnHttpFeedConfig,
    PgnStreamFeedConfig,
)

LICHESS_URL = "https://lichess.org"
LCC_URL = "https://1.pool.livechesscloud.com/get"
LICHESS_URL_ENV = "LIVEGAIN_LICHESS_URL"
LCC_URL_ENV = "LIVEGAIN_LCC_URL"
LICHESS_HOSTS = frozenset({"lichess.org", "www.lichess.org"})
LCC_DOMAIN = "livechesscloud.com"

#: Seconds one lookup may take.
LOOKUP_TIMEOUT = 10.0
#: Largest looked-up document, bytes (a Lichess tournament with its description and rounds).
LOOKUP_MAX_BYTES = 4 * 1024 * 1024
#: Round indexes looked up at once (LiveChess Cloud, when no round is live).
LOOKUP_CONCURRENCY = 6
#: Rounds of a LiveChess Cloud tournament considered (the feed's own limit).
MAX_ROUNDS = 200
#: Characters of a name (event, round) kept.
MAX_NAME = 120

_LICHESS_ID = re.compile(r"[A-Za-z0-9]{8}")
_LCC_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_LCC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_LCC_ROUND = re.compile(r"round-([0-9]{1,4})")
# /broadcast/{these}/...: Lichess pages, not tournaments
_LICHESS_PAGES = frozenset({"by", "calendar", "help", "my-rounds", "new", "official", "top"})

KINDS = (
    "a Lichess broadcast round or tournament URL, a LiveChess Cloud tournament id or URL, "
    "a PGN URL, or an existing PGN file or folder"
)


class ResolveError(LivegainError, ValueError):
    """A source that cannot be followed: the message names it and says why."""

    def __init__(self, source: str, why: str) -> None:
        super().__init__(f"{source}: {why}")
        self.source = source
        self.why = why


@dataclass(frozen=True)
class Endpoints:
    """Where the lookups go: Lichess's site and LiveChess Cloud's pool (up to ``/get``)."""

    lichess: str = LICHESS_URL
    lcc: str = LCC_URL

    @classmethod
    def chosen(
        cls,
        lichess: str | None = None,
        lcc: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Endpoints:
        """The options given, else the environment's ``LIVEGAIN_LICHESS_URL`` and
        ``LIVEGAIN_LCC_URL``, else the real services; checked (ResolveError)."""
        env = os.environ if environ is None else environ
        out = cls(
            lichess=(lichess or env.get(LICHESS_URL_ENV) or LICHESS_URL).rstrip("/"),
            lcc=(lcc or env.get(LCC_URL_ENV) or LCC_URL).rstrip("/"),
        )
        for name, url in (("Lichess", out.lichess), ("LiveChess Cloud", out.lcc)):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ResolveError(url, f"the {name} address must be an http(s):// URL")
        return out


# --- what a source names ----------------------------------------------------------------------


@dataclass(frozen=True)
class LichessRound:
    """One round of a Lichess broadcast."""

    round_id: str
    tour_slug: str = "-"
    round_slug: str = "-"


@dataclass(frozen=True)
class LichessTournament:
    """A Lichess broadcast tournament: one of its rounds is followed."""

    tour_id: str


@dataclass(frozen=True)
class LccTournament:
    """A LiveChess Cloud tournament; ``base_url`` None: the configured pool."""

    tournament_id: str
    base_url: str | None = None
    round: int | None = None


@dataclass(frozen=True)
class PgnUrl:
    url: str


@dataclass(frozen=True)
class PgnPath:
    path: str
    folder: bool = False


Source = LichessRound | LichessTournament | LccTournament | PgnUrl | PgnPath


@dataclass(frozen=True)
class Rule:
    """One kind of source: its name and the pure function that recognises it."""

    name: str
    match: Callable[[str, Endpoints], Source | None]


def _url(text: str) -> SplitResult | None:
    parts = urlsplit(text.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return parts


def _without_scheme(text: str, hosts: Sequence[str]) -> str:
    """``lichess.org/broadcast/...`` as typed without its scheme: with https://."""
    t = text.strip()
    return f"https://{t}" if t.lower().startswith(tuple(f"{h}/" for h in hosts)) else t


def _lichess_path(text: str, ep: Endpoints) -> list[str] | None:
    """The path segments of a URL on Lichess (or on the configured Lichess address)."""
    text = _without_scheme(text, sorted(LICHESS_HOSTS))
    parts = _url(text)
    if parts is None:
        return None
    base = urlsplit(ep.lichess)
    path = parts.path
    if (parts.hostname or "").lower() in LICHESS_HOSTS:
        pass
    elif parts.netloc.lower() == base.netloc.lower() and path.startswith(base.path):
        path = path[len(base.path) :]
    else:
        return None
    return [s for s in path.split("/") if s]


def lichess_round(text: str, ep: Endpoints) -> Source | None:
    """A Lichess broadcast round: the round's page (``/broadcast/T/R/ID``, a game's
    page below it too), its API document, its PGN or its stream."""
    seg = _lichess_path(text, ep)
    if seg is None:
        return None
    web = len(seg) in (4, 5) and seg[0] == "broadcast"
    api = len(seg) == 5 and seg[:2] == ["api", "broadcast"]
    if (web or api) and seg[1] not in _LICHESS_PAGES:
        tour, rnd, rid = seg[1:4] if web else seg[2:5]
        if _LICHESS_ID.fullmatch(rid):
            return LichessRound(rid, tour, rnd)
    if seg[:-1] in (["api", "stream", "broadcast", "round"], ["api", "broadcast", "round"]):
        rid = seg[-1].removesuffix(".pgn")
        if _LICHESS_ID.fullmatch(rid):
            return LichessRound(rid)
    return None


def lichess_tournament(text: str, ep: Endpoints) -> Source | None:
    """A Lichess broadcast tournament: its page (``/broadcast/SLUG/ID``) or its API document."""
    seg = _lichess_path(text, ep)
    if seg is None:
        return None
    tid: str | None = None
    if len(seg) == 3 and seg[0] == "broadcast" and seg[1] not in _LICHESS_PAGES:
        tid = seg[2]
    elif len(seg) == 3 and seg[:2] == ["api", "broadcast"]:
        tid = seg[2].removesuffix(".pgn")
    if tid is not None and tid not in _LICHESS_PAGES and _LICHESS_ID.fullmatch(tid):
        return LichessTournament(tid)
    return None


def lcc_url(text: str, ep: Endpoints) -> Source | None:
    """A LiveChess Cloud URL: the viewer's (``view.livechesscloud.com/#ID[/ROUND]``) or
    a pool document's (``.../get/ID/tournament.json``, ``.../get/ID/round-N/...``,
    on any host: the shape is LiveChess Cloud's)."""
    parts = _url(_without_scheme(text, ["view.livechesscloud.com"]))
    if parts is None:
        return None
    host = (parts.hostname or "").lower()
    seg = [s for s in parts.path.split("/") if s]
    if "get" in seg:
        i = seg.index("get")
        rest = seg[i + 1 :]
        lcc_shaped = len(rest) >= 2 and (
            rest[1] == "tournament.json" or _LCC_ROUND.fullmatch(rest[1]) is not None
        )
        if rest and _LCC_ID.fullmatch(rest[0]) and (lcc_shaped or host.endswith(LCC_DOMAIN)):
            base = f"{parts.scheme}://{parts.netloc}/" + "/".join(seg[: i + 1])
            m = _LCC_ROUND.fullmatch(rest[1]) if len(rest) >= 2 else None
            return LccTournament(rest[0], base, int(m.group(1)) if m else None)
        return None
    if host == LCC_DOMAIN or host.endswith(f".{LCC_DOMAIN}"):
        where = parts.fragment.strip("/") or parts.path.strip("/")
        tid, _, rnd = where.partition("/")
        if _LCC_ID.fullmatch(tid) and (rnd == "" or rnd.isdigit()):
            return LccTournament(tid, None, int(rnd) if rnd else None)
    return None


def pgn_url(text: str, ep: Endpoints) -> Source | None:
    """Any other http(s) URL (not Lichess's): a PGN file, polled."""
    parts = _url(text)
    if parts is None or _lichess_path(text, ep) is not None:
        return None
    return PgnUrl(text.strip())


def lcc_id(text: str, ep: Endpoints) -> Source | None:
    """A bare LiveChess Cloud tournament id (a UUID), ``/N`` after it for round N."""
    tid, _, rnd = text.strip().partition("/")
    if _LCC_UUID.fullmatch(tid) and (rnd == "" or rnd.isdigit()):
        return LccTournament(tid, None, int(rnd) if rnd else None)
    return None


#: The URL rules, in the order they are tried; then a local path, then a bare LCC id.
URL_RULES: tuple[Rule, ...] = (
    Rule("lichess-round", lichess_round),
    Rule("lichess-tournament", lichess_tournament),
    Rule("lcc-url", lcc_url),
    Rule("pgn-url", pgn_url),
)
LCC_ID_RULE = Rule("lcc-id", lcc_id)


def classify(
    text: str,
    ep: Endpoints,
    exists: Callable[[str], bool] = os.path.exists,
    is_dir: Callable[[str], bool] = os.path.isdir,
) -> tuple[str, Source]:
    """The rule that names ``text`` and what it names (ResolveError if none does).

    ``exists``, ``is_dir``: the questions asked of the file system (a local path
    is taken before a bare LiveChess Cloud id)."""
    if not text.strip():
        raise ResolveError(repr(text), f"an empty source; expected {KINDS}")
    for rule in URL_RULES:
        found = rule.match(text, ep)
        if found is not None:
            return rule.name, found
    if _lichess_path(text, ep) is not None:
        raise ResolveError(
            text, "a Lichess URL, but not of a broadcast round or tournament (/broadcast/...)"
        )
    if _url(text) is None and exists(text):
        return "pgn-path", PgnPath(str(Path(text).resolve()), is_dir(text))
    found = LCC_ID_RULE.match(text, ep)
    if found is not None:
        return LCC_ID_RULE.name, found
    raise ResolveError(text, f"no such file or folder, and not {KINDS}")


# --- the lookups ------------------------------------------------------------------------------


class Lookup(Protocol):
    """Fetches one JSON document; raises LookupFailed (with why) on any failure."""

    async def json(self, url: str) -> Any: ...


class LookupFailed(LivegainError):
    """A lookup that did not give a JSON document: the message says why."""


class HttpLookup:
    """:class:`Lookup` over HTTP (the feeds' client: one deadline, a size cap)."""

    def __init__(self, timeout: float = LOOKUP_TIMEOUT, max_bytes: int = LOOKUP_MAX_BYTES) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes

    async def json(self, url: str) -> Any:
        from livegain.feeds._http import HttpError, http_get

        try:
            resp = await http_get(
                url,
                headers={"Accept": "application/json"},
                timeout=self.timeout,
                max_body=self.max_bytes,
            )
        except HttpError as exc:
            raise LookupFailed(f"{url}: {exc}") from None
        if resp.status != 200:
            hint = " (no such broadcast, or a private one)" if resp.status == 404 else ""
            raise LookupFailed(f"{url}: HTTP {resp.status} {resp.reason}{hint}")
        try:
            return json.loads(resp.body)
        except ValueError:
            raise LookupFailed(f"{url}: not a JSON document") from None


@dataclass(frozen=True)
class Resolved:
    """A source, the rule that named it, the feed that follows it and what the
    lookups said of it (event, round, its state and boards, when known)."""

    source: str
    rule: str
    feed: FeedConfig
    event: str | None = None
    round: str | None = None
    state: str | None = None
    boards: int | None = None

    def describe(self) -> str:
        """One line for people: what is followed, and from where."""
        what = ", ".join(x for x in (self.event, self.round) if x)
        notes = [x for x in (self.state,) if x]
        if self.boards is not None:
            notes.append(f"{self.boards} board{'s' if self.boards != 1 else ''}")
        if notes:
            what = f"{what} ({', '.join(notes)})" if what else f"({', '.join(notes)})"
        return f"{self.rule} {what + ': ' if what else ''}{_where(self.feed)}"


def _where(feed: FeedConfig) -> str:
    if isinstance(feed, PgnStreamFeedConfig):
        return f"streamed from {feed.url}"
    if isinstance(feed, PgnHttpFeedConfig):
        return f"polled from {feed.url}"
    if isinstance(feed, LccFeedConfig):
        rounds = ", ".join(str(r) for r in feed.rounds or [])
        return f"polled from {feed.base_url}/{feed.tournament_id} (round {rounds})"
    if isinstance(feed, FileFeedConfig):
        return f"watching {feed.path}"
    return feed.type  # pragma: no cover


def _name(value: object) -> str | None:
    """A name from a looked-up document, fit to print on one line (None if none)."""
    if not isinstance(value, str):
        return None
    text = " ".join("".join(c if c.isprintable() else " " for c in value).split())
    if not text:
        return None
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 3] + "..."


def _object(doc: object, what: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise ValueError(f"{what} is not a JSON object")
    return doc


def lichess_round_state(rnd: Mapping[str, Any]) -> str:
    """``ongoing``, ``finished`` or ``not started yet``, as Lichess marks the round."""
    if rnd.get("ongoing") is True:
        return "ongoing"
    if rnd.get("finished") is True:
        return "finished"
    return "not started yet"


def pick_lichess_round(rounds: object) -> tuple[Mapping[str, Any], str]:
    """The round of a Lichess tournament to follow, and why: the ongoing one (the
    last, if several are), else the first not finished, else the last.

    ``rounds``: the ``rounds`` of ``/api/broadcast/{tourId}``, in order; ValueError
    when there is none or one is malformed."""
    if not isinstance(rounds, list) or not rounds:
        raise ValueError("the tournament lists no rounds")
    checked = []
    for i, r in enumerate(rounds, 1):
        r = _object(r, f"round {i}")
        if not isinstance(r.get("id"), str) or not _LICHESS_ID.fullmatch(r["id"]):
            raise ValueError(f"round {i} has no valid id")
        checked.append(r)
    ongoing = [r for r in checked if r.get("ongoing") is True]
    if ongoing:
        return ongoing[-1], "ongoing"
    waiting = [r for r in checked if r.get("finished") is not True]
    if waiting:
        return waiting[0], "next round, not started yet"
    return checked[-1], "finished, the last round"


@dataclass(frozen=True)
class LccRound:
    """A round as LiveChess Cloud's tournament.json lists it."""

    number: int
    count: int
    live: int


def lcc_rounds(tournament: object) -> list[LccRound]:
    """The rounds of a LiveChess Cloud ``tournament.json`` (ValueError if malformed)."""
    doc = _object(tournament, "tournament.json")
    rounds = doc.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise ValueError("tournament.json lists no rounds")
    out = []
    for n, r in enumerate(rounds[:MAX_ROUNDS], 1):
        r = _object(r, f"tournament.json round {n}")
        count, live = r.get("count", 0), r.get("live", 0)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError(f"tournament.json round {n}: 'count' is not a game count")
        if not isinstance(live, int) or isinstance(live, bool) or live < 0:
            live = 0
        out.append(LccRound(n, count, live))
    return out


def lcc_round_unfinished(index: object) -> bool:
    """True when a round's ``index.json`` has a game without a result."""
    pairings = _object(index, "index.json").get("pairings")
    if not isinstance(pairings, list):
        raise ValueError("index.json has no 'pairings' list")
    return any(not isinstance(p, Mapping) or p.get("result", "*") in ("*", None) for p in pairings)


def pick_lcc_round(
    rounds: Sequence[LccRound], unfinished: Mapping[int, bool] | None = None
) -> tuple[int, str] | None:
    """The round of a LiveChess Cloud tournament to follow, and why: the last one
    with live games, else the first with pairings and a game without a result
    (``unfinished``: round -> whether its index has one), else the last round with
    pairings, else the first (not paired yet). None: ``unfinished`` is needed
    (no live round) and not given."""
    live = [r for r in rounds if r.live > 0]
    if live:
        return live[-1].number, "live"
    paired = [r for r in rounds if r.count > 0]
    if not paired:
        return rounds[0].number, "not paired yet"
    if unfinished is None:
        return None
    for r in paired:
        if unfinished.get(r.number):
            return r.number, "next round, not started yet"
    return paired[-1].number, "finished, the last round"


async def resolve(text: str, ep: Endpoints, lookup: Lookup | None = None) -> Resolved:
    """Name ``text`` and look it up: the feed that follows it (ResolveError if it cannot)."""
    rule, source = classify(text, ep)
    lookup = lookup or HttpLookup()
    try:
        return await _resolve(text, rule, source, ep, lookup)
    except LookupFailed as exc:
        raise ResolveError(text, str(exc)) from None
    except ValueError as exc:
        raise ResolveError(text, str(exc)) from None


async def resolve_all(
    texts: Sequence[str], ep: Endpoints, lookup: Lookup | None = None
) -> list[Resolved]:
    """Every source, looked up together; the first (in order) that fails raises."""
    lookup = lookup or HttpLookup()
    results = await asyncio.gather(*(resolve(t, ep, lookup) for t in texts), return_exceptions=True)
    out = []
    for r in results:
        if isinstance(r, BaseException):
            raise r
        out.append(r)
    return out


async def _resolve(text: str, rule: str, source: Source, ep: Endpoints, lookup: Lookup) -> Resolved:
    if isinstance(source, PgnUrl):
        return Resolved(text, rule, PgnHttpFeedConfig(url=source.url))
    if isinstance(source, PgnPath):
        what = "folder" if source.folder else "file"
        return Resolved(text, rule, FileFeedConfig(path=source.path), state=what)
    if isinstance(source, LichessRound):
        url = f"{ep.lichess}/api/broadcast/{source.tour_slug}/{source.round_slug}/{source.round_id}"
        doc = _object(await lookup.json(url), "the round document")
        rnd = _object(doc.get("round"), "the round document's 'round'")
        tour = doc.get("tour")
        games = doc.get("games")
        return Resolved(
            text,
            rule,
            _lichess_feed(ep, source.round_id),
            event=_name(tour.get("name")) if isinstance(tour, Mapping) else None,
            round=_name(rnd.get("name")),
            state=lichess_round_state(rnd),
            boards=len(games) if isinstance(games, list) else None,
        )
    if isinstance(source, LichessTournament):
        doc = _object(
            await lookup.json(f"{ep.lichess}/api/broadcast/{source.tour_id}"),
            "the tournament document",
        )
        tour = doc.get("tour")
        rnd, why = pick_lichess_round(doc.get("rounds"))
        return Resolved(
            text,
            rule,
            _lichess_feed(ep, str(rnd["id"])),
            event=_name(tour.get("name")) if isinstance(tour, Mapping) else None,
            round=_name(rnd.get("name")),
            state=why,
        )
    return await _resolve_lcc(text, rule, source, ep, lookup)


def _lichess_feed(ep: Endpoints, round_id: str) -> PgnStreamFeedConfig:
    return PgnStreamFeedConfig(
        name=f"lichess:{round_id}",
        url=f"{ep.lichess}/api/stream/broadcast/round/{round_id}.pgn",
    )


async def _resolve_lcc(
    text: str, rule: str, source: LccTournament, ep: Endpoints, lookup: Lookup
) -> Resolved:
    base = (source.base_url or ep.lcc).rstrip("/")
    root = f"{base}/{source.tournament_id}"
    tournament = _object(await lookup.json(f"{root}/tournament.json"), "tournament.json")
    rounds = lcc_rounds(tournament)
    indexes: dict[int, Any] = {}
    picked: tuple[int, str] | None
    if source.round is not None:
        if not 1 <= source.round <= len(rounds):
            raise ValueError(f"round {source.round}: the tournament lists {len(rounds)} rounds")
        picked = (source.round, "as asked")
    else:
        picked = pick_lcc_round(rounds)
        if picked is None:
            paired = [r.number for r in rounds if r.count > 0]
            gate = asyncio.Semaphore(LOOKUP_CONCURRENCY)

            async def index(n: int) -> Any:
                async with gate:
                    try:
                        return await lookup.json(f"{root}/round-{n}/index.json")
                    except LookupFailed:
                        return None  # not published (yet): not a round to follow now

            docs = await asyncio.gather(*(index(n) for n in paired))
            indexes = {n: d for n, d in zip(paired, docs, strict=True) if d is not None}
            unfinished = {}
            for n, d in indexes.items():
                try:
                    unfinished[n] = lcc_round_unfinished(d)
                except ValueError:
                    unfinished[n] = False
            picked = pick_lcc_round(rounds, unfinished)
    assert picked is not None
    number, why = picked
    boards: int | None = None
    if why != "not paired yet":
        doc = indexes.get(number)
        if doc is None:
            doc = await lookup.json(f"{root}/round-{number}/index.json")
        pairings = _object(doc, f"round {number} index.json").get("pairings")
        if not isinstance(pairings, list):
            raise ValueError(f"round {number} index.json has no 'pairings' list")
        boards = len(pairings)
    return Resolved(
        text,
        rule,
        LccFeedConfig(
            name=f"lcc:{source.tournament_id}:{number}",
            base_url=base,
            tournament_id=source.tournament_id,
            rounds=[number],
        ),
        event=_name(tournament.get("name")),
        round=f"Round {number}",
        state=why,
        boards=boards,
    )
