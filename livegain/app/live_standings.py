"""Live standings and tournament-win odds per event, for the running service.

The service calls :meth:`LiveStandings.touch` with a board's id whenever it
publishes the board (or removes it). What the standings depend on is read
from the board at once (:func:`livegain.core.event_table.entry_of`: players,
round, result, whether it started, the live W/D/L); when that changed, the
board's event is marked for a new computation. Each event has its own task:

- at most one computation every ``interval`` seconds (2 s by default) per
  event, however often its boards change;
- all events' computations together take at most ``share`` of one core
  (a quarter by default) over time: each waits for its turn in the child
  (:meth:`livegain.app.offload.Offload.turn`, first come first served),
  which comes once the last computation's CPU time has been rested for in
  that proportion. A round of a 190-team Olympiad section simulated to its
  last round takes seconds (bench/olympiad.py ``--teams``): unbounded, it
  took the cores the engines and the viewers need. The event's boards are
  read when its turn comes;
- the computation (:func:`livegain.core.event_table.event_table`, 100,000
  simulations in about 0.2 s for a 14-player round robin) runs in a child
  process (:mod:`livegain.app.offload`), off the event loop and its
  interpreter lock, on the boards as
  they stood when it started; changes that arrive meanwhile mark the event
  again, so the next computation (``interval`` seconds after the start of this
  one) takes them: the latest state always wins, and results are published in
  the order they were computed;
- a result equal to the last one published (but for its ``version`` and
  move count) is not sent again.

Events are the boards' ``tournament`` (the PGN ``Event`` tag); an
``[[events]]`` entry of the configuration (matched by name, ignoring case and
spaces) gives the format, tie-breaks, play-off rule, pairings and the points
carried in; an event without one gets standings without odds. Boards without
an event name are not part of any standings.

A knockout (configured, or shown by its boards' Round tags) gets a
``knockout`` part (:mod:`livegain.core.knockout_table`): its mini-matches
stage by stage and its bracket, each stage's games not started from the
ratings-only model of its kind of game (the boards' and the event's models at
hand, :func:`_priors`).

Games not started are simulated with the ratings-only layer of the human
W/D/L model (``prior(event)``: the event's kind of game, as the service
chooses it; else the one of its boards' model), the same model the boards'
live chances start from. Each row carries the player's ``perceived`` rating
and ``form`` over his games of the event, and his line of the player table
(:mod:`livegain.core.players`: performance, FIDE rating change with the K
his configured facts give, accuracy over the event).

Each new ``standings`` message goes to ``publish(event, data)``: the service
hands it to its WebSocket server (``/api/standings``, ``subscribe_standings``)
and its MQTT publisher. A message's ``version`` grows with each message of
its event, across restarts too: the service hands :meth:`LiveStandings.resume`
the messages viewers had (and the delay held) before the stop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from livegain.app.offload import Offload
from livegain.core.board.board import BoardGame
from livegain.core.event_table import (
    EventRules,
    EventTable,
    GameEntry,
    TableRow,
    entry_of,
    event_table,
)
from livegain.core.human_wdl import RatingsPrior
from livegain.core.knockout_table import KnockoutTable, knockout_table
from livegain.core.perceived import CalibratedRating
from livegain.core.players import PlayerFacts, PlayerLine, player_table, resolve_facts
from livegain.core.snapshot import PlayerInfo
from livegain.core.team_table import TeamTable, team_table
from livegain.feeds.json_bounds import loads_bounded
from livegain.publish import convert, schema

if TYPE_CHECKING:
    from livegain.config import EventConfig

log = structlog.get_logger("livegain.standings")

INTERVAL = 2.0
"""Seconds between two computations of one event, at least."""
SHARE = 0.25
"""The share of one core all events' computations may take over time."""


def event_key(name: str) -> str:
    """How event names are compared: case and runs of spaces ignored."""
    return " ".join(name.split()).casefold()


def event_of(game: BoardGame) -> str | None:
    """The board's event name, or None when it has none."""
    name = (game.event or "").strip()
    return name if name and name != "?" else None


def _rated(row: TableRow, c: CalibratedRating | None) -> schema.Perceived | None:
    m = row.model
    if m is None or c is None:
        return None
    ranged = (m.rating_low, m.rating_high)
    rating_range = None if ranged[0] is None or ranged[1] is None else (ranged[0], ranged[1])
    return convert.perceived(c, rating_range, m.scale, row.label)


def _tenth(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def standings_message(
    table: EventTable,
    version: int,
    players: Mapping[str, PlayerLine] | None = None,
    teams: TeamTable | None = None,
    knockout: KnockoutTable | None = None,
) -> schema.Standings:
    """The wire message of a computed table, each row with its player's line
    (:mod:`livegain.core.players`) when ``players`` has it, and a team
    event's table (:mod:`livegain.core.team_table`) when ``teams`` is one, and
    a knockout's (:mod:`livegain.core.knockout_table`) when ``knockout`` is one."""
    lines = players or {}
    return schema.Standings(
        event=table.event,
        format=table.format,
        round=table.round,
        rounds=table.rounds,
        top_k=table.top_k,
        tiebreaks=list(table.tiebreaks),
        playoff=table.playoff,
        rows=[
            schema.StandingsRow(
                rank=r.rank,
                key=r.key,
                name=r.name,
                title=r.title,
                federation=r.federation,
                rating=r.rating,
                fide_id=r.fide_id,
                points=r.points,
                games=r.games,
                tiebreaks=dict(r.tiebreaks),
                win=r.win,
                win_se=r.win_se,
                top=r.top,
                top_se=r.top_se,
                live=r.live,
                perceived=_rated(r, r.perceived),
                form=_rated(r, r.form),
                **_player_fields(lines.get(r.key)),
            )
            for r in table.rows
        ],
        sims=table.sims,
        version=version,
        plies=table.plies,
        finished=table.finished,
        live=table.live,
        upcoming=table.upcoming,
        note=table.note,
        teams=teams_message(teams) if teams is not None else None,
        knockout=knockout_message(knockout) if knockout is not None else None,
    )


def _per_mille(wdl: tuple[float, float, float] | None) -> list[float] | None:
    return None if wdl is None else [round(1000.0 * x, 1) for x in wdl]


def knockout_message(k: KnockoutTable) -> schema.Knockout:
    """A knockout's mini-matches and bracket on the wire (chances to 4 decimals)."""
    return schema.Knockout(
        round=k.round,
        rounds=list(k.bracket.rounds),
        matches=[
            schema.KnockoutMatch(
                round=m.round,
                a=m.a_name,
                b=m.b_name,
                a_key=m.a,
                b_key=m.b,
                a_rating=m.a_rating,
                b_rating=m.b_rating,
                stage=m.stage,
                stages=[
                    schema.KnockoutStage(
                        name=s.name,
                        games=s.games,
                        played=s.played,
                        score_a=s.score_a,
                        score_b=s.score_b,
                    )
                    for s in m.stages
                ],
                games=[
                    schema.KnockoutGame(
                        game=g.game,
                        stage=g.stage,
                        white=g.white,
                        black=g.black,
                        a_white=g.a_white,
                        result=g.result,
                        wdl=_per_mille(g.wdl),
                        live=g.live,
                        on_board=g.on_board,
                    )
                    for g in sorted(m.games, key=lambda g: g.game)
                ],
                through_a=round(m.through_a, 4),
                through_b=round(m.through_b, 4),
                reach=[schema.StageChance(stage=s, p=round(p, 4)) for s, p in m.reach],
                winner=None if m.winner is None else k.names.get(m.winner, m.winner),
                live=m.live,
                note=m.note,
            )
            for m in k.current
        ],
        bracket=[
            schema.BracketRow(
                key=r.player,
                name=k.names.get(r.player, r.player),
                rating=k.ratings.get(r.player),
                round=r.round,
                reach=[schema.RoundChance(round=n, p=round(p, 4)) for n, p in r.reach],
                win=round(r.win, 4),
            )
            for r in k.bracket.rows
        ],
        order=k.bracket.order,
        order_why=k.bracket.why,
        why=k.why,
        note=" ".join(k.notes) or None,
    )


def _team_chances(t: TeamTable, team: str) -> dict[str, float | None]:
    c = None if t.odds is None else t.odds.get(team)
    if c is None:
        return {}
    return {"win": c.p_first, "win_se": c.se_first, "top": c.p_top, "top_se": c.se_top}


def teams_message(t: TeamTable) -> schema.Teams:
    """A team event's table on the wire."""
    st = t.standings
    return schema.Teams(
        tiebreaks=list(st.tiebreaks),
        primary="GP" if st.primary == "GP" else "MP",
        rows=[
            schema.TeamRow(
                rank=r.rank,
                team=r.team,
                match_points=r.match_points,
                game_points=r.game_points,
                matches=r.matches,
                won=r.won,
                drawn=r.drawn,
                lost=r.lost,
                tiebreaks={n: round(v, 3) for n, v in zip(st.tiebreaks, r.tiebreaks, strict=True)},
                **_team_chances(t, r.team),
            )
            for r in st.rows
        ],
        round=t.round,
        matches=[
            schema.TeamMatch(
                round=m.round,
                a=m.a,
                b=m.b,
                score_a=m.odds.score_a,
                score_b=m.odds.score_b,
                boards_left=m.odds.boards_left,
                win=round(m.odds.win, 4),
                draw=round(m.odds.draw, 4),
                loss=round(m.odds.loss, 4),
                expected_a=round(m.odds.expected_a, 3),
                boards=[
                    schema.TeamBoard(
                        board=b.board,
                        white=b.white,
                        black=b.black,
                        a_white=b.a_white,
                        result=b.result,
                        wdl=_per_mille(b.wdl),
                        live=b.live,
                    )
                    for b in m.boards
                ],
            )
            for m in t.matches
        ],
        why=t.why,
        sims=t.sims,
        top_k=t.top_k,
        rounds=t.rounds,
        note=t.note,
    )


def _player_fields(line: PlayerLine | None) -> dict[str, Any]:
    if line is None:
        return {}
    return {
        "rated_games": line.rated_games,
        "performance": _tenth(line.performance),
        "rating_change": _tenth(line.rating_change),
        "k": line.k,
        "accuracy": convert.accuracy(line.accuracy),
    }


@dataclass(frozen=True)
class StandingsJob:
    """What one computation of an event's standings needs (sent to the child
    process: everything in it pickles)."""

    owner: str
    """Which :class:`LiveStandings` asks (its last messages are its own)."""
    event: str
    rules: EventRules
    facts: Mapping[str, PlayerFacts]
    prior: RatingsPrior | None
    version: int
    """The version the new message gets."""
    games: list[GameEntry]
    year: int | None = None


_LAST: dict[tuple[str, str], schema.Standings] = {}
"""The last message computed per (owner, event), in the process that computes."""


def compute_standings(job: StandingsJob) -> bytes | None:
    """The bytes of the event's new ``standings`` message, or None when a
    viewer would see nothing new since the last one computed for the same
    owner and event (its version and move count aside). Runs in the
    :class:`~livegain.app.offload.Offload` child process."""
    teams = team_table(job.games, prior=job.prior, draw_rate=job.rules.draw_rate, rules=job.rules)
    table = event_table(job.event, job.games, job.rules, job.prior, teams=teams is not None)
    players = event_players(table, job.games, job.facts, job.year)
    knockout = knockout_table(
        job.games,
        job.rules,
        priors=_priors(job),
        prior=job.prior,
    )
    msg = standings_message(table, job.version, players, teams, knockout)
    key = (job.owner, job.event)
    last = _LAST.get(key)
    same = {"version": msg.version, "plies": msg.plies}
    if last is not None and msg == last.model_copy(update=same):
        return None
    _LAST[key] = msg
    return msg.model_dump_json().encode()


def _priors(job: StandingsJob) -> dict[str, RatingsPrior]:
    """The ratings-only W/D/L models at hand, by kind of game: the boards'
    human models' and the event's (which wins for its kind)."""
    found = {g.prior.kind: g.prior for g in job.games if g.prior is not None}
    if job.prior is not None:
        found[job.prior.kind] = job.prior
    return found


def version_of(data: bytes) -> int:
    """The ``version`` of a serialised ``standings`` message (ValueError if
    it is not one)."""
    try:
        msg = loads_bounded(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a standings message: {exc}") from exc
    if not isinstance(msg, dict) or msg.get("type") != "standings":
        raise ValueError("not a standings message")
    version = msg.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError(f"standings message with version {version!r}")
    return version


@dataclass
class _Event:
    name: str
    rules: EventRules
    facts: Mapping[str, PlayerFacts] = field(default_factory=dict)
    """Configured players' facts, by the name given (:class:`PlayerFacts`)."""
    prior: RatingsPrior | None = None
    dirty: asyncio.Event = field(default_factory=asyncio.Event)
    version: int = 0
    computations: int = 0
    seconds: float = 0.0
    """Duration of the last computation (in the child process)."""
    stale: set[str] = field(default_factory=set)
    """Boards published since the event last read them."""
    forced: bool = False
    """A board left the event: compute again whatever the others say."""


def event_players(
    table: EventTable,
    games: Sequence[GameEntry],
    facts: Mapping[str, PlayerFacts] | None = None,
    year: int | None = None,
) -> dict[str, PlayerLine]:
    """The player table (:func:`livegain.core.players.player_table`) of the
    standings rows' players; ``facts`` by configured name."""
    info = {r.key: PlayerInfo(r.name, fide_id=r.fide_id) for r in table.rows}
    by_key = resolve_facts(facts or {}, info)
    return player_table(games, {r.key: r.rating for r in table.rows}, by_key, year)


@dataclass
class StandingsStats:
    computations: int = 0
    published: int = 0
    failures: int = 0


class LiveStandings:
    """Standings and odds of every event on the boards; see the module docstring.

    ``publish(event, data)`` sends a new serialised ``standings`` message;
    ``boards``: the boards followed (id -> game, read as they change; none
    until :meth:`follow` names them: the service's exist once it has
    started); ``prior(event)`` the ratings-only W/D/L model of the event's
    games not started (None: the one of its boards' human model, else the
    draw rate).
    """

    def __init__(
        self,
        events: Sequence[EventConfig],
        publish: Callable[[str, bytes], None],
        *,
        boards: Mapping[str, BoardGame] | None = None,
        interval: float = INTERVAL,
        share: float = SHARE,
        prior: Callable[[str], RatingsPrior | None] | None = None,
    ) -> None:
        self._configured: dict[str, tuple[str, EventRules, dict[str, PlayerFacts]]] = {
            event_key(e.name): (e.name, e.rules(), e.player_facts()) for e in events
        }
        self._format_why: dict[str, str] = {
            event_key(e.name): e.format_why or "as configured ([[events]])" for e in events
        }
        self._boards: Mapping[str, BoardGame] = boards if boards is not None else {}
        self._publish = publish
        self._prior = prior
        self.interval = interval
        self.stats = StandingsStats()
        self._events: dict[str, _Event] = {}  # by event name as the boards carry it
        self._of_board: dict[str, str] = {}  # board id -> event name
        self._seen: dict[str, GameEntry] = {}  # board id -> what the table last read of it
        self._entries: dict[str, GameEntry] = {}  # board id -> its entry now (moves counted)
        self._tg: asyncio.TaskGroup | None = None
        self._waiting: list[_Event] = []  # events known before run() started
        self._owner = uuid.uuid4().hex
        self._resumed: dict[str, int] = {}  # event -> the last version before a restart
        # Computed in a child process: a thread would hold the loop's GIL.
        self.offload = Offload(preload=("livegain.app.live_standings",), share=share)

    # ------------------------------------------------------------ changes

    def follow(self, boards: Mapping[str, BoardGame]) -> None:
        """Follow ``boards`` (the service's game state, once it exists)."""
        self._boards = boards

    def resume(self, event: str, data: bytes) -> None:
        """``data``, a ``standings`` message of ``event``, went out (or was
        held by the delay) before a restart: the event's next message gets a
        higher ``version``. ValueError if ``data`` is not a standings message."""
        version = version_of(data)
        if version > self._resumed.get(event, 0):
            self._resumed[event] = version
        ev = self._events.get(event)
        if ev is not None:
            ev.version = max(ev.version, version)

    def touch(self, board_id: str) -> None:
        """The board changed (or was removed): its event looks at it again on
        its next turn (at most every ``interval`` s). Cheap (a dictionary and a
        set): call it on every publication. Whether what the standings read of
        the board changed is found out then, once per board and turn, not once
        per publication (an ingest of a thousand games publishes each many times)."""
        game = self._boards.get(board_id)
        before = self._of_board.get(board_id)
        name = event_of(game) if game is not None else None
        if name is None:
            self._seen.pop(board_id, None)
            self._entries.pop(board_id, None)
            if before is not None:
                del self._of_board[board_id]
                self._mark(before).forced = True
            return
        if before != name:
            self._of_board[board_id] = name
            self._seen.pop(board_id, None)
            if before is not None:
                self._mark(before).forced = True
        self._mark(name).stale.add(board_id)

    def _refresh(self, ev: _Event) -> bool:
        """Read the event's changed boards again; True if the table may change."""
        boards = self._boards
        changed, ev.forced = ev.forced, False
        stale, ev.stale = ev.stale, set()
        for board_id in stale:
            game = boards.get(board_id)
            if game is None or self._of_board.get(board_id) != ev.name:
                continue
            full = self._entries[board_id] = entry_of(game)
            # the move count itself does not matter, only whether the game started
            entry = dataclasses.replace(full, plies=min(full.plies, 1))
            if self._seen.get(board_id) != entry:
                self._seen[board_id] = entry
                changed = True
        return changed

    def _mark(self, name: str) -> _Event:
        ev = self._events.get(name)
        if ev is None:
            configured = self._configured.get(event_key(name))
            rules = configured[1] if configured is not None else EventRules()
            facts = configured[2] if configured is not None else {}
            prior = self._prior(name) if self._prior is not None else None
            ev = self._events[name] = _Event(
                name, rules, facts, prior, version=self._resumed.get(name, 0)
            )
            if self._tg is not None:
                self._tg.create_task(self._follow(ev), name=f"standings-{name[:40]}")
            else:
                self._waiting.append(ev)
        ev.dirty.set()
        return ev

    # ------------------------------------------------------------ running

    async def run(self) -> None:
        """Compute and publish until cancelled (one task per event)."""
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            try:
                waiting, self._waiting = self._waiting, []
                for ev in waiting:
                    tg.create_task(self._follow(ev), name=f"standings-{ev.name[:40]}")
                await asyncio.Event().wait()
            finally:
                self._tg = None
                self.offload.close()

    async def _follow(self, ev: _Event) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await ev.dirty.wait()
            ev.dirty.clear()
            started = loop.time()
            try:
                # the boards are read when the event's turn comes, not before
                async with self.offload.turn():
                    if self._refresh(ev):  # else nothing the standings read changed
                        await self._compute(ev)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one event's trouble must not stop the others
                self.stats.failures += 1
                log.exception("standings_failed", tournament=ev.name, error=str(exc))
            # at most every `interval` s (and the child's share of a core for all)
            await asyncio.sleep(max(0.0, self.interval - (loop.time() - started)))

    def games_of(self, name: str) -> list[GameEntry]:
        """What the table reads of each board of the event ``name``, now: the
        entries :meth:`touch` kept (no board is read again here, so that a big
        event costs the event loop a list, not a pass over every game)."""
        of_board = self._of_board
        return [e for bid, e in self._entries.items() if of_board.get(bid) == name]

    async def _compute(self, ev: _Event) -> None:
        games = self.games_of(ev.name)
        if not games:
            return  # every board of it is gone: its last standings stay
        t0 = time.perf_counter()
        # The table, its message and the message's bytes are all made in the
        # child process (livegain.app.offload): for an event of thousands of
        # games that is most of a second of work, which in this process (even
        # in a thread) would stall the event loop.
        job = StandingsJob(
            owner=self._owner,
            event=ev.name,
            rules=ev.rules,
            facts=ev.facts,
            prior=ev.prior,
            version=ev.version + 1,
            games=games,
            year=time.gmtime().tm_year,  # a junior's age (the player table's K)
        )
        data = await self.offload.run(compute_standings, job)
        ev.seconds = time.perf_counter() - t0
        ev.computations += 1
        self.stats.computations += 1
        if data is None:
            return  # nothing a viewer sees changed
        ev.version += 1
        self.stats.published += 1
        log.debug("standings", tournament=ev.name, version=ev.version, seconds=round(ev.seconds, 3))
        self._publish(ev.name, data)

    # ------------------------------------------------------------ reading

    def status(self) -> dict[str, object]:
        """Figures for ``/healthz``."""
        return {
            "events": len(self._events),
            "computations": self.stats.computations,
            "published": self.stats.published,
            "failures": self.stats.failures,
            "last_seconds": {
                name: round(ev.seconds, 3) for name, ev in sorted(self._events.items())
            },
            "cpu_share": self.offload.share,
            "cpu_seconds": round(self.offload.cpu_seconds, 3),
            "formats": {name: self._format(name, ev) for name, ev in sorted(self._events.items())},
        }

    def _format(self, name: str, ev: _Event) -> dict[str, object]:
        """Which format the event is counted as, and why (``/healthz``)."""
        why = self._format_why.get(event_key(name))
        if why is None:
            return {"format": None, "why": "no [[events]] entry: standings only, no odds"}
        return {"format": ev.rules.format, "cycles": ev.rules.cycles, "why": why}
