"""Algorithm 2 over a file's games: the d_ij of each pair that met, the
tournament fit of every player's rating, Algorithm 3's engine strength from
it, and the delete-a-group jackknife's 95 % intervals (docs/maths.md).

It reads each game only as its two players' names and histograms of gain
(:class:`Meeting`), kept from the analysis of the games for this.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from livegain.batch.player_pool import PlayerReport
from livegain.core.histogram import GainHistogram
from livegain.core.rating import HeadToHead, head_to_head, rating_difference
from livegain.core.student import t_quantile
from livegain.core.tournament import (
    EngineStrength,
    TournamentFit,
    engine_strength,
    pairing_components,
    perceived_tournament,
    tournament_estimates,
)

PairMethod = Literal["aggregate", "pair"]


class Side(NamedTuple):
    """One player of one game: his name and the gains of his counted moves."""

    name: str
    histogram: GainHistogram


class Meeting(NamedTuple):
    """One game as Algorithm 2 reads it."""

    white: Side
    black: Side


@dataclass(frozen=True)
class PairReport:
    a: str
    b: str
    games: int
    head_to_head: HeadToHead


@dataclass
class TournamentReport:
    method: PairMethod
    pairs: list[PairReport]
    fit: TournamentFit
    engine_by_elo: EngineStrength | None
    engine_by_estimate: EngineStrength | None


def tournament_report(
    reports: Sequence[Meeting], players: list[PlayerReport], method: PairMethod
) -> TournamentReport | None:
    by_name = {p.name: p for p in players}
    pair_hists: dict[tuple[str, str], tuple[GainHistogram, GainHistogram, int]] = {}
    for rep in reports:
        a, b = sorted((rep.white.name, rep.black.name))
        if a == b:
            continue
        ha, hb, n = pair_hists.get((a, b), (GainHistogram(), GainHistogram(), 0))
        mine_a = rep.white if rep.white.name == a else rep.black
        mine_b = rep.black if mine_a is rep.white else rep.white
        ha.merge(mine_a.histogram)
        hb.merge(mine_b.histogram)
        pair_hists[(a, b)] = (ha, hb, n + 1)

    pairs: list[PairReport] = []
    edges: list[tuple[str, str, float]] = []
    for (a, b), (ha, hb, n) in sorted(pair_hists.items()):
        if method == "aggregate":
            ha, hb = by_name[a].histogram, by_name[b].histogram
        if ha.n == 0 or hb.n == 0:
            continue
        h2h = head_to_head(ha, hb)
        pairs.append(PairReport(a, b, n, h2h))
        edges.append((a, b, h2h.difference))
    if not edges:
        return None
    if not any(p.elo is not None for p in players):
        fit = perceived_tournament([p.name for p in players], {}, edges)
    else:
        fit = perceived_tournament(
            [p.name for p in players], {p.name: p.elo for p in players}, edges
        )
    for p in players:
        tr = fit.ratings[p.name]
        p.tournament = tr.estimated
        p.tournament_relative = tr.relative if tr.opponents else None
    for name, (lo, hi) in _jackknife(reports, players, method).items():
        by_name[name].tournament_low = lo
        by_name[name].tournament_high = hi

    rated = [p for p in players if p.elo is not None and p.histogram.n > 0]
    by_elo = (
        engine_strength((p.elo, p.perceived.difference) for p in rated if p.elo is not None)
        if rated
        else None
    )
    estimated = [p for p in players if p.tournament is not None and p.histogram.n > 0]
    by_estimate = (
        engine_strength(
            (p.tournament, p.perceived.difference) for p in estimated if p.tournament is not None
        )
        if estimated
        else None
    )
    return TournamentReport(method, pairs, fit, by_elo, by_estimate)


#: The delete-a-group jackknife of Algorithm 2 uses at most this many groups of games.
JACKKNIFE_GROUPS = 200


#: More than the range of gains (+/-7800): histograms placed this far apart
#: make one sorted array.
_STRIDE = 1 << 20


class _Stack:
    """Gain histograms stacked in one sorted array (the k-th shifted by k times
    :data:`_STRIDE`), to compute Algorithm 1 between many of them at once."""

    def __init__(self, hists: Sequence[GainHistogram]) -> None:
        gains: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        counts: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        for k, hist in enumerate(hists):
            bins = hist.counts()
            values = np.fromiter(bins, dtype=np.int64, count=len(bins))
            order = np.argsort(values)
            gains.append(values[order] + k * _STRIDE)
            counts.append(np.fromiter(bins.values(), dtype=np.int64, count=len(bins))[order])
        lengths = np.array([len(g) for g in gains[1:]], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.gains = np.concatenate(gains)
        self.counts = np.concatenate(counts)
        self.cum = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        #: moves of each histogram
        self.n = self.cum[self.starts[1:]] - self.cum[self.starts[:-1]]

    def u2(self, xs: np.ndarray, other: _Stack, ys: np.ndarray) -> np.ndarray:
        """``2U`` of histogram ``xs[k]`` over histogram ``ys[k]`` of ``other``
        for each k: the sum over x's moves of twice the moves of y below plus
        those equal (Algorithm 1's p is ``2U / (2 n m)``). Integers below 2**53,
        exact in the float64 returned."""
        lengths = self.starts[xs + 1] - self.starts[xs]
        owner = np.repeat(np.arange(len(xs)), lengths)
        first = np.repeat(self.starts[xs] - (np.cumsum(lengths) - lengths), lengths)
        pos = first + np.arange(int(lengths.sum()))
        y = ys[owner]
        keys = self.gains[pos] + (y - xs[owner]) * _STRIDE
        twice = (
            other.cum[np.searchsorted(other.gains, keys, "left")]
            + other.cum[np.searchsorted(other.gains, keys, "right")]
            - 2 * other.cum[other.starts[y]]
        )
        return np.bincount(
            owner, weights=(self.counts[pos] * twice).astype(float), minlength=len(xs)
        )


def _rating_differences(u2: np.ndarray, n: np.ndarray, m: np.ndarray) -> list[float]:
    """``rating_difference(p).value`` for ``p = 2U / (2 n m)``, NaN where a side
    has no move: the same floats as ``GainHistogram.expected_score`` gives
    (integer operands, one correctly rounded division)."""
    return [
        rating_difference(u / (2.0 * x * y)).value if x and y else math.nan
        for u, x, y in zip(
            u2.tolist(), n.astype(float).tolist(), m.astype(float).tolist(), strict=True
        )
    ]


def _jackknife(
    reports: Sequence[Meeting], players: list[PlayerReport], method: PairMethod
) -> dict[str, tuple[float, float]]:
    """95 % intervals of the Algorithm 2 estimates by a delete-a-group jackknife
    over games: the whole pipeline (histograms, d_ij, fit, shift) is rerun
    without each group of games (one game per group up to 200 games);
    ``est +/- t_{K-1} sqrt((K-1)/K sum (est_(k) - mean)^2)``. Players whose
    estimate disappears without some group (e.g. a single game) get none.

    Rerunning only what a group changes keeps this linear in the number of
    games: the moves of the group are subtracted from the histograms they
    belong to, the d_ij of the pairs whose histograms lost moves are
    recomputed, and only the components of the pairing graph holding a player
    of the group are fitted again; the others keep the estimates of the full
    fit (Algorithm 2 fits each component on its own)."""
    names = [p.name for p in players]
    index = {name: i for i, name in enumerate(names)}
    known = np.array([np.nan if p.elo is None else float(p.elo) for p in players])
    counted = [r for r in reports if r.white.histogram.n or r.black.histogram.n]
    k = min(len(counted), JACKKNIFE_GROUPS)
    if k < 3:
        return {}
    pair_base: dict[tuple[str, str], tuple[GainHistogram, GainHistogram]] = {}
    pair_games: dict[tuple[str, str], int] = defaultdict(int)
    for rep in counted:
        a, b = sorted((rep.white.name, rep.black.name))
        if a == b:
            continue
        pair_games[(a, b)] += 1
        ha, hb = pair_base.setdefault((a, b), (GainHistogram(), GainHistogram()))
        ha.merge((rep.white if rep.white.name == a else rep.black).histogram)
        hb.merge((rep.black if rep.white.name == a else rep.white).histogram)

    # the full fit, with the pairs in the order the replicates use. Each pair
    # compares two histograms of a stack: the two players' (aggregate) or the
    # pair's own two (pair)
    pairs = list(pair_base)
    pair_index = {pair: q for q, pair in enumerate(pairs)}
    pa = np.array([index[a] for a, _ in pairs], dtype=np.int64)
    pb = np.array([index[b] for _, b in pairs], dtype=np.int64)
    if method == "aggregate":
        stack = _Stack([p.histogram for p in players])
        ea, eb = pa, pb
    else:
        stack = _Stack([h for pair in pair_base.values() for h in pair])
        ea = 2 * np.arange(len(pairs), dtype=np.int64)
        eb = ea + 1
    u2_base = stack.u2(ea, stack, eb)
    pd = np.array(_rating_differences(u2_base, stack.n[ea], stack.n[eb]), dtype=float)
    live = np.flatnonzero(~np.isnan(pd))
    n = len(names)
    base_est = tournament_estimates(n, pa[live], pb[live], pd[live], known)
    comp = pairing_components(n, pa[live], pb[live])
    by_comp = np.argsort(comp, kind="stable")
    comp_starts = np.concatenate([[0], np.cumsum(np.bincount(comp))])
    live_comp = comp[pa[live]]
    pairs_by_comp = live[np.argsort(live_comp, kind="stable")]
    pair_starts = np.concatenate(
        [[0], np.cumsum(np.bincount(live_comp, minlength=len(comp_starts) - 1))]
    )
    incident: dict[int, list[int]] = defaultdict(list)  # histogram -> its live pairs
    for q in live.tolist():
        incident[int(ea[q])].append(q)
        incident[int(eb[q])].append(q)

    replicates = np.empty((k, n))
    for group in range(k):
        removed = counted[group::k]
        movers: set[int] = set()
        gone: dict[int, GainHistogram] = {}  # histogram of the stack -> its moves removed
        games_gone: dict[int, int] = defaultdict(int)
        for rep in removed:
            movers.update((index[rep.white.name], index[rep.black.name]))
            a, b = sorted((rep.white.name, rep.black.name))
            q = pair_index.get((a, b), -1)
            if a != b:
                games_gone[q] += 1
            mine_a = rep.white if rep.white.name == a else rep.black
            mine_b = rep.black if mine_a is rep.white else rep.white
            if method == "aggregate":
                sides = [(index[a], mine_a), (index[b], mine_b)]
            else:
                sides = [(2 * q, mine_a), (2 * q + 1, mine_b)] if a != b else []
            for h, side in sides:
                if side.histogram.n:
                    gone.setdefault(h, GainHistogram()).merge(side.histogram)
        # the d_ij this group changes (NaN drops the pair), from the full
        # file's 2U: 2U is bilinear, so (A - Ga) over (B - Gb) is
        # 2U(A,B) - 2U(Ga,B) - (2 n_A n_Gb - 2U(Gb,A)) + 2U(Ga,Gb)
        todo = np.array(sorted({q for h in gone for q in incident[h]}), dtype=np.int64)
        holes = list(gone)
        lost = _Stack([gone[h] for h in holes])
        where = np.full(len(stack.n), -1, dtype=np.int64)
        where[holes] = np.arange(len(holes))
        xa, xb = ea[todo], eb[todo]
        ga, gb = where[xa], where[xb]
        u2 = u2_base[todo].copy()
        n_a, n_b = stack.n[xa].copy(), stack.n[xb].copy()
        sel = ga >= 0
        u2[sel] -= lost.u2(ga[sel], stack, xb[sel])
        n_a[sel] -= lost.n[ga[sel]]
        sel = gb >= 0
        u2[sel] -= 2.0 * stack.n[xa[sel]] * lost.n[gb[sel]] - lost.u2(gb[sel], stack, xa[sel])
        n_b[sel] -= lost.n[gb[sel]]
        sel = (ga >= 0) & (gb >= 0)
        u2[sel] += lost.u2(ga[sel], lost, gb[sel])
        changed = dict(zip(todo.tolist(), _rating_differences(u2, n_a, n_b), strict=True))
        for q, count in games_gone.items():
            if pair_games[pairs[q]] == count:
                changed[q] = math.nan
        # refit the components this group touches
        touched = np.unique(comp[sorted(movers)])
        nodes = np.sort(
            np.concatenate([by_comp[comp_starts[c] : comp_starts[c + 1]] for c in touched])
        )
        sub = np.sort(
            np.concatenate([pairs_by_comp[pair_starts[c] : pair_starts[c + 1]] for c in touched])
        )
        d = pd[sub]
        if changed:
            moved = np.array(list(changed), dtype=np.int64)
            inside = np.isin(moved, sub)  # a pair already dropped from the full fit stays out
            d[np.searchsorted(sub, moved[inside])] = np.array(list(changed.values()))[inside]
        keep = ~np.isnan(d)
        est = tournament_estimates(
            len(nodes),
            np.searchsorted(nodes, pa[sub][keep]),
            np.searchsorted(nodes, pb[sub][keep]),
            d[keep],
            known[nodes],
        )
        row = base_est.copy()
        row[nodes] = est
        replicates[group] = row
    t = t_quantile(k - 1, 0.975)
    mean = replicates.mean(axis=0)
    se = np.sqrt((k - 1) / k * ((replicates - mean) ** 2).sum(axis=0))
    complete = np.all(~np.isnan(replicates), axis=0).tolist()
    out: dict[str, tuple[float, float]] = {}
    for i, p in enumerate(players):
        if not complete[i] or p.tournament is None:
            continue
        half = t * float(se[i])
        out[p.name] = (p.tournament - half, p.tournament + half)
    return out
