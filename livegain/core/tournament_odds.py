"""Odds of winning a tournament: Monte Carlo of the games left, tie-breaks included.

Given the finished results, the games in progress and the games not yet
started, :func:`win_odds` plays the games left many times and counts who
finishes first after points, the tie-breaks of :mod:`livegain.core.standings`
(same definitions, computed here on all simulations at once) and, for a tie
still level after the last tie-break, the ``playoff`` rule:

``share``
    the win is split equally among the tied players (each gets 1/k).
``rating``
    a play-off decided from the ratings with the same W/D/L model: the tied
    players, in a random order, play a ladder (the winner of each match meets
    the next player); a match is one game replayed until it is decisive, so
    A beats B with probability ``W / (W + L)`` of A's W/D/L against B
    (1/2 when both are 0). Colours, faster time controls and Armageddon are not
    modelled.

Per game:

* a game not started: W/D/L from the two ratings. With a ``prior`` (the
  ratings-only layer of the human W/D/L model,
  :class:`livegain.core.human_wdl.RatingsPrior`, fitted on real results:
  White's advantage and a draw rate that depends on the level and the gap)
  that model's ``probabilities(white, black)``, the same model the boards'
  live chances start from; without one the draw model of seed 000
  (:func:`livegain.core.odds.game_probabilities`): expected score ``E`` from
  the Elo curve, draw probability ``D`` (``draw_rate``, lowered to
  ``2*min(E, 1-E)`` when it does not fit), ``W = E - D/2``. The expected
  score is never used as a win probability.
* a game in progress: drawn from the live W/D/L the caller passes (per mille or
  probabilities, White's view; normalised by its sum): the chances the board
  shows (the human model's).

Points are counted with the event's ``scoring``
(:class:`livegain.core.scoring.Scoring`: 1 / ½ / 0 by default, or 3 / 1 / 0,
or more for Black...), in the simulation as in the standings: a game left
gives each side its colour's points for the result drawn, and the tie-breaks
use them as :mod:`livegain.core.standings` does (Sonneborn-Berger weighs the
opponents' points by the game points 1 / ½ / 0; direct encounter counts the
points scored within the tied group, a game not played there being worth the
larger win).

**Armageddon** (a scoring with an Armageddon rule, Norway Chess): a
classical game left that the simulation draws is followed by an Armageddon
between the same two players with the same colours, drawn from its own W/D/L
(:func:`armageddon_wdl`: the Elo curve shifted by White's time edge
:data:`ARMAGEDDON_WHITE_EDGE`, draws at :data:`ARMAGEDDON_DRAW_RATE`, a drawn
Armageddon going to the rule's colour); its winner and loser get the rule's
totals. An Armageddon whose classical draw is already finished
(``armageddons``) is drawn from its live W/D/L when in progress, from
:func:`armageddon_wdl` when not started. As in the standings, an Armageddon
changes points and direct encounter only; the other tie-breaks see the
classical draw.

Each probability comes with its Monte Carlo standard error
``sd(x) / sqrt(sims)``, ``x`` being a player's share of first place in one
simulation (0 or 1; 1/k when ``share`` splits a k-way tie).

Round robins: pass every game not finished (in progress or upcoming); the
standings at the end are the final standings. Swiss: the pairings of later
rounds depend on results, so only the games of the current round (whose
pairings are known) can be simulated: the odds are those of leading the
standings *after the current round*, not of winning the event.

:func:`exact_win_odds` enumerates all 3^k outcomes of the k games left and
ranks each with :class:`~livegain.core.standings.Standings` (an independent,
plain implementation of the tie-breaks); it is for small tournaments and
checks the simulation.

Pure: no I/O, no clock; randomness only from the seeded numpy Generator.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple, Protocol, get_args

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

from livegain.core.elo import Model
from livegain.core.odds import game_probabilities
from livegain.core.scoring import EXACT_STEP, ROUND_DIGITS, STANDARD, Scoring
from livegain.core.standings import (
    DEFAULT_TIEBREAKS,
    Result,
    Standings,
    Tiebreak,
    classical_draw,
    result_points,
    tiebreak_names,
)

Playoff = Literal["share", "rating"]
PLAYOFFS: tuple[Playoff, ...] = get_args(Playoff)

DEFAULT_DRAW_RATE = 0.5
"""The draw probability of a game between equal players (as ``[[match]] draw_rate``)."""

CHUNK = 20_000
"""Simulations done at once (memory bound); results depend on ``sims`` and ``seed`` only."""

EXACT_MAX_GAMES = 12
""":func:`exact_win_odds` refuses more outcomes than 3 to this power (531,441:
12 games left with three outcomes each)."""

Float = npt.NDArray[np.float64]
Float32 = npt.NDArray[np.float32]
Bool = npt.NDArray[np.bool_]
Int = npt.NDArray[np.int64]
Sparse = csr_matrix

InProgress = tuple[str, str, Sequence[float]]
"""(white, black, live W/D/L from White's view, per mille or probabilities)."""

ArmageddonLeft = tuple[str, str, Sequence[float] | None]
"""An Armageddon whose classical draw is finished: (its White, its Black, its
live W/D/L from White's view, or None when not started)."""

ARMAGEDDON_WHITE_EDGE = 150.0
"""Elo points added to White's rating in an Armageddon (more time on the clock).
Fitted with :data:`ARMAGEDDON_DRAW_RATE` by maximum likelihood on the 33
Armageddons with both ratings of the Norway Chess files of the shared data
(2024 and women 2025; docs/standings.md §3)."""

ARMAGEDDON_DRAW_RATE = 0.18
"""The draw probability of an Armageddon between equal players (see
:data:`ARMAGEDDON_WHITE_EDGE`)."""


class RatingsWdl(Protocol):
    """A ratings-only W/D/L model (:class:`livegain.core.human_wdl.RatingsPrior`)."""

    def probabilities(
        self, white: float | None, black: float | None
    ) -> tuple[float, float, float]: ...


def armageddon_wdl(
    white_rating: float, black_rating: float, model: Model = "logistic"
) -> tuple[float, float, float]:
    """An Armageddon's W/D/L from the two ratings: the draw model of
    :func:`livegain.core.odds.game_probabilities` with White's rating raised
    by :data:`ARMAGEDDON_WHITE_EDGE` and :data:`ARMAGEDDON_DRAW_RATE`."""
    g = game_probabilities(
        white_rating - black_rating + ARMAGEDDON_WHITE_EDGE, ARMAGEDDON_DRAW_RATE, model
    )
    return g.win, g.draw, g.loss


def _armageddon_white_wins(wdl: Sequence[float], scoring: Scoring) -> float:
    """The probability that an Armageddon's White wins it (a draw counted for
    the rule's colour)."""
    rule = scoring.armageddon
    if rule is None:
        raise ValueError("an Armageddon game, but the scoring has no Armageddon rule")
    w, d, _ = wdl
    return w + d if rule.draw == "white" else w


class WinChance(NamedTuple):
    """Probability of finishing first and its Monte Carlo standard error."""

    p: float
    stderr: float


@dataclass(frozen=True)
class _Setup:
    """The tournament as arrays: players 0..n-1, games left 0..g-1.

    Simulations are columns (players x simulations, games x simulations); the
    player-by-player and player-by-game matrices are sparse, so that each
    product is a few vector operations per non-zero, single-threaded.
    """

    players: tuple[str, ...]
    # (n,) points so far; with the standard scoring plus the points Black would
    # get in every game left (White's then come from ``white_minus_black``)
    base: Float
    score: Sparse  # (n, n) points i scored against j in finished games (forfeits included)
    played_score: Sparse  # (n, n) game points (1, 1/2, 0) of i against j, games over the board
    played_games: Sparse  # (n, n) games over the board between i and j, finished and left
    opponents: tuple[Int, ...]  # per player, the opponents over the board (finished and left)
    not_met: Sparse  # (n, n) 1 where i and j never meet (off the diagonal)
    unplayed: Float  # (n,) unplayed rounds (byes, forfeits)
    unplayed_points: Float  # (n,) game points from them (a bye: the result it stands for)
    wins: Float  # (n,) rounds with a win's points
    won: Float  # (n,) games won over the board
    white: Int  # (g,) White of each game left
    black: Int  # (g,)
    p_white: Float32  # (g, 1) White wins
    p_white_or_draw: Float32  # (g, 1)
    of_white: Sparse  # (n, g) 1 where the player has White in the game
    of_black: Sparse  # (n, g)
    white_minus_black: Sparse  # (n, g) of_white - of_black
    decisive: Float  # (n, n) probability that i beats j in a play-off game
    # scoring: None for the standard one (White's points are the game points s,
    # Black's 1 - s); else (3,) White's and Black's points when White loses,
    # draws, wins (index 2 s)
    white_points: Float | None = None
    black_points: Float | None = None
    most: float = 1.0  # the most a game gives (the larger win)
    rounded: bool = False  # totals rounded to ROUND_DIGITS (points not exact in binary)
    # Armageddon rule: None without one; else (g, 1) the chance that White of
    # each game left wins the Armageddon after a draw, and (2,) the rule's
    # totals (win, loss)
    arm_p: Float32 | None = None
    arm_totals: Float | None = None
    # Armageddons whose classical draw is finished (a of them): (n, a) 1 for
    # the Armageddon's White / Black, (a, 1) the chance White wins, (a,) the
    # points each gets on top of the classical draw when White wins / loses
    arm_of_white: Sparse | None = None
    arm_of_black: Sparse | None = None
    arm_white: Int | None = None
    arm_black: Int | None = None
    arm_p_left: Float32 | None = None
    arm_add_white: tuple[Float, Float] | None = None  # White's extra: (White wins, loses)
    arm_add_black: tuple[Float, Float] | None = None  # Black's extra: (White wins, loses)


def _normalise_wdl(wdl: Sequence[float], where: str) -> tuple[float, float, float]:
    if len(wdl) != 3:
        raise ValueError(f"{where}: a W/D/L has 3 numbers, got {len(wdl)}")
    w, d, lo = (float(x) for x in wdl)
    total = w + d + lo
    if not all(math.isfinite(x) and x >= 0 for x in (w, d, lo)) or total <= 0:
        raise ValueError(f"{where}: W/D/L must be non-negative with a positive sum, got {wdl}")
    return w / total, d / total, lo / total


def _rating_wdl(
    ratings: Mapping[str, float],
    white: str,
    black: str,
    draw_rate: float,
    model: Model,
    prior: RatingsWdl | None = None,
) -> tuple[float, float, float]:
    if prior is not None:
        w, d, lo = prior.probabilities(ratings[white], ratings[black])
        return _normalise_wdl((max(0.0, w), max(0.0, d), max(0.0, lo)), f"{white} - {black}")
    g = game_probabilities(ratings[white] - ratings[black], draw_rate, model)
    return g.win, g.draw, g.loss


def _decisive(
    players: Sequence[str],
    ratings: Mapping[str, float],
    draw_rate: float,
    model: Model,
    prior: RatingsWdl | None = None,
) -> Float:
    n = len(players)
    out = np.full((n, n), 0.5)
    for i, a in enumerate(players):
        for j, b in enumerate(players):
            if i != j:
                w, _, lo = _rating_wdl(ratings, a, b, draw_rate, model, prior)
                out[i, j] = w / (w + lo) if w + lo > 0 else 0.5
    return out


def _check(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: Sequence[Result],
    in_progress: Sequence[InProgress],
    upcoming: Sequence[tuple[str, str]],
    playoff: str,
    draw_rate: float,
    armageddons: Sequence[ArmageddonLeft] | None = None,
) -> None:
    """Check the arguments; ``armageddons`` None: the scoring has no Armageddon rule."""
    known = set(players)
    if len(known) != len(players):
        raise ValueError("a player is listed twice")
    if not players:
        raise ValueError("no players")
    if playoff not in PLAYOFFS:
        raise ValueError(f"unknown playoff rule {playoff!r}; expected one of {PLAYOFFS}")
    if math.isnan(draw_rate) or not 0.0 <= draw_rate <= 1.0:
        raise ValueError(f"draw rate must lie in [0, 1], got {draw_rate}")
    named = [r.white for r in finished] + [r.black for r in finished if r.black is not None]
    pairs = [(w, b) for w, b, _ in in_progress] + list(upcoming)
    named += [p for pair in pairs for p in pair]
    unknown = sorted(set(named) - known)
    if unknown:
        raise ValueError(f"not in the players: {', '.join(unknown)}")
    for w, b in pairs:
        if w == b:
            raise ValueError(f"player {w!r} paired with himself")
    need_rating = {p for pair in upcoming for p in pair}
    if armageddons is not None:
        # a classical game left may end in a draw, then an Armageddon from the ratings
        need_rating |= {p for pair in pairs for p in pair}
        need_rating |= {p for w, b, wdl in armageddons if wdl is None for p in (w, b)}
        named_arm = {p for w, b, _ in armageddons for p in (w, b)}
        unknown_arm = sorted(named_arm - known)
        if unknown_arm:
            raise ValueError(f"not in the players: {', '.join(unknown_arm)}")
    if playoff == "rating":
        need_rating = set(players)
    missing = sorted(p for p in need_rating if p not in ratings or not math.isfinite(ratings[p]))
    if missing:
        raise ValueError(f"no rating for: {', '.join(missing)}")


def _setup(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: Sequence[Result],
    in_progress: Sequence[InProgress],
    upcoming: Sequence[tuple[str, str]],
    playoff: Playoff,
    draw_rate: float,
    model: Model,
    prior: RatingsWdl | None = None,
    scoring: Scoring = STANDARD,
    armageddons: Sequence[ArmageddonLeft] = (),
) -> _Setup:
    n = len(players)
    exact = scoring.exact
    idx = {p: k for k, p in enumerate(players)}
    points = np.zeros(n)
    score = np.zeros((n, n))
    played_score = np.zeros((n, n))
    played_games = np.zeros((n, n))
    met = np.eye(n, dtype=bool)
    unplayed = np.zeros(n)
    unplayed_points = np.zeros(n)
    wins = np.zeros(n)
    won = np.zeros(n)
    for r in finished:
        w = idx[r.white]
        if r.black is None:
            value = r.white_points
            game = scoring.bye_game_points(value)
            exact = exact and (value / EXACT_STEP).is_integer()
            points[w] += value
            wins[w] += game == 1.0
            unplayed[w] += 1
            unplayed_points[w] += game
            continue
        b = idx[r.black]
        white_pts, black_pts = result_points(r, scoring)
        points[w] += white_pts
        points[b] += black_pts
        wins[w] += r.white_points == 1.0
        wins[b] += r.black_points == 1.0
        score[w, b] += white_pts
        score[b, w] += black_pts
        met[w, b] = met[b, w] = True
        if r.played:
            played_score[w, b] += r.white_points
            played_score[b, w] += r.black_points
            played_games[w, b] += 1
            played_games[b, w] += 1
            won[w] += r.white_points == 1.0
            won[b] += r.black_points == 1.0
        else:
            unplayed[[w, b]] += 1
            unplayed_points[w] += r.white_points
            unplayed_points[b] += r.black_points
    left: list[tuple[int, int, tuple[float, float, float]]] = []
    for white, black, wdl in in_progress:
        left.append((idx[white], idx[black], _normalise_wdl(wdl, f"{white} - {black}")))
    for white, black in upcoming:
        wdl = _rating_wdl(ratings, white, black, draw_rate, model, prior)
        left.append((idx[white], idx[black], wdl))
    g = len(left)
    wi = np.array([x[0] for x in left], dtype=np.int64)
    bi = np.array([x[1] for x in left], dtype=np.int64)
    for w, b in zip(wi.tolist(), bi.tolist(), strict=True):
        played_games[w, b] += 1
        played_games[b, w] += 1
        met[w, b] = met[b, w] = True
    of_white = csr_matrix((np.ones(g), (wi, np.arange(g))), shape=(n, g))
    of_black = csr_matrix((np.ones(g), (bi, np.arange(g))), shape=(n, g))
    decisive = (
        _decisive(players, ratings, draw_rate, model, prior)
        if playoff == "rating"
        else np.full((n, n), 0.5)
    )
    p_white = np.array([x[2][0] for x in left])
    p_draw = np.array([x[2][1] for x in left])
    standard = scoring.is_standard and exact
    if not exact:
        points = np.round(points, ROUND_DIGITS)
    setup = _Setup(
        players=tuple(players),
        base=points + np.bincount(bi, minlength=n).astype(np.float64) if standard else points,
        score=csr_matrix(score),
        played_score=csr_matrix(played_score),
        played_games=csr_matrix(played_games),
        opponents=tuple(np.flatnonzero(row > 0) for row in played_games),
        not_met=csr_matrix((~met).astype(np.float64)),
        unplayed=unplayed,
        unplayed_points=unplayed_points,
        wins=wins,
        won=won,
        white=wi,
        black=bi,
        p_white=p_white[:, None].astype(np.float32),
        p_white_or_draw=(p_white + p_draw)[:, None].astype(np.float32),
        of_white=of_white,
        of_black=of_black,
        white_minus_black=csr_matrix(of_white - of_black),
        decisive=decisive,
        white_points=None
        if standard
        else np.array([scoring.white.loss, scoring.white.draw, scoring.white.win]),
        black_points=None
        if standard
        else np.array([scoring.black.win, scoring.black.draw, scoring.black.loss]),
        most=scoring.most,
        rounded=not exact,
    )
    return _with_armageddons(setup, ratings, finished, left, armageddons, model, scoring)


def _with_armageddons(
    st: _Setup,
    ratings: Mapping[str, float],
    finished: Sequence[Result],
    left: Sequence[tuple[int, int, tuple[float, float, float]]],
    armageddons: Sequence[ArmageddonLeft],
    model: Model,
    scoring: Scoring,
) -> _Setup:
    """``st`` with the fields of the Armageddon rule (unchanged without one)."""
    rule = scoring.armageddon
    if rule is None:
        if armageddons:
            raise ValueError("Armageddon games, but the scoring has no Armageddon rule")
        return st
    players = st.players
    idx = {p: k for k, p in enumerate(players)}
    arm_p = [
        _armageddon_white_wins(
            armageddon_wdl(ratings[players[w]], ratings[players[b]], model), scoring
        )
        for w, b, _ in left
    ]
    done = list(finished)
    rows: list[tuple[int, int, float, float, float, float, float]] = []
    for white, black, wdl in armageddons:
        k = classical_draw(done, white, black)
        if k is None:
            raise ValueError(f"Armageddon {white} - {black}: no classical draw between them")
        draw = done[k]
        done[k] = draw.with_armageddon(white, "1-0")  # claimed: one Armageddon per draw
        before = result_points(draw, scoring)
        d_white, d_black = before if draw.white == white else before[::-1]
        live = (
            armageddon_wdl(ratings[white], ratings[black], model)
            if wdl is None
            else _normalise_wdl(wdl, f"Armageddon {white} - {black}")
        )
        rows.append(
            (
                idx[white],
                idx[black],
                _armageddon_white_wins(live, scoring),
                rule.win - d_white,
                rule.loss - d_white,
                rule.loss - d_black,
                rule.win - d_black,
            )
        )
    a = len(rows)
    aw = np.array([r[0] for r in rows], dtype=np.int64)
    ab = np.array([r[1] for r in rows], dtype=np.int64)
    n = len(players)
    return replace(
        st,
        arm_p=np.array(arm_p, dtype=np.float32)[:, None],
        arm_totals=np.array([rule.win, rule.loss]),
        arm_of_white=csr_matrix((np.ones(a), (aw, np.arange(a))), shape=(n, a)),
        arm_of_black=csr_matrix((np.ones(a), (ab, np.arange(a))), shape=(n, a)),
        arm_white=aw,
        arm_black=ab,
        arm_p_left=np.array([r[2] for r in rows], dtype=np.float32)[:, None],
        arm_add_white=(np.array([r[3] for r in rows]), np.array([r[4] for r in rows])),
        arm_add_black=(np.array([r[5] for r in rows]), np.array([r[6] for r in rows])),
    )


def _tiebreak_key(
    tb: Tiebreak,
    st: _Setup,
    s: Float,
    pts: Float,
    cand: Bool,
    sides: tuple[Float, Float] | None = None,
    extra: tuple[Float, Float] | None = None,
) -> tuple[Float, Float | None]:
    """Values of ``tb`` for each player (rows) and simulation (columns).

    ``s``: White's game points in each game left (games x simulations);
    ``pts``: final points; ``cand``: the players still tied for first;
    ``sides``: White's and Black's points in each game left (None: the
    standard scoring, ``s`` and ``1 - s``); ``extra``: the points the
    Armageddons of finished classical draws add to their White and Black (see
    :func:`_armageddons`; None: none). For direct encounter, returns the
    points scored against the other candidates and the most they could reach
    (the points plus the larger win per candidate never met); else the value
    and None.
    """
    key, reach = _tiebreak_value(tb, st, s, pts, cand, sides, extra)
    if st.rounded:
        key = np.round(key, ROUND_DIGITS)
        reach = None if reach is None else np.round(reach, ROUND_DIGITS)
    return key, reach


def _tiebreak_value(
    tb: Tiebreak,
    st: _Setup,
    s: Float,
    pts: Float,
    cand: Bool,
    sides: tuple[Float, Float] | None,
    extra: tuple[Float, Float] | None = None,
) -> tuple[Float, Float | None]:
    if tb == "sonneborn_berger":
        sb = (
            st.played_score @ pts
            + st.of_white @ (s * pts[st.black])
            + st.of_black @ ((1.0 - s) * pts[st.white])
            + st.unplayed_points[:, None] * pts
        )
        return np.asarray(sb, dtype=np.float64), None
    if tb == "wins" or tb == "won":
        base = st.wins if tb == "wins" else st.won
        won = st.of_white @ (s == 1.0).astype(np.float64) + st.of_black @ (s == 0.0).astype(
            np.float64
        )
        return base[:, None] + won, None
    if tb == "buchholz" or tb == "buchholz_cut1":
        bh = np.asarray(st.played_games @ pts + st.unplayed[:, None] * pts, dtype=np.float64)
        if tb == "buchholz":
            return bh, None
        cut = np.zeros_like(bh)
        for i, opponents in enumerate(st.opponents):
            if st.unplayed[i] > 0:
                cut[i] = pts[i]
            elif opponents.size:
                cut[i] = pts[opponents].min(axis=0)
        return bh - cut, None
    c = cand.astype(np.float64)
    if sides is None:
        current = np.asarray(
            st.score @ c
            + st.of_white @ (c[st.black] * s)
            + st.of_black @ (c[st.white] * (1.0 - s)),
            dtype=np.float64,
        )
        return current, current + st.not_met @ c
    pw, pb = sides
    current = np.asarray(
        st.score @ c + st.of_white @ (c[st.black] * pw) + st.of_black @ (c[st.white] * pb),
        dtype=np.float64,
    )
    if extra is not None:
        assert st.arm_of_white is not None and st.arm_of_black is not None
        assert st.arm_white is not None and st.arm_black is not None
        current += st.arm_of_white @ (c[st.arm_black] * extra[0]) + st.arm_of_black @ (
            c[st.arm_white] * extra[1]
        )
    return current, current + st.most * (st.not_met @ c)


def _top(key: Float, cand: Bool) -> Bool:
    masked = np.where(cand, key, -np.inf)
    out: Bool = cand & (masked == masked.max(axis=0, keepdims=True))
    return out


def _top_direct_encounter(current: Float, reach: Float, cand: Bool) -> Bool:
    """The candidates that the direct encounter ranks first (see standings):
    the shortest head of the candidates by points scored whose lowest score
    exceeds the most any other candidate could reach."""
    cur = np.where(cand, current, -np.inf)
    most = np.where(cand, reach, -np.inf)
    order = np.argsort(-cur, axis=0, kind="stable")
    cur_sorted = np.take_along_axis(cur, order, axis=0)
    most_sorted = np.take_along_axis(most, order, axis=0)
    # after[k]: the most any candidate after position k could reach
    tail = np.maximum.accumulate(most_sorted[::-1], axis=0)[::-1]
    after = np.concatenate([tail[1:], np.full((1, cur.shape[1]), -np.inf)], axis=0)
    k = np.argmax(cur_sorted > after, axis=0)  # the head: positions 0..k
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(order.shape[0])[:, None], axis=0)
    out: Bool = cand & (position <= k[None, :])
    return out


def _playoff_ladder(st: _Setup, cand: Bool, rng: np.random.Generator) -> Float:
    """One-hot winner of a rating play-off ladder among the candidates of each column."""
    n, sims = cand.shape
    order = np.argsort(np.where(cand, rng.random((n, sims)), np.inf), axis=0)
    champion = order[0].copy()
    size = int(cand.sum(axis=0).max()) if sims else 0
    col = np.arange(sims)
    for k in range(1, size):
        challenger = order[k]
        active = cand[challenger, col]
        keep = st.decisive[champion, challenger]
        u = rng.random(sims)
        champion = np.where(active & (u >= keep), challenger, champion)
    out = np.zeros((n, sims))
    out[champion, col] = 1.0
    return out


def _armageddons(
    st: _Setup, outcome: npt.NDArray[np.int8], sides: tuple[Float, Float], rng: np.random.Generator
) -> tuple[tuple[Float, Float], tuple[Float, Float] | None]:
    """The Armageddon rule in one chunk: each classical game left drawn
    (``outcome`` 1) is settled by an Armageddon (White wins it with
    ``arm_p``), its players getting the rule's totals instead of the draw's;
    and the Armageddons of finished classical draws are played. Returns the
    sides' points of the games left and (None when there is none) the points
    the finished draws' Armageddons add to their White and Black."""
    assert st.arm_p is not None and st.arm_totals is not None
    win, loss = st.arm_totals
    white_won = rng.random(outcome.shape, dtype=np.float32) < st.arm_p
    drawn = outcome == 1
    sides = (
        np.where(drawn, np.where(white_won, win, loss), sides[0]),
        np.where(drawn, np.where(white_won, loss, win), sides[1]),
    )
    if st.arm_white is None or st.arm_white.size == 0:
        return sides, None
    assert st.arm_p_left is not None and st.arm_add_white is not None
    assert st.arm_add_black is not None
    sims = outcome.shape[1]
    won = rng.random((st.arm_white.size, sims), dtype=np.float32) < st.arm_p_left
    add_white = np.where(won, st.arm_add_white[0][:, None], st.arm_add_white[1][:, None])
    add_black = np.where(won, st.arm_add_black[0][:, None], st.arm_add_black[1][:, None])
    return sides, (add_white, add_black)


def _armageddon_points(st: _Setup, extra: tuple[Float, Float]) -> Float:
    """(n, sims) the points the finished draws' Armageddons add to each player."""
    assert st.arm_of_white is not None and st.arm_of_black is not None
    return np.asarray(st.arm_of_white @ extra[0] + st.arm_of_black @ extra[1], dtype=np.float64)


def _simulate_chunk(
    st: _Setup,
    sims: int,
    tiebreaks: Sequence[Tiebreak],
    playoff: Playoff,
    rng: np.random.Generator,
) -> tuple[Float, Float]:
    """Sums over ``sims`` simulations of each player's share of first place, and
    of its square."""
    # single precision is enough for a uniform compared with a probability (2^-24)
    u = rng.random((st.white.size, sims), dtype=np.float32)
    # White's points: 1 below p_white, 1/2 below p_white + p_draw, else 0
    s = (u < st.p_white).astype(np.float64)
    s += u < st.p_white_or_draw
    sides: tuple[Float, Float] | None = None
    extra: tuple[Float, Float] | None = None
    if st.white_points is None or st.black_points is None:
        s *= 0.5
        pts = np.asarray(st.base[:, None] + st.white_minus_black @ s, dtype=np.float64)
    else:
        outcome = s.astype(np.int8)  # 0 White lost, 1 drew, 2 won
        s *= 0.5
        sides = (st.white_points[outcome], st.black_points[outcome])
        if st.arm_p is not None:
            sides, extra = _armageddons(st, outcome, sides, rng)
        pts = np.asarray(
            st.base[:, None] + st.of_white @ sides[0] + st.of_black @ sides[1], dtype=np.float64
        )
        if extra is not None:
            pts += _armageddon_points(st, extra)
        if st.rounded:
            pts = np.round(pts, ROUND_DIGITS)
    cand = pts == pts.max(axis=0, keepdims=True)
    tied = np.flatnonzero(cand.sum(axis=0) > 1)
    first = cand.sum(axis=1).astype(np.float64)
    if tied.size == 0:
        return first, first.copy()
    c = cand.take(tied, axis=1)
    ts, tp = s.take(tied, axis=1), pts.take(tied, axis=1)
    tsides = None if sides is None else (sides[0].take(tied, axis=1), sides[1].take(tied, axis=1))
    textra = None if extra is None else (extra[0].take(tied, axis=1), extra[1].take(tied, axis=1))
    clear = first - c.sum(axis=1)
    for tb in tiebreaks:
        # only the simulations still tied
        still = np.flatnonzero(c.sum(axis=0) > 1)
        if still.size == 0:
            break
        sub = c[:, still]
        sub_sides = None if tsides is None else (tsides[0][:, still], tsides[1][:, still])
        sub_extra = None if textra is None else (textra[0][:, still], textra[1][:, still])
        key, reach = _tiebreak_key(tb, st, ts[:, still], tp[:, still], sub, sub_sides, sub_extra)
        c[:, still] = _top(key, sub) if reach is None else _top_direct_encounter(key, reach, sub)
    x = c / c.sum(axis=0, keepdims=True) if playoff == "share" else _playoff_ladder(st, c, rng)
    return clear + x.sum(axis=1), clear + (x * x).sum(axis=1)


def win_odds(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: Iterable[Result] = (),
    in_progress: Iterable[InProgress] = (),
    upcoming: Iterable[tuple[str, str]] = (),
    *,
    sims: int = 100_000,
    seed: int | None = None,
    tiebreaks: Iterable[str] = DEFAULT_TIEBREAKS,
    playoff: Playoff = "share",
    draw_rate: float = DEFAULT_DRAW_RATE,
    model: Model = "logistic",
    prior: RatingsWdl | None = None,
    scoring: Scoring = STANDARD,
    armageddons: Iterable[ArmageddonLeft] = (),
) -> dict[str, WinChance]:
    """Probability that each player finishes first, with its Monte Carlo standard error.

    ``players``: every participant (keys as in the results); ``ratings``: by
    key, needed for the players of ``upcoming`` games (for all players with
    ``playoff="rating"``); ``finished``: results so far; ``in_progress``:
    ``(white, black, wdl)`` with the live W/D/L; ``upcoming``: ``(white,
    black)`` not started. Round robin: all games left; Swiss: only the current
    round (the odds are then of leading after that round). ``seed`` makes the
    result reproducible (same ``sims`` and ``seed``, same numbers).
    ``prior``: the ratings-only W/D/L of games not started and of play-off
    games (None: ``draw_rate`` and the Elo ``model``). ``scoring``: the
    points of a win, a draw and a loss for each colour (default 1 / ½ / 0),
    and its Armageddon rule. ``armageddons``: with such a rule, the
    Armageddons of classical draws already in ``finished``, in progress
    (``(white, black, wdl)``) or not started (``(white, black, None)``);
    a classical draw in ``finished`` whose Armageddon is not there and not
    over counts as the draw alone.
    """
    if sims < 2:
        raise ValueError(f"need at least 2 simulations, got {sims}")
    done = list(finished)
    live = list(in_progress)
    later = list(upcoming)
    arms = list(armageddons)
    order = tiebreak_names(tiebreaks)
    _check(
        players,
        ratings,
        done,
        live,
        later,
        playoff,
        draw_rate,
        None if scoring.armageddon is None else arms,
    )
    st = _setup(
        players, ratings, done, live, later, playoff, draw_rate, model, prior, scoring, arms
    )
    rng = np.random.default_rng(seed)
    total = np.zeros(len(players))
    squares = np.zeros(len(players))
    left = sims
    while left:
        batch = min(CHUNK, left)
        first, first_sq = _simulate_chunk(st, batch, order, playoff, rng)
        total += first
        squares += first_sq
        left -= batch
    mean = total / sims
    var = np.maximum(squares / sims - mean * mean, 0.0) * sims / (sims - 1)
    se = np.sqrt(var / sims)
    return {p: WinChance(float(mean[k]), float(se[k])) for k, p in enumerate(players)}


def _ladder_exact(
    tied: Sequence[str], decisive: Mapping[tuple[str, str], float]
) -> dict[str, float]:
    """Exact win probabilities of the play-off ladder, averaged over all orders."""
    out = dict.fromkeys(tied, 0.0)
    orders = list(itertools.permutations(tied))
    for order in orders:
        champion = {order[0]: 1.0}
        for challenger in order[1:]:
            nxt: dict[str, float] = {}
            for holder, q in champion.items():
                keep = decisive[(holder, challenger)]
                nxt[holder] = nxt.get(holder, 0.0) + q * keep
                nxt[challenger] = nxt.get(challenger, 0.0) + q * (1.0 - keep)
            champion = nxt
        for p, q in champion.items():
            out[p] += q / len(orders)
    return out


def exact_win_odds(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: Iterable[Result] = (),
    in_progress: Iterable[InProgress] = (),
    upcoming: Iterable[tuple[str, str]] = (),
    *,
    tiebreaks: Iterable[str] = DEFAULT_TIEBREAKS,
    playoff: Playoff = "share",
    draw_rate: float = DEFAULT_DRAW_RATE,
    model: Model = "logistic",
    prior: RatingsWdl | None = None,
    scoring: Scoring = STANDARD,
    armageddons: Iterable[ArmageddonLeft] = (),
) -> dict[str, float]:
    """The probabilities of :func:`win_odds`, exactly, by enumerating every
    outcome of the games left (3 per game; with an Armageddon rule 4 per
    classical game, a draw being settled by White's or Black's Armageddon
    win, and 2 per Armageddon left; at most 3^:data:`EXACT_MAX_GAMES`
    outcomes in all) and ranking each with
    :class:`~livegain.core.standings.Standings`."""
    done = list(finished)
    live = list(in_progress)
    later = list(upcoming)
    arms = list(armageddons)
    order = tiebreak_names(tiebreaks)
    rule = scoring.armageddon
    _check(players, ratings, done, live, later, playoff, draw_rate, None if rule is None else arms)
    if rule is None and arms:
        raise ValueError("Armageddon games, but the scoring has no Armageddon rule")
    games: list[tuple[str, str, tuple[float, float, float]]] = [
        (w, b, _normalise_wdl(wdl, f"{w} - {b}")) for w, b, wdl in live
    ]
    games += [(w, b, _rating_wdl(ratings, w, b, draw_rate, model, prior)) for w, b in later]
    # per game left: its outcomes, each (probability, what it does to the results)
    choices: list[list[tuple[float, Result | tuple[int, Result]]]] = []
    for w, b, (pw, pd, pl) in games:
        outcomes: list[tuple[float, Result | tuple[int, Result]]] = [
            (pw, Result.game(w, b, "1-0")),
            (pl, Result.game(w, b, "0-1")),
        ]
        draw = Result.game(w, b, "1/2-1/2")
        if rule is None:
            outcomes.append((pd, draw))
        else:
            pa = _armageddon_white_wins(armageddon_wdl(ratings[w], ratings[b], model), scoring)
            outcomes.append((pd * pa, draw.with_armageddon(w, "1-0")))
            outcomes.append((pd * (1.0 - pa), draw.with_armageddon(w, "0-1")))
        choices.append(outcomes)
    for white, black, wdl in arms:
        k = classical_draw(done, white, black)
        if k is None:
            raise ValueError(f"Armageddon {white} - {black}: no classical draw between them")
        live_wdl = (
            armageddon_wdl(ratings[white], ratings[black], model)
            if wdl is None
            else _normalise_wdl(wdl, f"Armageddon {white} - {black}")
        )
        pa = _armageddon_white_wins(live_wdl, scoring)
        draw = done[k]
        done[k] = draw.with_armageddon(white, "1-0")  # claimed: one Armageddon per draw
        choices.append(
            [
                (pa, (k, draw.with_armageddon(white, "1-0"))),
                (1.0 - pa, (k, draw.with_armageddon(white, "0-1"))),
            ]
        )
    if math.prod(len(c) for c in choices) > 3**EXACT_MAX_GAMES:
        raise ValueError(
            f"{len(choices)} games left: exact enumeration takes at most "
            f"3^{EXACT_MAX_GAMES} outcomes"
        )
    decisive: dict[tuple[str, str], float] = {}
    if playoff == "rating":
        matrix = _decisive(players, ratings, draw_rate, model, prior)
        for i, a in enumerate(players):
            for j, b in enumerate(players):
                decisive[(a, b)] = float(matrix[i, j])
    out = dict.fromkeys(players, 0.0)
    for combo in itertools.product(*choices):
        prob = 1.0
        results = list(done)
        for q, change in combo:
            prob *= q
            if isinstance(change, Result):
                results.append(change)
            else:
                results[change[0]] = change[1]
        if prob == 0.0:
            continue
        leaders = Standings.from_results(results, order, players, scoring).leaders()
        if len(leaders) == 1:
            out[leaders[0]] += prob
        elif playoff == "share":
            for p in leaders:
                out[p] += prob / len(leaders)
        else:
            for p, q in _ladder_exact(leaders, decisive).items():
                out[p] += prob * q
    return out


def contenders(
    players: Sequence[str],
    finished: Iterable[Result] = (),
    left: Iterable[tuple[str, str]] = (),
    scoring: Scoring = STANDARD,
) -> list[str]:
    """Players not yet out of the running by the simple bound: points so far plus
    a win in every game left (the larger win of ``scoring``) reach at least the
    current leader's points."""
    points = dict.fromkeys(players, 0.0)
    games_left = dict.fromkeys(players, 0)
    for r in finished:
        if r.black is None:
            points[r.white] += r.white_points
            continue
        white, black = result_points(r, scoring)
        points[r.white] += white
        points[r.black] += black
    for w, b in left:
        games_left[w] += 1
        games_left[b] += 1
    leader = max(points.values())
    tidy = scoring.tidy
    return [p for p in players if tidy(points[p] + scoring.most * games_left[p]) >= tidy(leader)]
