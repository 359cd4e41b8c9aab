"""What a source typed on the command line is, and the feed that follows it.

``livegain watch SOURCE...`` (docs/watch.md) takes what a user has at hand
for a real event and finds the feed behind it:

* ``lichess-round``: a Lichess broadcast round URL
  (``https://lichess.org/broadcast/TOUR/ROUND/ROUNDID``, a game's page below
  it, the round's API, PGN or stream URL): a ``lichess`` feed of its
  tournament, every round (:mod:`livegain.feeds.lichess`);
* ``lichess-tournament``: a Lichess broadcast tournament URL
  (``https://lichess.org/broadcast/TOUR/TOURID``): a ``lichess`` feed of it;
* ``lcc-url``: a LiveChess Cloud viewer URL (``view.livechesscloud.com/#ID``,
  ``/ROUND`` after it names a round) or a pool document's URL
  (``.../get/ID/tournament.json``, ``.../get/ID/round-N/...``): an ``lcc``
  feed of the tournament, every round;
* ``pgn-url``: any other ``http(s)://`` URL: a ``pgn-http`` feed, polled;
* ``pgn-path``: an existing local PGN file or folder: a ``file`` feed;
* ``lcc-id``: a bare LiveChess Cloud tournament id (a UUID, ``/ROUND`` after it
  names a round): an ``lcc`` feed of the tournament, every round.

Each rule is a pure function of the text (and of the :class:`Endpoints`:
where Lichess and LiveChess Cloud are), None when it does not apply; the
first that applies names the source (:func:`classify`). A Lichess or LCC
source is then looked up (:func:`resolve`, the only I/O here: one GET per
document through :class:`HttpLookup`) for its event, its current round, its
format and scoring (the ``[[events]]`` entry its standings get,
:func:`standings_entry`). ``pin`` (``watch --round``) follows one round only.

* Lichess: ``GET {lichess}/api/broadcast/{tourId}`` (and, for a round URL,
  the round's document first, for its tournament's id); the current round is
  :func:`livegain.feeds.lichess.pick_round`'s; the format is the
  tournament's ``info.format``, else counted from the first round's games;
  the scoring its rounds' ``customScoring``;
* LiveChess Cloud: the tournament's host is asked of LiveChess Cloud's lookup
  (``{lookup}/{id}``, as its viewer does) unless a pool is given;
  ``{pool}/{id}/tournament.json`` lists the rounds; the current one is the
  last round with live games, else the first with pairings whose
  ``round-N/index.json`` has a game without a result, else the last round
  with pairings (:func:`pick_lcc_round`); a round not paired yet is waited
  for; the format is counted from the rounds and the games per round.

Every looked-up document is untrusted: a missing or malformed value is an
error naming the source and what was wrong (:class:`ResolveError`), never a
traceback; JSON is read within bounds (:mod:`livegain.feeds.json_bounds`).
The addresses of Lichess and LiveChess Cloud can be changed
(:class:`Endpoints`: options or ``LIVEGAIN_LICHESS_URL``,
``LIVEGAIN_LCC_URL`` and ``LIVEGAIN_LCC_LOOKUP_URL``), which is how the tests
run against local fakes.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import SplitResult, urlsplit

from livegain.core.errors import LivegainError
from livegain.core.event_format import (
    EventFormat,
    format_from_counts,
    format_from_round_names,
    format_from_text,
)
from livegain.core.scoring import Scoring
from livegain.feeds.base import (
    FeedConfig,
    FileFeedConfig,
    LccFeedConfig,
    LichessFeedConfig,
    PgnHttpFeedConfig,
    PgnStreamFeedConfig,
)
from livegain.feeds.hosts import host_of
from livegain.feeds.json_bounds import loads_bounded
from livegain.feeds.lcc_json import text_value
from livegain.feeds.lichess import (
    BroadcastRound,
    clean_name,
    pick_round,
    read_rounds,
    scoring_of,
)

LICHESS_URL = "https://lichess.org"
LCC_URL = "https://1.pool.livechesscloud.com/get"
LCC_LOOKUP_URL = "https://lookup.livechesscloud.com/meta"
LICHESS_URL_ENV = "LIVEGAIN_LICHESS_URL"
LCC_URL_ENV = "LIVEGAIN_LCC_URL"
LCC_LOOKUP_URL_ENV = "LIVEGAIN_LCC_LOOKUP_URL"
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

_LICHESS_ID = re.compile(r"[A-Za-z0-9]{8}")
_LCC_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_LCC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_LCC_ROUND = re.compile(r"round-([0-9]{1,4})")
_ROUND_NUMBER = re.compile(r"[0-9]{1,4}")  # ``{id}/{N}``: N in ASCII digits, as in round-N
# /broadcast/{these}/...: Lichess pages, not tournaments
_LICHESS_PAGES = frozenset({"by", "calendar", "help", "my-rounds", "new", "official", "top"})

KINDS = (
    "a Lichess broadcast round or tournament URL, a LiveChess Cloud tournament id or URL, "
    "a PGN URL, or an existing PGN file or folder"
)


class ResolveError(LivegainError, ValueError):
    """A source that cannot be followed: the message names it and says why."""

    def __init__(self, source: str, why: str) -> None:
        shown = source if len(source) <= 200 else source[:197] + "..."  # a line, not a page
        super().__init__(f"{shown}: {why}")
        self.source = source
        self.why = why


@dataclass(frozen=True)
class Endpoints:
    """Where the lookups go: Lichess's site, LiveChess Cloud's pool (up to
    ``/get``) and LiveChess Cloud's lookup of a tournament's host (``lcc_lookup``,
    up to ``/meta``; None: the pool is used as it is)."""

    lichess: str = LICHESS_URL
    lcc: str = LCC_URL
    lcc_lookup: str | None = None

    @classmethod
    def chosen(
        cls,
        lichess: str | None = None,
        lcc: str | None = None,
        environ: Mapping[str, str] | None = None,
        lcc_lookup: str | None = None,
    ) -> Endpoints:
        """The options given, else the environment's ``LIVEGAIN_LICHESS_URL``,
        ``LIVEGAIN_LCC_URL`` and ``LIVEGAIN_LCC_LOOKUP_URL``, else the real
        services; checked (ResolveError). A LiveChess Cloud pool given (option or
        environment) is used as it is; otherwise each tournament's host is asked
        of LiveChess Cloud's lookup, as its own viewer does."""
        env = os.environ if environ is None else environ
        pool = lcc or env.get(LCC_URL_ENV)
        ask = lcc_lookup or env.get(LCC_LOOKUP_URL_ENV) or (None if pool else LCC_LOOKUP_URL)
        out = cls(
            lichess=(lichess or env.get(LICHESS_URL_ENV) or LICHESS_URL).rstrip("/"),
            lcc=(pool or LCC_URL).rstrip("/"),
            lcc_lookup=ask.rstrip("/") if ask else None,
        )
        checked = [("Lichess", out.lichess), ("LiveChess Cloud", out.lcc)]
        if out.lcc_lookup is not None:
            checked.append(("LiveChess Cloud lookup", out.lcc_lookup))
        for name, url in checked:
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
        if _LCC_ID.fullmatch(tid) and (rnd == "" or _ROUND_NUMBER.fullmatch(rnd)):
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
    if _LCC_UUID.fullmatch(tid) and (rnd == "" or _ROUND_NUMBER.fullmatch(rnd)):
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
    """A lookup that did not give a JSON document: the message says why;
    ``status`` is the HTTP status when the host answered one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class HttpLookup:
    """:class:`Lookup` over HTTP (the feeds' client: one deadline, a size cap),
    through each host's etiquette (:mod:`livegain.feeds.hosts`: one request at
    a time on Lichess, Retry-After obeyed), the JSON read within bounds
    (:mod:`livegain.feeds.json_bounds`)."""

    def __init__(self, timeout: float = LOOKUP_TIMEOUT, max_bytes: int = LOOKUP_MAX_BYTES) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes

    async def json(self, url: str) -> Any:
        from livegain.feeds._http import HttpError, http_get

        host = host_of(url)
        try:
            async with host.slot():
                resp = await http_get(
                    url,
                    headers={"Accept": "application/json"},
                    timeout=self.timeout,
                    max_body=self.max_bytes,
                )
        except HttpError as exc:
            raise LookupFailed(f"{url}: {exc}") from None
        wait = host.answered(resp.status, resp.headers)
        if resp.status != 200:
            asks = f" (the host asks to wait {wait:g} s)" if wait is not None else ""
            raise LookupFailed(f"{url}: HTTP {resp.status} {resp.reason}{asks}", resp.status)
        try:
            return loads_bounded(resp.body)
        except ValueError as exc:
            raise LookupFailed(f"{url}: {exc}") from None


@dataclass(frozen=True)
class Resolved:
    """A source, the rule that named it, the feed that follows it and what the
    lookups said of it: the event, the round followed now and why, its boards,
    the event's standings entry read from the source (``standings``: an
    ``[[events]]`` entry, None when the source says nothing of its event)."""

    source: str
    rule: str
    feed: FeedConfig
    event: str | None = None
    round: str | None = None
    state: str | None = None
    boards: int | None = None
    standings: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for people: what is followed, and from where."""
        what = ", ".join(x for x in (self.event, self.round) if x)
        notes = [x for x in (self.state,) if x]
        if self.boards is not None:
            notes.append(f"{self.boards} board{'s' if self.boards != 1 else ''}")
        if notes:
            what = f"{what} ({', '.join(notes)})" if what else f"({', '.join(notes)})"
        line = f"{self.rule} {what + ': ' if what else ''}{_where(self.feed)}"
        return "; ".join([line, *self.notes])


def _where(feed: FeedConfig) -> str:
    if isinstance(feed, LichessFeedConfig):
        if feed.round is not None:
            return f"round {feed.round} only, from {feed.url}/api/broadcast/{feed.tournament}"
        return f"every round, from {feed.url}/api/broadcast/{feed.tournament}"
    if isinstance(feed, PgnStreamFeedConfig):
        return f"streamed from {feed.url}"
    if isinstance(feed, PgnHttpFeedConfig):
        return f"polled from {feed.url}"
    if isinstance(feed, LccFeedConfig):
        which = (
            "every round"
            if feed.rounds is None
            else "round " + ", ".join(str(r) for r in feed.rounds)
        )
        return f"{which}, polled from {feed.base_url}/{feed.tournament_id}"
    if isinstance(feed, FileFeedConfig):
        return f"watching {feed.path}"
    return feed.type  # pragma: no cover


def _object(doc: object, what: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise ValueError(f"{what} is not a JSON object")
    return doc


def standings_entry(
    event: str | None,
    fmt: EventFormat | None,
    scoring: Mapping[str, Any] | None,
    rounds: int | None = None,
) -> dict[str, Any] | None:
    """The ``[[events]]`` entry the source gives its event: its name, its format
    (a round robin, a knockout or a Swiss; anything else, or a format the source
    does not tell, is counted as a Swiss), the number of rounds the source lists (a
    Swiss's odds are simulated to its last round) and its custom scoring.
    None without an event name."""
    if event is None:
        return None
    entry: dict[str, Any] = {"name": event, "format": "swiss", "format_why": format_note(fmt)}
    if fmt is not None and fmt.format == "round-robin":
        entry.update(format="round-robin", cycles=fmt.cycles)
    elif fmt is not None and fmt.format == "knockout":
        entry["format"] = "knockout"
    elif rounds is not None and rounds > 0:
        entry["rounds"] = rounds
    if scoring is not None:
        entry["scoring"] = dict(scoring)
    return entry


def format_note(fmt: EventFormat | None) -> str:
    """What the source said of its format, for people."""
    if fmt is None:
        return "format: not told by the source, counted as a Swiss"
    teams = " of teams" if fmt.teams else ""
    return f"format: {fmt.format}{teams} ({fmt.why})"


#: ``--round``: None, follow the event; True, only the round the source names
#: (else the current one); N, only round N of the tournament.
Pin = bool | int | None


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
    """The current round of a LiveChess Cloud tournament, and why: the last one
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


def lcc_host(meta: object) -> str:
    """The host a LiveChess Cloud lookup (``/meta/{id}``) names (ValueError if none)."""
    doc = _object(meta, "the LiveChess Cloud lookup")
    host = doc.get("host")
    if not isinstance(host, str) or not _LCC_HOST.fullmatch(host):
        raise ValueError("the LiveChess Cloud lookup names no valid host")
    fmt = doc.get("format", "1")
    if fmt not in ("1", 1):
        raise ValueError(f"the tournament's layout is format {fmt!r}; only format 1 is read")
    return host


_LCC_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?")


async def resolve(
    text: str, ep: Endpoints, lookup: Lookup | None = None, pin: Pin = None
) -> Resolved:
    """Name ``text`` and look it up: the feed that follows it (ResolveError if it cannot)."""
    rule, source = classify(text, ep)
    lookup = lookup or HttpLookup()
    try:
        return await _resolve(text, rule, source, ep, lookup, pin)
    except LookupFailed as exc:
        raise ResolveError(text, str(exc)) from None
    except ValueError as exc:
        raise ResolveError(text, str(exc)) from None


async def resolve_all(
    texts: Sequence[str], ep: Endpoints, lookup: Lookup | None = None, pin: Pin = None
) -> list[Resolved]:
    """Every source, looked up together (one request at a time per host that
    asks for it); the first (in order) that fails raises."""
    lookup = lookup or HttpLookup()
    results = await asyncio.gather(
        *(resolve(t, ep, lookup, pin) for t in texts), return_exceptions=True
    )
    out = []
    for r in results:
        if isinstance(r, BaseException):
            raise r
        out.append(r)
    return out


async def _resolve(
    text: str, rule: str, source: Source, ep: Endpoints, lookup: Lookup, pin: Pin
) -> Resolved:
    if isinstance(source, PgnUrl):
        return Resolved(text, rule, PgnHttpFeedConfig(url=source.url))
    if isinstance(source, PgnPath):
        what = "folder" if source.folder else "file"
        return Resolved(text, rule, FileFeedConfig(path=source.path), state=what)
    if isinstance(source, LichessRound | LichessTournament):
        return await _resolve_lichess(text, rule, source, ep, lookup, pin)
    return await _resolve_lcc(text, rule, source, ep, lookup, pin)


def _lichess_404(exc: LookupFailed) -> LookupFailed:
    if exc.status == 404:
        return LookupFailed(f"{exc} (no such broadcast, or a private one)", 404)
    return exc


async def _resolve_lichess(
    text: str,
    rule: str,
    source: LichessRound | LichessTournament,
    ep: Endpoints,
    lookup: Lookup,
    pin: Pin,
) -> Resolved:
    named: str | None = None
    games: int | None = None
    try:
        if isinstance(source, LichessRound):
            url = (
                f"{ep.lichess}/api/broadcast/{source.tour_slug}/{source.round_slug}/"
                f"{source.round_id}"
            )
            doc = _object(await lookup.json(url), "the round document")
            tour_id = _object(doc.get("tour"), "the round document's 'tour'").get("id")
            if not isinstance(tour_id, str) or not _LICHESS_ID.fullmatch(tour_id):
                raise ValueError("the round document names no valid tournament id")
            named = source.round_id
            listed = doc.get("games")
            games = len(listed) if isinstance(listed, list) else None
        else:
            tour_id = source.tour_id
        tdoc = _object(
            await lookup.json(f"{ep.lichess}/api/broadcast/{tour_id}"), "the tournament document"
        )
    except LookupFailed as exc:
        raise _lichess_404(exc) from None
    found = tdoc.get("tour")
    tour: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    rounds = read_rounds(tdoc.get("rounds"))
    pinned: str | None = None
    if pin is True:
        pinned = named or (pick_round(rounds)[0] or rounds[-1]).id
    elif isinstance(pin, int) and pin is not False:
        if not 1 <= pin <= len(rounds):
            raise ValueError(f"round {pin}: the tournament lists {len(rounds)} rounds")
        pinned = rounds[pin - 1].id
    chosen, _why = pick_round(rounds, pinned)
    if pinned is not None:
        chosen = next(r for r in rounds if r.id == pinned)
        why = "pinned"
    elif chosen is None:
        why = "every round finished"
    else:
        why = "ongoing" if chosen.state == "ongoing" else "next round, not started yet"
    event = clean_name(tour.get("name"))
    info = tour.get("info")
    fmt = format_from_text(info.get("format") if isinstance(info, Mapping) else None)
    if fmt is None:
        fmt = format_from_round_names(r.name for r in rounds)
    if fmt is None:
        fmt = await _lichess_counted_format(ep, lookup, rounds)
    feed = LichessFeedConfig(
        name=f"lichess:{tour_id}", url=ep.lichess, tournament=tour_id, round=pinned
    )
    shown = chosen if chosen is not None else rounds[-1]
    notes = [format_note(fmt)]
    scoring = scoring_of(rounds)
    if scoring is not None:
        try:
            notes.append(f"scoring: {Scoring.from_lichess(scoring).label()}")
        except ValueError as exc:
            notes.append(f"scoring not read ({exc}): counted as 1, 1/2, 0")
            scoring = None
    return Resolved(
        text,
        rule,
        feed,
        event=event,
        round=shown.name,
        state=why,
        boards=games if named is not None and named == shown.id else None,
        standings=standings_entry(event, fmt, scoring, len(rounds)),
        notes=tuple(notes),
    )


async def _lichess_counted_format(
    ep: Endpoints, lookup: Lookup, rounds: Sequence[BroadcastRound]
) -> EventFormat | None:
    """The format the rounds and the first round's players point to (one lookup
    of the first round's document), when the tournament does not say it."""
    try:
        doc = await lookup.json(f"{ep.lichess}/api/broadcast/-/-/{rounds[0].id}")
    except LookupFailed:
        return None
    games = doc.get("games") if isinstance(doc, Mapping) else None
    if not isinstance(games, list) or not games:
        return None
    return format_from_counts(len(rounds), 2 * len(games))


async def _lcc_base(source: LccTournament, ep: Endpoints, lookup: Lookup) -> tuple[str, str]:
    """Where the tournament's documents are (up to ``/get``), and how it was found."""
    if source.base_url is not None:
        return source.base_url.rstrip("/"), "pool: as given"
    if ep.lcc_lookup is None:
        return ep.lcc, "pool: as configured"
    url = f"{ep.lcc_lookup}/{source.tournament_id}"
    try:
        host = lcc_host(await lookup.json(url))
    except LookupFailed as exc:
        if exc.status == 404:
            raise ValueError(
                f"LiveChess Cloud knows no tournament {source.tournament_id}"
            ) from None
        return ep.lcc, f"pool: {ep.lcc} (the lookup failed: {exc})"
    scheme = urlsplit(ep.lcc_lookup).scheme
    return f"{scheme}://{host}/get", f"pool: {host}, from LiveChess Cloud's lookup"


async def _resolve_lcc(
    text: str, rule: str, source: LccTournament, ep: Endpoints, lookup: Lookup, pin: Pin
) -> Resolved:
    base, where = await _lcc_base(source, ep, lookup)
    root = f"{base}/{source.tournament_id}"
    tournament = _object(await lookup.json(f"{root}/tournament.json"), "tournament.json")
    rounds = lcc_rounds(tournament)
    asked = pin if isinstance(pin, int) and not isinstance(pin, bool) else source.round
    if asked is not None and not 1 <= asked <= len(rounds):
        raise ValueError(f"round {asked}: the tournament lists {len(rounds)} rounds")
    indexes: dict[int, Any] = {}
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
    pinned: int | None = None
    if pin is True or (isinstance(pin, int) and not isinstance(pin, bool)):
        pinned = asked if asked is not None else number
        number, why = pinned, "pinned"
    boards: int | None = None
    if why != "not paired yet":
        doc = indexes.get(number)
        if doc is None:
            try:
                doc = await lookup.json(f"{root}/round-{number}/index.json")
            except LookupFailed as exc:
                if exc.status != 404:
                    raise
                why = f"{why}; not paired yet, waited for"
        if doc is not None:
            pairings = _object(doc, f"round {number} index.json").get("pairings")
            if not isinstance(pairings, list):
                raise ValueError(f"round {number} index.json has no 'pairings' list")
            boards = len(pairings)
    event = text_value(tournament.get("name"))
    players = 2 * max((r.count for r in rounds), default=0)
    fmt = format_from_counts(len(rounds), players)
    return Resolved(
        text,
        rule,
        LccFeedConfig(
            name=f"lcc:{source.tournament_id}",
            base_url=base,
            tournament_id=source.tournament_id,
            rounds=[pinned] if pinned is not None else None,
        ),
        event=clean_name(event),
        round=f"Round {number}",
        state=why,
        boards=boards,
        standings=standings_entry(event, fmt, None, len(rounds)),
        notes=(where, format_note(fmt)),
    )
