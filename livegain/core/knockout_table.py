"""A knockout event's table from its boards: each mini-match stage by stage, and the bracket.

A knockout round is a set of mini-matches: the games of two players in round
R, game G of the match carrying the ``Round`` tag ``"R.G"`` (the FIDE World
Cup's convention; the service splits such a tag into round R and board G, so
a board's number is its game's number here; a match whose games carry no
game number, or the same one twice, is numbered in the order its games come
in). Which games make which stage comes from the event's
:class:`~livegain.core.knockout.KnockoutRules`: a game's stage is the one
whose ``time_control`` its ``TimeControl`` tag names, else the one its number
falls in (by default the World Cup's: games 1-2 classical, 3-4 rapid 25+10,
5-6 rapid 10+10, 7-8 blitz 5+3, 9 the Armageddon, where a draw sends Black
through). Player A of a match is the one with White in its first game on the
boards.

Each match, from its boards:

* its score per stage reached (finished games);
* decided: a stage over and not level, a lead larger than the games left in
  the stage, or the Armageddon's result;
* otherwise the chance that A goes through, exact
  (:func:`livegain.core.knockout.through`): the game in progress from the
  board's shown W/D/L (the human model's, White's view; from the ratings
  until the board has one), the stage's games not started (boards without a
  move, and the stage's games no board shows yet, colours alternating) and
  the stages after it from the ratings. A stage not started yet has its
  colours drawn by lot (each order counts 1/2), as the World Cup draws them
  for each tie-break stage and the Armageddon.

Games from the ratings take the ratings-only W/D/L of the stage's ``kind``
(``priors``: kind -> :class:`~livegain.core.human_wdl.RatingsPrior`), else
``prior`` (the event's), else the draw-rate model of
:func:`livegain.core.odds.game_probabilities`; a player without a rating
counts at the mean rating of the event's rated players.

The bracket (:func:`livegain.core.bracket.bracket`) takes each round's
matches in the order their games come in (the feed's order: the World Cup
files list them in seeding order; board numbers are the games' here), the
matches on the boards with their chances, and the matches to come from the
ratings (the stages of the round they belong to, colours by lot): who
remains and each player's chance of winning the event.

An event is read as a knockout when its rules say ``format = "knockout"``,
or, when they give no format or a Swiss (what ``livegain watch`` writes for
a format the source does not tell), when its boards show one
(:func:`livegain.core.event_format.format_from_pairings`). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from livegain.core.bracket import Bracket, Tie, bracket
from livegain.core.event_format import format_from_pairings
from livegain.core.event_table import EventRules, GameEntry, round_number
from livegain.core.human_wdl import RatingsPrior
from livegain.core.knockout import (
    Armageddon,
    Knockout,
    Stage,
    StageRule,
    alternating,
    stage_of_game,
    stage_of_time_control,
    stage_rule,
    through,
)
from livegain.core.ledger import official_rating
from livegain.core.odds import GameOdds, game_probabilities
from livegain.core.snapshot import PlayerInfo, player_key

FINISHED = ("1-0", "0-1", "1/2-1/2")
_GAME = re.compile(r"\s*\d+\.(\d+)\s*$")

Wdl = tuple[float, float, float]
OddsOf = Callable[[StageRule, float | None, float | None], Wdl]
"""A game's W/D/L (White's view) from the stage and the White and Black ratings."""


@dataclass(frozen=True)
class KnockoutGame:
    """A game of a mini-match: on a board, or one of its stage's games still
    to be played that no board shows yet."""

    game: int
    """Its number in the mini-match (from 1)."""
    stage: str
    white: str
    black: str
    a_white: bool
    result: str
    """``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` while not over."""
    wdl: Wdl | None
    """While not over: W/D/L, White's view (probabilities): the board's shown
    one in progress, else from the ratings; None once finished."""
    live: bool
    on_board: bool


@dataclass(frozen=True)
class StageScore:
    """A stage reached: its games, those finished and each player's points in them."""

    name: str
    games: int
    played: int
    score_a: float
    score_b: float


@dataclass(frozen=True)
class KnockoutMatch:
    round: int
    a: str
    """Player A's key (White in the match's first game on the boards)."""
    b: str
    a_name: str
    b_name: str
    a_rating: int | None
    b_rating: int | None
    stage: str
    """The stage being played (or the one that decided the match)."""
    stages: tuple[StageScore, ...]
    games: tuple[KnockoutGame, ...]
    through_a: float
    """The chance that A goes through (1 or 0 once decided)."""
    reach: tuple[tuple[str, float], ...]
    """Per later stage (and the Armageddon): the chance the match reaches it."""
    winner: str | None
    """The key of the player through, once decided."""
    live: bool
    """A game of the match is in progress."""
    note: str | None = None

    @property
    def through_b(self) -> float:
        return 1.0 - self.through_a


@dataclass(frozen=True)
class KnockoutTable:
    round: int | None
    """The latest round on the boards."""
    matches: tuple[KnockoutMatch, ...]
    """Every round's matches on the boards, round by round, in board order."""
    bracket: Bracket
    names: Mapping[str, str]
    """Player key -> name as the boards spell it."""
    ratings: Mapping[str, int | None]
    why: str
    """Why the event was read as a knockout."""
    notes: tuple[str, ...] = field(default=())

    @property
    def current(self) -> tuple[KnockoutMatch, ...]:
        """The latest round's matches, and any earlier match not decided yet."""
        return tuple(m for m in self.matches if m.round == self.round or m.winner is None)


def round_game(g: GameEntry) -> tuple[int | None, int | None]:
    """A board's round and game number: its ``Round`` tag ``"R.G"``, else its
    round and its board number (the service's split of ``"R.G"``)."""
    m = _GAME.match(g.round or "")
    if m:
        return round_number(g.round), int(m.group(1))
    return round_number(g.round), g.board


def knockout_why(games: Sequence[GameEntry], rules: EventRules) -> str | None:
    """Why the boards ``games`` of an event with ``rules`` are a knockout
    (None: they are not read as one)."""
    if rules.format == "knockout":
        return "as configured ([[events]] format = knockout)"
    if rules.format not in (None, "swiss"):
        return None
    found = format_from_pairings((_tag(g), player_key(g.white), player_key(g.black)) for g in games)
    return None if found is None else found.why


def _tag(g: GameEntry) -> str | None:
    rnd, game = round_game(g)
    return f"{rnd}.{game}" if rnd is not None and game is not None else g.round


def knockout_table(
    games: Sequence[GameEntry],
    rules: EventRules,
    *,
    priors: Mapping[str, RatingsPrior] | None = None,
    prior: RatingsPrior | None = None,
) -> KnockoutTable | None:
    """The knockout table of an event's boards (None: not a knockout); see
    the module docstring."""
    why = knockout_why(games, rules)
    if why is None:
        return None
    ko = rules.knockout
    notes: list[str] = []
    info: dict[str, PlayerInfo] = {}
    seen: dict[str, int] = {}
    grouped: dict[tuple[int, frozenset[str]], list[tuple[int, GameEntry]]] = {}
    unnumbered = 0
    for order, g in enumerate(games):
        rnd = round_number(g.round)
        wk, bk = player_key(g.white), player_key(g.black)
        if not wk or not bk or wk == bk:
            continue
        if rnd is None:
            unnumbered += 1
            continue
        for key, p in ((wk, g.white), (bk, g.black)):
            if rnd >= seen.get(key, -1):
                info[key], seen[key] = p, rnd
        grouped.setdefault((rnd, frozenset((wk, bk))), []).append((order, g))
    if unnumbered:
        notes.append(f"{unnumbered} board(s) without a round number left out.")
    if not grouped:
        return None
    rated = [r for p in info.values() if (r := official_rating(p.rating)) is not None]
    mean = sum(rated) / len(rated) if rated else None
    ratings = {k: official_rating(p.rating) for k, p in info.items()}
    fill = {k: (r if r is not None else mean) for k, r in ratings.items()}
    odds_of = _odds_maker(priors or {}, prior, rules.draw_rate)
    if len(rated) < len(info) and rated:
        notes.append(f"Players without a rating counted at {mean:.0f}.")

    def board_order(
        item: tuple[tuple[int, frozenset[str]], list[tuple[int, GameEntry]]],
    ) -> tuple[int, int]:
        (rnd, _), entries = item
        return rnd, min(o for o, _ in entries)

    matches: list[KnockoutMatch] = []
    for (rnd, _pair), entries in sorted(grouped.items(), key=board_order):
        matches.append(_match(rnd, entries, ko.stages_of(rnd), odds_of, fill, info))
    rounds = sorted({m.round for m in matches})
    first = rounds[0]
    by_round = [[m for m in matches if m.round == r] for r in range(first, rounds[-1] + 1)]
    if any(not ms for ms in by_round):
        notes.append("Some rounds are not on the boards: the bracket joins the rounds shown.")
        by_round = [ms for ms in by_round if ms]
    cache: dict[tuple[int, float | None, float | None], float] = {}

    def beat(p: str, q: str, rnd: int) -> float:
        key = (rnd, fill.get(p), fill.get(q))
        if key not in cache:
            cache[key] = from_ratings(ko.stages_of(rnd), fill.get(p), fill.get(q), odds_of)
        return cache[key]

    tree = bracket(
        [[Tie(m.a, m.b, m.through_a) for m in ms] for ms in by_round],
        beat,
        first_round=first,
        order=ko.bracket,
    )
    if tree.place_matches:
        notes.append("Place matches (between players already out) are not part of the bracket.")
    return KnockoutTable(
        round=rounds[-1],
        matches=tuple(matches),
        bracket=tree,
        names={k: p.name for k, p in info.items()},
        ratings={k: p.rating for k, p in info.items()},
        why=why,
        notes=tuple(notes),
    )


def _odds_maker(
    priors: Mapping[str, RatingsPrior], prior: RatingsPrior | None, draw_rate: float
) -> OddsOf:
    def odds_of(rule: StageRule, white: float | None, black: float | None) -> Wdl:
        model = priors.get(rule.kind, prior)
        if model is not None:
            return model.probabilities(white, black)
        diff = 0.0 if white is None or black is None else white - black
        g = game_probabilities(diff, draw_rate)
        return (g.win, g.draw, g.loss)

    return odds_of


def _a_view(wdl: Wdl, a_white: bool) -> GameOdds:
    """A game's chances from A's view, from White's W/D/L."""
    total = sum(wdl)
    w, d, lo = (x / total for x in wdl)
    return GameOdds(w, d, lo) if a_white else GameOdds(lo, d, w)


def _fresh(rule: StageRule, ra: float | None, rb: float | None, odds_of: OddsOf) -> Stage:
    """A stage not started: colours drawn by lot, alternating within it."""
    white = _a_view(odds_of(rule, ra, rb), True)
    black = _a_view(odds_of(rule, rb, ra), False)
    return Stage(
        rule.name,
        alternating(True, white, black, rule.games),
        lot=alternating(False, white, black, rule.games),
    )


def _fresh_armageddon(
    rule: StageRule, ra: float | None, rb: float | None, odds_of: OddsOf
) -> Armageddon:
    """An Armageddon whose colours are drawn by lot."""
    return Armageddon(
        _a_view(odds_of(rule, ra, rb), True), False, _a_view(odds_of(rule, rb, ra), False)
    )


def _after(
    stages: tuple[StageRule, ...], index: int, ra: float | None, rb: float | None, odds_of: OddsOf
) -> tuple[tuple[Stage, ...], Armageddon | None]:
    """The stages after the ``index``-th, not started, and the Armageddon.
    Past the configured stages (no Armageddon), the last one again."""
    later: list[Stage] = []
    armageddon: Armageddon | None = None
    for i in range(index + 1, len(stages)):
        if stages[i].armageddon:
            armageddon = _fresh_armageddon(stages[i], ra, rb, odds_of)
        else:
            later.append(_fresh(stages[i], ra, rb, odds_of))
    if not later and armageddon is None:
        rule = stage_rule(stages, index + 1)
        assert rule is not None  # no Armageddon: the last stage repeats
        later.append(_fresh(rule, ra, rb, odds_of))
    return tuple(later), armageddon


def from_ratings(
    stages: tuple[StageRule, ...], ra: float | None, rb: float | None, odds_of: OddsOf
) -> float:
    """The chance that A (rated ``ra``) beats B in a mini-match not started,
    from the ratings, every stage's colours by lot."""
    return _from_stage(stages, 0, ra, rb, odds_of).a


def _from_stage(
    stages: tuple[StageRule, ...], index: int, ra: float | None, rb: float | None, odds_of: OddsOf
) -> _Through:
    rule = stage_rule(stages, index)
    assert rule is not None
    if rule.armageddon:
        arm = _fresh_armageddon(rule, ra, rb, odds_of)
        return _Through(arm.a_through(), ((rule.name, 1.0),))
    later, armageddon = _after(stages, index, ra, rb, odds_of)
    first = _fresh(rule, ra, rb, odds_of)
    got = through(Knockout(Stage("", ()), later=(first, *later), armageddon=armageddon))
    return _Through(got.a, got.by_stage)


@dataclass(frozen=True)
class _Through:
    a: float
    by_stage: tuple[tuple[str, float], ...]


def _match(
    rnd: int,
    entries: list[tuple[int, GameEntry]],
    stages: tuple[StageRule, ...],
    odds_of: OddsOf,
    fill: Mapping[str, float | None],
    info: Mapping[str, PlayerInfo],
) -> KnockoutMatch:
    """One mini-match from its boards; see the module docstring."""
    numbers = [round_game(g)[1] for _, g in entries]
    if None in numbers or len(set(numbers)) < len(numbers):
        numbered = [(i + 1, g) for i, (_, g) in enumerate(sorted(entries, key=lambda e: e[0]))]
    else:
        numbered = sorted(
            ((n or 0, g) for n, (_, g) in zip(numbers, entries, strict=True)), key=lambda x: x[0]
        )
    first = numbered[0][1]
    a, b = player_key(first.white), player_key(first.black)
    ra, rb = fill.get(a), fill.get(b)
    note: str | None = None
    by_stage: dict[int, list[tuple[int, GameEntry]]] = {}
    for n, g in numbered:
        idx = stage_of_time_control(stages, g.time_control)
        if idx is None:
            idx = stage_of_game(stages, n)
        if idx is None:
            note = f"game {n} is past the Armageddon: left out"
            continue
        by_stage.setdefault(idx, []).append((n, g))

    def a_white(g: GameEntry) -> bool:
        return player_key(g.white) == a

    def rating(g: GameEntry, white: bool) -> float | None:
        return fill.get(player_key(g.white if white else g.black))

    lines: list[KnockoutGame] = []
    scores: list[StageScore] = []
    cur = max(by_stage) if by_stage else 0
    winner: str | None = None
    decided_at: str | None = None
    for idx in range(cur + 1):
        rule = stage_rule(stages, idx)
        assert rule is not None
        on = by_stage.get(idx, [])
        sa = sb = 0.0
        played = 0
        for n, g in on:
            finished = g.result in FINISHED
            wdl: Wdl | None = None
            if finished:
                played += 1
                pw, pb = _points(g.result)
                sa += pw if a_white(g) else pb
                sb += pb if a_white(g) else pw
            elif g.plies > 0 and g.wdl is not None and sum(g.wdl) > 0:
                total = sum(g.wdl)
                wdl = (g.wdl[0] / total, g.wdl[1] / total, g.wdl[2] / total)
            else:
                wdl = odds_of(rule, rating(g, True), rating(g, False))
            lines.append(
                KnockoutGame(
                    n,
                    rule.name,
                    g.white.name,
                    g.black.name,
                    a_white(g),
                    g.result,
                    wdl,
                    g.result not in FINISHED and g.plies > 0,
                    True,
                )
            )
        size = max(rule.games, len(on))
        scores.append(StageScore(rule.name, size, played, sa, sb))
        if winner is None and idx < cur and played == size and sa != sb:
            winner, decided_at = (a if sa > sb else b), rule.name
    live = any(line.live for line in lines)
    names = (info[a].name, info[b].name)
    result = _standing(
        (a, b), names, (ra, rb), cur, by_stage, scores, stages, odds_of, lines, a_white
    )
    if winner is None:
        winner, decided_at = result.winner, result.decided_at
    through_a = 1.0 if winner == a else 0.0 if winner == b else result.a
    return KnockoutMatch(
        round=rnd,
        a=a,
        b=b,
        a_name=info[a].name,
        b_name=info[b].name,
        a_rating=info[a].rating,
        b_rating=info[b].rating,
        stage=decided_at or result.stage,
        stages=tuple(scores),
        games=tuple(lines),
        through_a=through_a,
        reach=() if winner is not None else result.reach,
        winner=winner,
        live=live,
        note=note,
    )


def _points(result: str) -> tuple[float, float]:
    return {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0)}.get(result, (0.5, 0.5))


@dataclass(frozen=True)
class _Standing:
    a: float
    stage: str
    reach: tuple[tuple[str, float], ...] = ()
    winner: str | None = None
    decided_at: str | None = None


def _standing(
    keys: tuple[str, str],
    names: tuple[str, str],
    ratings: tuple[float | None, float | None],
    cur: int,
    by_stage: Mapping[int, list[tuple[int, GameEntry]]],
    scores: list[StageScore],
    stages: tuple[StageRule, ...],
    odds_of: OddsOf,
    lines: list[KnockoutGame],
    a_white: Callable[[GameEntry], bool],
) -> _Standing:
    """Where the match stands in its latest stage on the boards, and A's chance."""
    (a, b), (ra, rb) = keys, ratings
    rule = stage_rule(stages, cur)
    assert rule is not None
    on = by_stage.get(cur, [])
    score = scores[cur]
    if rule.armageddon:
        n, g = on[-1]
        if g.result in FINISHED:
            white, black = (a, b) if a_white(g) else (b, a)
            won = white if g.result == "1-0" else black
            return _Standing(1.0 if won == a else 0.0, rule.name, winner=won, decided_at=rule.name)
        line = next(x for x in lines if x.game == n)
        assert line.wdl is not None
        arm = Armageddon(_a_view(line.wdl, a_white(g)), a_black=not a_white(g))
        return _Standing(arm.a_through(), rule.name, ((rule.name, 1.0),))
    left = score.games - score.played
    lead = score.score_a - score.score_b
    if left == 0 and lead == 0:  # level at its end: the next stage, not started
        nxt = stage_rule(stages, cur + 1)
        assert nxt is not None
        got = _from_stage(stages, cur + 1, ra, rb, odds_of)
        return _Standing(got.a, nxt.name, got.by_stage)
    if abs(lead) > left or left == 0:
        won = a if lead > 0 else b
        return _Standing(1.0 if won == a else 0.0, rule.name, winner=won, decided_at=rule.name)
    pending = [x for x in lines if x.stage == rule.name and x.result not in FINISHED]
    live = [_a_view(x.wdl, x.a_white) for x in pending if x.live and x.wdl is not None]
    waiting = [_a_view(x.wdl, x.a_white) for x in pending if not x.live and x.wdl is not None]
    # the stage's games no board shows yet: colours alternating after its last board
    last_n, last_g = on[-1]
    a_as_white = _a_view(odds_of(rule, ra, rb), True)
    a_as_black = _a_view(odds_of(rule, rb, ra), False)
    missing = score.games - len(on)
    for k in range(1, missing + 1):
        a_has_white = a_white(last_g) != (k % 2 == 1)
        waiting.append(a_as_white if a_has_white else a_as_black)
        wb = (ra, rb) if a_has_white else (rb, ra)
        wn = names if a_has_white else (names[1], names[0])
        wdl = odds_of(rule, *wb)
        lines.append(KnockoutGame(last_n + k, rule.name, *wn, a_has_white, "*", wdl, False, False))
    later, armageddon = _after(stages, cur, ra, rb, odds_of)
    now = through(
        Knockout(
            Stage(rule.name, tuple(live[1:] + waiting)),
            score.score_a,
            score.score_b,
            live[0] if live else None,
            later,
            armageddon,
        )
    )
    return _Standing(now.a, rule.name, now.by_stage)
