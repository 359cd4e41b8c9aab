"""Odds of winning a Swiss event: every round left simulated, pairings included.

:func:`swiss_win_odds` plays the current round's games (in progress: the
live W/D/L; not started: the ratings' W/D/L), then each round left: it pairs
the round with :func:`livegain.core.swiss_pairing.pair_indices` from the
simulated standings (points, colour history, pairs met, byes), plays it from
the ratings, and so on to the last round; then ranks the players by points and
the tie-breaks, with the same definitions as
:class:`livegain.core.standings.Standings` (computed on all simulations at
once; ``direct_encounter``, when asked for, is taken from
``Standings.from_results`` in the simulations where it is needed). A tie still
level after the last tie-break is shared: k players tied across the first
place each get 1/k of it; a tie across the top-``top_k`` boundary shares the
places left among its members.

Per player: the probability of finishing first and of finishing in the top
``top_k``, each with its Monte Carlo standard error ``sd(x)/sqrt(sims)``.

Scope: the standard scoring (1 / ½ / 0); a pairing-allocated bye in a later
round is worth ``bye_points``; every player plays every round left (no
withdrawals, no requested byes); ratings stay fixed.

The pairing is plain Python, one simulation and one round at a time: that
loop is the cost (see docs/standings.md §9).

Pure: no I/O, no clock; randomness only from the seeded numpy Generator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from livegain.core.elo import Model
from livegain.core.odds import game_probabilities
from livegain.core.scoring import STANDARD
from livegain.core.standings import Result, Standings, Tiebreak, tiebreak_names
from livegain.core.swiss_pairing import pair_indices
from livegain.core.tournament_odds import DEFAULT_DRAW_RATE, InProgress, RatingsWdl

SWISS_TIEBREAKS: tuple[Tiebreak, ...] = ("buchholz_cut1", "buchholz", "sonneborn_berger")
"""A usual order for a Swiss: Buchholz cut-1, Buchholz, Sonneborn-Berger."""

CHUNK = 2_000
"""Simulations ranked at once (memory bound); results depend on ``sims`` and ``seed`` only."""

Float = npt.NDArray[np.float64]
Int = npt.NDArray[np.int64]

_NONE = -2  # no result in that slot
_UNPLAYED = -1  # a bye or a forfeit: an unplayed round


class SwissChance(NamedTuple):
    """Chances of finishing first and in the top k, with their standard errors."""

    p_first: float
    se_first: float
    p_top: float
    se_top: float


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


def _normalise(wdl: Sequence[float], where: str) -> tuple[float, float, float]:
    if len(wdl) != 3:
        raise ValueError(f"{where}: a W/D/L has 3 numbers, got {len(wdl)}")
    w, d, lo = (float(x) for x in wdl)
    total = w + d + lo
    if min(w, d, lo) < 0 or not total > 0:
        raise ValueError(f"{where}: W/D/L must be non-negative with a positive sum, got {wdl}")
    return w / total, d / total, lo / total


def _shares(keys: Sequence[Float], top_k: int) -> tuple[Float, Float, Float]:
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


def _tiebreak(tb: Tiebreak, pts: Float, opp: Int, gp: Float) -> Float:
    """Values of ``tb`` (sims x players) from the final points and the slots:
    ``opp`` the opponent (>= 0), ``_UNPLAYED`` or ``_NONE``; ``gp`` own game points."""
    sims = opp.shape[0]
    played = opp >= 0
    unplayed = opp == _UNPLAYED
    if tb == "wins":
        return np.asarray(((gp == 1.0) & (opp != _NONE)).sum(axis=2), dtype=np.float64)
    if tb == "won":
        return np.asarray(((gp == 1.0) & played).sum(axis=2), dtype=np.float64)
    rows = np.arange(sims)[:, None, None]
    theirs = pts[rows, np.where(played, opp, 0)]
    own = pts[:, :, None]
    if tb == "sonneborn_berger":
        return np.asarray(
            (np.where(played, theirs, 0.0) * gp + np.where(unplayed, own, 0.0) * gp).sum(axis=2),
            dtype=np.float64,
        )
    total = np.asarray(
        np.where(played, theirs, 0.0).sum(axis=2) + unplayed.sum(axis=2) * pts, dtype=np.float64
    )
    if tb == "buchholz":
        return total
    if tb == "buchholz_cut1":
        weakest = np.where(played, theirs, np.inf).min(axis=2)
        cut = np.where(unplayed.any(axis=2), pts, np.where(np.isfinite(weakest), weakest, 0.0))
        return np.asarray(total - cut, dtype=np.float64)
    raise ValueError(f"no vectorised value for tie-break {tb!r}")


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
) -> dict[str, SwissChance]:
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
    ``model``.
    """
    done = list(finished)
    live = [(w, b, _normalise(wdl, f"{w} - {b}")) for w, b, wdl in in_progress]
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
    p_w = [[0.0] * n for _ in range(n)]
    p_wd = [[0.0] * n for _ in range(n)]
    if future:
        for i in range(n):
            for j in range(n):
                if i != j:
                    w_, d_, _ = _wdl(ratings, keys[i], keys[j], draw_rate, model, prior)
                    p_w[i][j] = w_
                    p_wd[i][j] = w_ + d_
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
    bye_game = STANDARD.bye_game_points(bye_points)
    need_de = "direct_encounter" in order_tb
    cut = order_tb.index("direct_encounter") if need_de else len(order_tb)
    rng = np.random.default_rng(seed)
    first_sum = np.zeros(n)
    first_sq = np.zeros(n)
    top_sum = np.zeros(n)
    top_sq = np.zeros(n)
    left = sims
    while left:
        s_n = min(CHUNK, left)
        left -= s_n
        u_cur = rng.random((len(current), s_n))
        s_cur = (u_cur < cur_pw).astype(np.float64) * 0.5 + (u_cur < cur_pwd) * 0.5
        u_fut = rng.random((s_n, future, n // 2))
        slots = 1 + future
        opp = np.full((s_n, n, tf + slots), _NONE, dtype=np.int64)
        gp = np.zeros((s_n, n, tf + slots))
        opp[:, :, :tf] = fixed_opp
        gp[:, :, :tf] = fixed_gp
        cur_opp = np.full(n, _NONE, dtype=np.int64)
        cur_opp[cur_w] = cur_b
        cur_opp[cur_b] = cur_w
        opp[:, :, tf] = cur_opp
        pts = np.tile(np.asarray(points), (s_n, 1))
        gp[np.arange(s_n)[:, None], cur_w[None, :], tf] = s_cur.T
        gp[np.arange(s_n)[:, None], cur_b[None, :], tf] = 1.0 - s_cur.T
        np.add.at(pts.T, cur_w, s_cur)
        np.add.at(pts.T, cur_b, 1.0 - s_cur)
        records: list[list[Result]] = []
        for s in range(s_n):
            row = pts[s].tolist()
            cols = list(base_colours)
            byes = list(had_bye)
            met_s = set(seen)
            extra: list[Result] = []
            if need_de:
                extra = [
                    Result(keys[w], keys[b], float(x), 1.0 - float(x), True, round)
                    for w, b, x in zip(
                        cur_w.tolist(), cur_b.tolist(), s_cur[:, s].tolist(), strict=True
                    )
                ]
            u_s = u_fut[s]
            for t in range(future):
                games, bye = pair_indices(row, cols, byes, met_s)
                o_row = [_NONE] * n
                g_row = [0.0] * n
                u_t = u_s[t].tolist()
                for k, (w, b) in enumerate(games):
                    u = u_t[k]
                    x = 1.0 if u < p_w[w][b] else 0.5 if u < p_wd[w][b] else 0.0
                    row[w] += x
                    row[b] += 1.0 - x
                    o_row[w], o_row[b] = b, w
                    g_row[w], g_row[b] = x, 1.0 - x
                    cols[w] += "W"
                    cols[b] += "B"
                    met_s.add(min(w, b) * n + max(w, b))
                    if need_de:
                        extra.append(Result(keys[w], keys[b], x, 1.0 - x, True, round + t + 1))
                if bye >= 0:
                    row[bye] += bye_points
                    byes[bye] = True
                    cols[bye] += "-"
                    o_row[bye] = _UNPLAYED
                    g_row[bye] = bye_game
                    if need_de:
                        extra.append(Result(keys[bye], None, bye_points, 0.0, False, round + t + 1))
                opp[s, :, tf + 1 + t] = o_row
                gp[s, :, tf + 1 + t] = g_row
            pts[s] = row
            records.append(extra)
        keys_tb = [pts] + [_tiebreak(tb, pts, opp, gp) for tb in order_tb[:cut]]
        first, top, touched = _shares(keys_tb, top_k)
        if need_de:
            for s in np.flatnonzero(touched).tolist():
                st = Standings.from_results(done + records[s], order_tb, keys)
                first[s], top[s] = _rank_shares(st, idx, top_k)
        first_sum += first.sum(axis=0)
        first_sq += (first * first).sum(axis=0)
        top_sum += top.sum(axis=0)
        top_sq += (top * top).sum(axis=0)

    def mean_se(total: Float, squares: Float) -> tuple[Float, Float]:
        mean = total / sims
        var = np.maximum(squares / sims - mean * mean, 0.0) * sims / (sims - 1)
        return mean, np.sqrt(var / sims)

    pf, sf = mean_se(first_sum, first_sq)
    pt, stt = mean_se(top_sum, top_sq)
    return {
        p: SwissChance(float(pf[i]), float(sf[i]), float(pt[i]), float(stt[i]))
        for i, p in enumerate(keys)
    }


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
