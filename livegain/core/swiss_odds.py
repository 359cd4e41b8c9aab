"""Odds of winning a Swiss event: every round left simulated, pairings included.

:func:`swiss_win_odds` plays the current round's games (in progress: the
live W/D/L; not started: the ratings' W/D/L), then each round left: it pairs
the round from the simulated standings (points, colour history, pairs met,
byes), plays it from the ratings, and so on to the last round; then ranks the
players by points and the tie-breaks, with the same definitions as
:class:`livegain.core.standings.Standings` (computed on all simulations at
once; ``direct_encounter``, when asked for, is taken from
``Standings.from_results`` in the simulations where it is needed). A tie still
level after the last tie-break is shared: k players tied across the first
place each get 1/k of it; a tie across the top-``top_k`` boundary shares the
places left among its members (:func:`place_shares`).

The pairing of the rounds left (``pairing``):

``batch`` (the default)
    :func:`livegain.core.swiss_batch.pair_batch`: each round paired in all
    simulations at once, a vectorised approximation of the Dutch system.
``dutch``
    :func:`livegain.core.swiss_pairing.pair_indices`, one simulation at a
    time: closer to the Dutch system (its depth-first searches), plain Python,
    about 50 times slower.

Per player: the probability of finishing first and of finishing in the top
``top_k``, each with its Monte Carlo standard error ``sd(x)/sqrt(sims)``
(:class:`Tally`).

Scope: the standard scoring (1 / ½ / 0); a pairing-allocated bye in a later
round is worth ``bye_points``; every player plays every round left (no
withdrawals, no requested byes); ratings stay fixed.

Pure: no I/O, no clock; randomness only from the seeded numpy Generator.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
import numpy.typing as npt

from livegain.core.elo import Model
from livegain.core.odds import game_probabilities
from livegain.core.scoring import STANDARD
from livegain.core.standings import Result, Standings, Tiebreak, tiebreak_names
from livegain.core.swiss_batch import BLACK, WHITE, pair_batch
from livegain.core.swiss_pairing import pair_indices
from livegain.core.tournament_odds import DEFAULT_DRAW_RATE, InProgress, RatingsWdl

SWISS_TIEBREAKS: tuple[Tiebreak, ...] = ("buchholz_cut1", "buchholz", "sonneborn_berger")
"""A usual order for a Swiss: Buchholz cut-1, Buchholz, Sonneborn-Berger."""

Pairer = Literal["batch", "dutch"]
PAIRERS: tuple[Pairer, ...] = get_args(Pairer)

CHUNK = 2_000
"""Simulations done at once with the batch pairing (memory bound); results
depend on ``sims`` and ``seed`` only."""
DUTCH_CHUNK = 500
"""Simulations done at once with the per-simulation pairing."""
MIN_PRECISE = CHUNK
"""Simulations before a standard error is trusted to stop early, or to tell
how many more are needed."""
MIN_MORE = 100
"""The fewest simulations run at once after :data:`MIN_PRECISE`."""

Float = npt.NDArray[np.float64]
Int = npt.NDArray[np.int64]

_NONE = -2  # no result in that slot
_UNPLAYED = -1  # a bye or a forfeit: an unplayed round
_COLOUR = {"W": WHITE, "B": BLACK, "-": 0}


class SwissChance(NamedTuple):
    """Chances of finishing first and in the top k, with their standard errors."""

    p_first: float
    se_first: float
    p_top: float
    se_top: float


class Chances(dict[str, SwissChance]):
    """Each entrant's chances, by name, and the simulations behind them
    (fewer than asked for when the chances were precise enough sooner)."""

    def __init__(self, chances: Mapping[str, SwissChance], sims: int) -> None:
        super().__init__(chances)
        self.sims = sims


class Tally:
    """Sums over simulations of each entrant's shares of first place and of the
    top k (and of their squares): the chances and their standard errors."""

    def __init__(self, n: int) -> None:
        self.sims = 0
        self.first = np.zeros(n)
        self.first_sq = np.zeros(n)
        self.top = np.zeros(n)
        self.top_sq = np.zeros(n)

    def add(self, first: Float, top: Float) -> None:
        """Add simulations: shares (sims x entrants)."""
        self.sims += first.shape[0]
        self.first += first.sum(axis=0)
        self.first_sq += (first * first).sum(axis=0)
        self.top += top.sum(axis=0)
        self.top_sq += (top * top).sum(axis=0)

    def _mean_se(self, total: Float, squares: Float) -> tuple[list[float], list[float]]:
        sims = self.sims
        mean = total / sims
        var = np.maximum(squares / sims - mean * mean, 0.0) * sims / (sims - 1)
        return mean.tolist(), np.sqrt(var / sims).tolist()

    def chances(self, names: Sequence[str]) -> Chances:
        """Each entrant's chances (``names`` in the entrants' order)."""
        pf, sf = self._mean_se(self.first, self.first_sq)
        pt, st = self._mean_se(self.top, self.top_sq)
        each = [SwissChance(*c) for c in zip(pf, sf, pt, st, strict=True)]
        return Chances(dict(zip(names, each, strict=True)), self.sims)

    def worst_se(self) -> float:
        """The largest standard error of a chance of first place."""
        return max(self._mean_se(self.first, self.first_sq)[1])

    def precise(self, precision: float | None) -> bool:
        """Whether every entrant's chance of first place is known to a
        standard error of ``precision`` or less (None: never, all the
        simulations asked for are run), after :data:`MIN_PRECISE` at least."""
        if precision is None or self.sims < MIN_PRECISE:
            return False
        return self.worst_se() <= precision


def chunks(sims: int, size: int, tally: Tally, precision: float | None) -> Iterator[int]:
    """The sizes of the chunks of simulations to run, ``size`` at most, up to
    ``sims`` in all; with a ``precision``, only as many as it needs: after
    :data:`MIN_PRECISE`, the standard error's fall as one over the root of
    the simulations tells how many more (1 % over), and the next chunks run
    those, until ``tally`` is :meth:`~Tally.precise`."""
    left = sims
    while left and not tally.precise(precision):
        want = left
        if precision is not None and tally.sims >= MIN_PRECISE:
            more = tally.sims * ((tally.worst_se() / precision) ** 2 * 1.01 - 1.0)
            want = min(left, max(MIN_MORE, math.ceil(more)))
        s_n = min(size, want)
        left -= s_n
        yield s_n


def copies(x: npt.NDArray[Any], sims: int) -> npt.NDArray[Any]:
    """``sims`` copies of ``x`` stacked on a new first axis (as ``np.tile``,
    several times faster on large boolean arrays)."""
    return np.broadcast_to(x, (sims, *x.shape)).copy()


def pair_wdl(
    white: Sequence[float],
    black: Sequence[float],
    draw_rate: float,
    model: Model,
    prior: RatingsWdl | None,
) -> tuple[Float, Float]:
    """White's win and win-or-draw probabilities for every White rating of
    ``white`` against every Black rating of ``black`` (len(white) x
    len(black)): ``prior.probabilities`` when given, else
    :func:`~livegain.core.odds.game_probabilities` of the difference; each
    distinct pair (or difference) computed once."""
    rw = np.asarray(white, dtype=np.float64)
    rb = np.asarray(black, dtype=np.float64)
    if prior is None:
        diff = rw[:, None] - rb[None, :]
        values, inverse = np.unique(diff, return_inverse=True)
        win = np.empty(values.size)
        draw = np.empty(values.size)
        for k, d in enumerate(values.tolist()):
            g = game_probabilities(d, draw_rate, model)
            win[k], draw[k] = g.win, g.draw
        inverse = inverse.reshape(diff.shape)
        return win[inverse], win[inverse] + draw[inverse]
    uw, iw = np.unique(rw, return_inverse=True)
    ub, ib = np.unique(rb, return_inverse=True)
    win = np.empty((uw.size, ub.size))
    win_draw = np.empty((uw.size, ub.size))
    for i, a in enumerate(uw.tolist()):
        for j, b in enumerate(ub.tolist()):
            w, d, lo = (max(0.0, x) for x in prior.probabilities(a, b))
            total = w + d + lo
            if total <= 0:
                raise ValueError(f"ratings {a} - {b}: the model gave no probability")
            win[i, j], win_draw[i, j] = w / total, (w + d) / total
    return win[np.ix_(iw, ib)], win_draw[np.ix_(iw, ib)]


class _DutchState:
    """Per-simulation state of the ``dutch`` pairing (plain Python)."""

    def __init__(
        self, colours: Sequence[str], had_bye: Sequence[bool], met: Collection[int], sims: int
    ) -> None:
        self.n = len(colours)
        self.colours = [list(colours) for _ in range(sims)]
        self.byes = [list(had_bye) for _ in range(sims)]
        self.met = [set(met) for _ in range(sims)]

    def pair(self, points: Float) -> tuple[Int, Int, Int]:
        sims = len(self.colours)
        q = self.n // 2
        white = np.zeros((sims, q), dtype=np.int64)
        black = np.zeros((sims, q), dtype=np.int64)
        bye = np.full(sims, -1, dtype=np.int64)
        for s in range(sims):
            games, b = pair_indices(points[s].tolist(), self.colours[s], self.byes[s], self.met[s])
            white[s] = [g[0] for g in games]
            black[s] = [g[1] for g in games]
            bye[s] = b
        return white, black, bye

    def record(self, white: Int, black: Int, bye: Int) -> None:
        n = self.n
        for s, (ws, bs, b) in enumerate(
            zip(white.tolist(), black.tolist(), bye.tolist(), strict=True)
        ):
            cols, met = self.colours[s], self.met[s]
            for w, bl in zip(ws, bs, strict=True):
                cols[w] += "W"
                cols[bl] += "B"
                met.add(min(w, bl) * n + max(w, bl))
            if b >= 0:
                cols[b] += "-"
                self.byes[s][b] = True


def _wdl(
    ratings: Mapping[str, float],
    white: str,
    black: str,
    draw_rate: float,
    model: Model,
    prior: RatingsWdl | None,
) -> tuple[float, float, float]:
    if prior is not None:
        w, d, lo = (max(0.0, x) for x in prior.probabilities(ratings[white], ratings[black]))
        total = w + d + lo
        if total <= 0:
            raise ValueError(f"{white} - {black}: the model gave no probability")
        return w / total, d / total, lo / total
    g = game_probabilities(ratings[white] - ratings[black], draw_rate, model)
    return g.win, g.draw, g.loss


def normalise_wdl(wdl: Sequence[float], where: str) -> tuple[float, float, float]:
    """A live W/D/L as probabilities (divided by its sum); ValueError naming ``where``."""
    if len(wdl) != 3:
        raise ValueError(f"{where}: a W/D/L has 3 numbers, got {len(wdl)}")
    w, d, lo = (float(x) for x in wdl)
    total = w + d + lo
    if min(w, d, lo) < 0 or not total > 0:
        raise ValueError(f"{where}: W/D/L must be non-negative with a positive sum, got {wdl}")
    return w / total, d / total, lo / total


def place_shares(keys: Sequence[Float], top_k: int) -> tuple[Float, Float, Float]:
    """Shares of first place and of the top k (sims x players) from the keys
    (points first, then the tie-breaks), highest first; and, per simulation,
    whether a tie of two or more players touches the top k."""
    sims, n = keys[0].shape
    order = np.lexsort([-k for k in reversed(keys)], axis=-1)
    same = np.ones((sims, n - 1), dtype=bool)
    for k in keys:
        s = np.take_along_axis(k, order, axis=1)
        same &= s[:, 1:] == s[:, :-1]
    new = np.concatenate([np.ones((sims, 1), dtype=bool), ~same], axis=1)
    last = np.concatenate([~same, np.ones((sims, 1), dtype=bool)], axis=1)
    pos = np.arange(n)
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, pos, n)[:, ::-1], axis=1)[:, ::-1]
    size = (end - start + 1).astype(np.float64)
    first_sorted = (start == 0) / size
    top_sorted = np.clip(top_k - start, 0, size) / size
    first = np.empty((sims, n))
    top = np.empty((sims, n))
    np.put_along_axis(first, order, first_sorted, axis=1)
    np.put_along_axis(top, order, top_sorted, axis=1)
    touched = np.asarray(((size > 1) & (start < top_k)).any(axis=1), dtype=np.float64)
    return first, top, touched


def _tiebreaks(names: Sequence[Tiebreak], pts: Float, opp: Int, gp: Float) -> list[Float]:
    """Values of the tie-breaks ``names`` (each sims x players) from the final
    points and the slots: ``opp`` the opponent (>= 0), ``_UNPLAYED`` or
    ``_NONE``; ``gp`` own game points."""
    sims = opp.shape[0]
    played = opp >= 0
    unplayed = opp == _UNPLAYED
    theirs = np.where(played, pts[np.arange(sims)[:, None, None], np.where(played, opp, 0)], 0.0)
    bh = np.asarray(theirs.sum(axis=2) + unplayed.sum(axis=2) * pts, dtype=np.float64)
    out: list[Float] = []
    for tb in names:
        if tb == "wins":
            out.append(np.asarray(((gp == 1.0) & (opp != _NONE)).sum(axis=2), dtype=np.float64))
        elif tb == "won":
            out.append(np.asarray(((gp == 1.0) & played).sum(axis=2), dtype=np.float64))
        elif tb == "sonneborn_berger":
            own = np.where(unplayed, pts[:, :, None], theirs)
            out.append(np.asarray((own * gp).sum(axis=2), dtype=np.float64))
        elif tb == "buchholz":
            out.append(bh)
        elif tb == "buchholz_cut1":
            weakest = np.where(played, theirs, np.inf).min(axis=2)
            cut = np.where(unplayed.any(axis=2), pts, np.where(np.isfinite(weakest), weakest, 0.0))
            out.append(np.asarray(bh - cut, dtype=np.float64))
        else:
            raise ValueError(f"no vectorised value for tie-break {tb!r}")
    return out


def swiss_win_odds(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: Iterable[Result] = (),
    in_progress: Iterable[InProgress] = (),
    upcoming: Iterable[tuple[str, str]] = (),
    *,
    round: int,
    rounds_total: int,
    sims: int = 2_000,
    seed: int | None = None,
    top_k: int = 1,
    tiebreaks: Iterable[str] = SWISS_TIEBREAKS,
    bye_points: float = 1.0,
    met: Iterable[tuple[str, str]] = (),
    draw_rate: float = DEFAULT_DRAW_RATE,
    model: Model = "logistic",
    prior: RatingsWdl | None = None,
    pairing: Pairer = "batch",
    precision: float | None = None,
) -> Chances:
    """Chances of winning (and of a top-``top_k`` place in) a Swiss of
    ``rounds_total`` rounds, ``round`` being the current one.

    ``players``: every participant; the initial order (pairing numbers) is by
    rating, highest first, ties in the order given. ``ratings``: every
    player's (unrated players: a rating the caller chooses). ``finished``:
    every finished result with its ``round`` (rounds 1..``round``: this
    round's finished games and byes included); colours and pairs met come
    from them, and ``met`` adds pairs that met without a result here.
    ``in_progress`` (live W/D/L, White's view) and ``upcoming``: the current
    round's other games. A bye worth ``bye_points`` counts as a
    pairing-allocated bye (that player gets no other). Games not started,
    now and later: ``prior.probabilities(white, black)`` when given, else
    :func:`~livegain.core.odds.game_probabilities` with ``draw_rate`` and
    ``model``. ``pairing``: how the rounds left are paired, ``"batch"``
    (:func:`livegain.core.swiss_batch.pair_batch`, all simulations at once)
    or ``"dutch"`` (:func:`livegain.core.swiss_pairing.pair_indices`, one
    simulation at a time: closer to the Dutch system, about 50 times slower).
    ``precision``: stop before ``sims`` once every chance of first place has
    a standard error this small (:meth:`Tally.precise`); the result's
    ``sims`` says how many were run.
    """
    done = list(finished)
    live = [(w, b, normalise_wdl(wdl, f"{w} - {b}")) for w, b, wdl in in_progress]
    later = list(upcoming)
    order_tb = tiebreak_names(tiebreaks)
    n = len(players)
    index = {p: k for k, p in enumerate(players)}
    if len(index) != n or n < 2:
        raise ValueError("need at least two players, each listed once")
    if sims < 2:
        raise ValueError(f"need at least 2 simulations, got {sims}")
    if not 1 <= round <= rounds_total:
        raise ValueError(f"round {round} is not within 1..{rounds_total}")
    if pairing not in PAIRERS:
        raise ValueError(f"unknown pairing {pairing!r}; expected one of {PAIRERS}")
    if not 1 <= top_k <= n:
        raise ValueError(f"top_k must lie in 1..{n}, got {top_k}")
    missing = [p for p in players if p not in ratings]
    if missing:
        raise ValueError(f"no rating for: {', '.join(missing)}")
    # players in initial order: index i is pairing number i + 1
    initial = sorted(range(n), key=lambda k: (-ratings[players[k]], k))
    keys = [players[k] for k in initial]
    idx = {p: i for i, p in enumerate(keys)}

    def at(p: str) -> int:
        if p not in idx:
            raise ValueError(f"not in the players: {p}")
        return idx[p]

    points = [0.0] * n
    colours = [["-"] * round for _ in range(n)]
    had_bye = [False] * n
    seen: set[int] = set()
    fixed: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for r in done:
        if r.round is None or not 1 <= r.round <= round:
            raise ValueError(f"finished result {r} needs a round within 1..{round}")
        w = at(r.white)
        if r.black is None:
            points[w] += r.white_points
            had_bye[w] = had_bye[w] or r.white_points == bye_points
            fixed[w].append((_UNPLAYED, STANDARD.bye_game_points(r.white_points)))
            continue
        b = at(r.black)
        points[w] += r.white_points
        points[b] += r.black_points
        seen.add(min(w, b) * n + max(w, b))
        if r.played:
            colours[w][r.round - 1] = "W"
            colours[b][r.round - 1] = "B"
            fixed[w].append((b, r.white_points))
            fixed[b].append((w, r.black_points))
        else:
            fixed[w].append((_UNPLAYED, r.white_points))
            fixed[b].append((_UNPLAYED, r.black_points))
    for a, b_ in met:
        i, j = at(a), at(b_)
        seen.add(min(i, j) * n + max(i, j))
    current: list[tuple[int, int, tuple[float, float, float]]] = []
    for w_key, b_key, wdl in live:
        current.append((at(w_key), at(b_key), wdl))
    for w_key, b_key in later:
        current.append((at(w_key), at(b_key), _wdl(ratings, w_key, b_key, draw_rate, model, prior)))
    for w, b, _ in current:
        if w == b:
            raise ValueError(f"player {keys[w]!r} paired with himself")
        colours[w][round - 1] = "W"
        colours[b][round - 1] = "B"
        seen.add(min(w, b) * n + max(w, b))
    base_colours = ["".join(c) for c in colours]
    future = rounds_total - round
    # W/D/L of every ordered pair, for the rounds left
    p_w = np.zeros((n, n))
    p_wd = np.zeros((n, n))
    if future:
        rated = [ratings[k] for k in keys]
        p_w, p_wd = pair_wdl(rated, rated, draw_rate, model, prior)
    cur_w = np.array([c[0] for c in current], dtype=np.int64)
    cur_b = np.array([c[1] for c in current], dtype=np.int64)
    cur_pw = np.array([c[2][0] for c in current])[:, None]
    cur_pwd = np.array([c[2][0] + c[2][1] for c in current])[:, None]
    tf = max((len(f) for f in fixed), default=0)
    fixed_opp = np.full((n, tf), _NONE, dtype=np.int64)
    fixed_gp = np.zeros((n, tf))
    for i, f in enumerate(fixed):
        for t, (o, g) in enumerate(f):
            fixed_opp[i, t] = o
            fixed_gp[i, t] = g
    base_met = np.zeros((n, n), dtype=bool)
    for pair in seen:
        lo, hi = divmod(pair, n)
        base_met[lo, hi] = base_met[hi, lo] = True
    base_hist = np.array(
        [[_COLOUR[c] for c in cols] for cols in base_colours], dtype=np.int8
    ).reshape(n, round)
    base_hist = np.concatenate([base_hist, np.zeros((n, future), dtype=np.int8)], axis=1)
    bye_game = STANDARD.bye_game_points(bye_points)
    need_de = "direct_encounter" in order_tb
    cut = order_tb.index("direct_encounter") if need_de else len(order_tb)
    rng = np.random.default_rng(seed)
    tally = Tally(n)
    chunk = CHUNK if pairing == "batch" else DUTCH_CHUNK
    for s_n in chunks(sims, chunk, tally, precision):
        rows = np.arange(s_n)[:, None]
        u_cur = rng.random((len(current), s_n))
        s_cur = (u_cur < cur_pw).astype(np.float64) * 0.5 + (u_cur < cur_pwd) * 0.5
        slots = 1 + future
        opp = np.full((s_n, n, tf + slots), _NONE, dtype=np.int64)
        gp = np.zeros((s_n, n, tf + slots))
        opp[:, :, :tf] = fixed_opp
        gp[:, :, :tf] = fixed_gp
        cur_opp = np.full(n, _NONE, dtype=np.int64)
        cur_opp[cur_w] = cur_b
        cur_opp[cur_b] = cur_w
        opp[:, :, tf] = cur_opp
        pts = copies(np.asarray(points), s_n)
        gp[rows, cur_w[None, :], tf] = s_cur.T
        gp[rows, cur_b[None, :], tf] = 1.0 - s_cur.T
        np.add.at(pts.T, cur_w, s_cur)
        np.add.at(pts.T, cur_b, 1.0 - s_cur)
        hist = copies(base_hist, s_n)
        byes = copies(np.asarray(had_bye, dtype=bool), s_n)
        met = copies(base_met, s_n)
        dutch = _DutchState(base_colours, had_bye, seen, s_n) if pairing == "dutch" else None
        played: list[tuple[Int, Int, Float, Int]] = []
        for t in range(future):
            if dutch is not None:
                white, black, bye = dutch.pair(pts)
            else:
                white, black, bye = pair_batch(pts, hist, byes, met)
            u = rng.random(white.shape)
            x = (u < p_w[white, black]) * 0.5 + (u < p_wd[white, black]) * 0.5
            slot = tf + 1 + t
            pts[rows, white] += x
            pts[rows, black] += 1.0 - x
            opp[rows, white, slot] = black
            opp[rows, black, slot] = white
            gp[rows, white, slot] = x
            gp[rows, black, slot] = 1.0 - x
            hist[rows, white, round + t] = WHITE
            hist[rows, black, round + t] = BLACK
            met[rows, white, black] = True
            met[rows, black, white] = True
            got = np.flatnonzero(bye >= 0)
            pts[got, bye[got]] += bye_points
            byes[got, bye[got]] = True
            opp[got, bye[got], slot] = _UNPLAYED
            gp[got, bye[got], slot] = bye_game
            if dutch is not None:
                dutch.record(white, black, bye)
            played.append((white, black, x, bye))
        keys_tb = [pts, *_tiebreaks(order_tb[:cut], pts, opp, gp)]
        first, top, touched = place_shares(keys_tb, top_k)
        if need_de:
            for s in np.flatnonzero(touched).tolist():
                records = [
                    Result(keys[w], keys[b], float(x), 1.0 - float(x), True, round)
                    for w, b, x in zip(
                        cur_w.tolist(), cur_b.tolist(), s_cur[:, s].tolist(), strict=True
                    )
                ]
                for t, (white, black, x, bye) in enumerate(played):
                    records += [
                        Result(keys[w], keys[b], xx, 1.0 - xx, True, round + t + 1)
                        for w, b, xx in zip(
                            white[s].tolist(), black[s].tolist(), x[s].tolist(), strict=True
                        )
                    ]
                    if bye[s] >= 0:
                        records.append(
                            Result(keys[int(bye[s])], None, bye_points, 0.0, False, round + t + 1)
                        )
                st = Standings.from_results(done + records, order_tb, keys)
                first[s], top[s] = _rank_shares(st, idx, top_k)
        tally.add(first, top)
    return tally.chances(keys)


def _rank_shares(st: Standings, idx: Mapping[str, int], top_k: int) -> tuple[Float, Float]:
    """Shares of first place and of the top k from ranked standings."""
    n = len(idx)
    first = np.zeros(n)
    top = np.zeros(n)
    by_rank: dict[int, list[str]] = {}
    for r in st.rows:
        by_rank.setdefault(r.rank, []).append(r.player)
    for rank, group in by_rank.items():
        start, size = rank - 1, len(group)
        for p in group:
            first[idx[p]] = (start == 0) / size
            top[idx[p]] = min(max(top_k - start, 0), size) / size
    return first, top
