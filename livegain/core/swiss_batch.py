"""One Swiss round paired for many simulations at once: a vectorised approximation.

:func:`pair_batch` pairs one round in every simulation of a batch together:
arrays over simulations x players (points, colour history, byes, opponents
met), players indexed in initial order (index 0 is pairing number 1, by
rating, highest first). There is no loop over simulations: the loops are per
bracket position (none: the brackets are computed as arrays) and per repair
pass. :func:`pair_round_batch` is the same pairing for one simulation, with
the contract of :func:`livegain.core.swiss_pairing.pair_round` (same
``Entrant`` input, same ``Pairing`` output), so that the two can be compared.

What it follows of the Dutch system (FIDE Handbook C.04.3), as
:mod:`livegain.core.swiss_pairing` does:

* **Ranking** by points, then initial order.
* **Bye** (odd count) to the lowest-ranked player without one (the last-ranked
  when all have had one).
* **Score brackets** from the top; a bracket with an odd count floats its
  lowest-ranked player down, who heads the next bracket and meets its
  highest-ranked resident (the moved-down player's pairing); the rest of the
  bracket is split into S1 (top half) and S2 (bottom half) and S1[i] meets
  S2[i].
* **Absolute criteria**: no rematch, and no two players with the same absolute
  colour preference together, repaired by swapping: a pair that breaks them
  exchanges its S2 player with the pair ``d`` boards below or above it
  (``d = 1, 2, ...`` up to :data:`REACH`, the first that makes both pairs
  legal), first within its bracket (a transposition of S2), then with pairs of
  other brackets (the two players change brackets: floaters), also pairing the
  two S1 players together and the two S2 players together (an exchange); at
  most :data:`PASSES` rounds of this, then what is left is accepted.
* **Colour criterion**, after that: a pair whose two players prefer the same
  colour exchanges its S2 player with a pair of its bracket (up to
  :data:`COLOUR_REACH` boards away) when that lowers the number of such pairs and
  keeps both pairs legal.
* **Colour preferences** from the colour history (rounds without a game are
  skipped): absolute beyond a colour difference of ±1 or after the same colour
  twice in a row, strong at ±1, mild at 0 (the other colour than the last);
  none before a first game.
* **Colour allocation** (E.1-E.5): both preferences when they differ; else the
  stronger (between two absolute ones the wider colour difference); else
  alternate from the latest round in which the two had different colours;
  else the higher-ranked player's preference; with no preference at all, the
  higher-ranked player gets White when his pairing number is odd.

What it simplifies, beyond :mod:`livegain.core.swiss_pairing`'s own
simplifications (no float history, no topscorer exceptions):

* the repair is a local search (one pair against one other pair, a bounded
  number of passes), not the Dutch exhaustive search of transpositions and
  exchanges: the transposition it finds is the nearest one that works, not
  always the first in the Dutch order, and a round it cannot repair keeps its
  rematch (or colour clash) instead of re-pairing the brackets above;
* a bracket floats its lowest player when its count is odd; one that cannot
  be paired without a rematch does not float more players (the repair moves
  players between brackets instead);
* the colour criterion is this local improvement, not the Dutch minimum over
  the bracket;
* the bye is not chosen for the pairability of the rest.

Pure, typed, no I/O; numpy only.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from livegain.core.swiss_pairing import Entrant, Pairing

Int = npt.NDArray[np.int64]
Int8 = npt.NDArray[np.int8]
Bool = npt.NDArray[np.bool_]
Float = npt.NDArray[np.float64]

WHITE = 1
BLACK = -1
NONE, MILD, STRONG, ABSOLUTE = 0, 1, 2, 3

PASSES = 3
"""Rounds of repair of the pairs that break an absolute criterion."""
REACH = 4
"""How many boards away a pair that breaks an absolute criterion looks for a
pair to swap with."""
COLOUR_REACH = 2
"""How many boards away a pair with a colour clash looks for a pair to swap with."""


class BatchPairing(NamedTuple):
    """A round in each simulation: ``white``/``black`` (sims x games) player
    indices, ``bye`` (sims,) the player with the bye, -1 when none."""

    white: Int
    black: Int
    bye: Int


class Preferences(NamedTuple):
    """Colour preferences (sims x players): colour ``WHITE``/``BLACK``/0,
    strength ``ABSOLUTE``/``STRONG``/``MILD``/``NONE``, colour difference."""

    colour: Int8
    strength: Int8
    difference: Int8


def preferences(colours: Int8) -> Preferences:
    """Colour preferences from the histories ``colours`` (sims x players x
    rounds: +1 White, -1 Black, 0 no game), as
    :func:`livegain.core.swiss_pairing.preference`."""
    sims, n, rounds = colours.shape
    cd = np.zeros((sims, n), dtype=np.int8)
    last = np.zeros((sims, n), dtype=np.int8)
    prev = np.zeros((sims, n), dtype=np.int8)
    for r in range(rounds):
        c = colours[:, :, r]
        played = c != 0
        cd += c
        prev = np.where(played, last, prev)
        last = np.where(played, c, last)
    twice_b = (last == BLACK) & (prev == BLACK)
    twice_w = (last == WHITE) & (prev == WHITE)
    absolute = (cd <= -2) | (cd >= 2) | twice_b | twice_w
    colour = np.select(
        [cd <= -2, cd >= 2, twice_b, twice_w, cd != 0],
        [WHITE, BLACK, WHITE, BLACK, -np.sign(cd)],
        -last,
    ).astype(np.int8)
    strength = np.where(
        absolute, ABSOLUTE, np.where(cd != 0, STRONG, np.where(last != 0, MILD, NONE))
    ).astype(np.int8)
    return Preferences(colour, strength, cd)


class _Rules:
    """Lookups of the round being paired (global simulation rows): the pairs
    met and the colour preferences, flattened."""

    def __init__(self, met: Bool, prefs: Preferences) -> None:
        self.n = met.shape[1]
        self.met = met.reshape(-1)
        self.colour = prefs.colour.reshape(-1)
        self.absolute = np.where(prefs.strength == ABSOLUTE, prefs.colour, 0).reshape(-1)

    def hard(self, s: Int, a: Int, b: Int) -> Int:
        """1 where ``a``-``b`` breaks an absolute criterion (a rematch, or the
        same absolute colour preference), else 0."""
        sa = s * self.n + a
        ca = self.absolute[sa]
        clash = (ca != 0) & (ca == self.absolute[s * self.n + b])
        return np.asarray(self.met[sa * self.n + b] | clash, dtype=np.int64)

    def soft(self, s: Int, a: Int, b: Int) -> Int:
        """1 where both players prefer the same colour, else 0."""
        ca = self.colour[s * self.n + a]
        return np.asarray((ca != 0) & (ca == self.colour[s * self.n + b]), dtype=np.int64)


def _brackets(sp: Float) -> tuple[Int, Int]:
    """(start, end) of each position's bracket, positions in ranking order,
    ``sp`` the points in that order (sims x m, m even): each score group's
    bracket ends at its last even position, an odd group's lowest player
    heading the next bracket."""
    sims, m = sp.shape
    pos = np.arange(m + 1, dtype=np.int64)
    group_end = np.zeros((sims, m + 1), dtype=bool)
    group_end[:, 0] = group_end[:, m] = True
    group_end[:, 1:m] = sp[:, 1:] != sp[:, :-1]
    bound = np.zeros((sims, m + 1), dtype=bool)
    rows = np.arange(sims)[:, None]
    bound[rows, np.where(group_end, pos - pos % 2, 0)] = True
    start = np.maximum.accumulate(np.where(bound[:, :m], pos[:m], 0), axis=1)
    nxt = np.where(bound[:, 1:], pos[1:], m)
    end = np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1]
    return start, end


def _swap_pass(
    rules: _Rules,
    rows: Int,
    top: Int,
    bot: Int,
    bracket: Int,
    bad: Bool,
    d: int,
    *,
    colour: bool,
    within: bool,
    exchange: bool,
) -> None:
    """One sweep of swaps at distance ``d`` (signed), in place on ``top``/``bot``
    (the rows ``rows`` of the batch) and on ``bad``, the pairs to mend: those
    that break an absolute criterion (``colour`` False), or whose players
    prefer the same colour (``colour`` True). Each swaps with the pair ``d``
    boards away when that lowers the count (for colours: keeping both pairs
    legal). Pairs in alternate blocks of ``|d|`` boards move in turn, so that
    no pair takes part in two swaps at once."""
    q = top.shape[1]
    e = abs(d)
    if e >= q:
        return
    slot = np.arange(q)
    reach = (slot + d >= 0) & (slot + d < q)
    for parity in (0, 1):
        r, i = np.nonzero(bad & (reach & ((slot // e) % 2 == parity))[None, :])
        if r.size == 0:
            continue
        j = i + d
        if within:
            keep = bracket[r, i] == bracket[r, j]
            r, i, j = r[keep], i[keep], j[keep]
            if r.size == 0:
                continue
        s = rows[r]
        ti, bi, tj, bj = top[r, i], bot[r, i], top[r, j], bot[r, j]
        h1 = rules.hard(s, ti, bj) + rules.hard(s, tj, bi)
        if colour:
            c_old = rules.soft(s, ti, bi) + rules.soft(s, tj, bj)
            c1 = rules.soft(s, ti, bj) + rules.soft(s, tj, bi)
            take1 = (h1 == 0) & (c1 < c_old) & (rules.hard(s, tj, bj) == 0)
            take2 = np.zeros_like(take1)
        else:
            h_old = 1 + rules.hard(s, tj, bj)
            take1 = h1 < h_old
            take2 = np.zeros_like(take1)
            if exchange:
                h2 = rules.hard(s, ti, tj) + rules.hard(s, bi, bj)
                take2 = ~take1 & (h2 < h_old)
        # swap S2 players: (ti, bj), (tj, bi)
        k = np.flatnonzero(take1)
        bot[r[k], i[k]] = bj[k]
        bot[r[k], j[k]] = bi[k]
        # exchange: (ti, tj), (bi, bj)
        m = np.flatnonzero(take2)
        bot[r[m], i[m]] = tj[m]
        top[r[m], j[m]] = bi[m]
        bot[r[m], j[m]] = bj[m]
        moved = np.concatenate([k, m])
        for at in (i[moved], j[moved]):
            rr = r[moved]
            a, b = top[rr, at], bot[rr, at]
            hard = rules.hard(rows[rr], a, b).astype(bool)
            bad[rr, at] = rules.soft(rows[rr], a, b).astype(bool) & ~hard if colour else hard


def _matchings(items: tuple[int, ...]) -> list[list[tuple[int, int]]]:
    """Every way to pair up ``items`` (an even count)."""
    if not items:
        return [[]]
    a, rest = items[0], items[1:]
    return [[(a, b), *m] for k, b in enumerate(rest) for m in _matchings(rest[:k] + rest[k + 1 :])]


_SIX = _matchings(tuple(range(6)))


def _cost(rules: _Rules, s: Int, people: Sequence[Int], way: Sequence[tuple[int, int]]) -> Int:
    """Pairs breaking an absolute criterion when ``people`` are paired ``way``."""
    total = np.zeros(s.shape, dtype=np.int64)
    for x, y in way:
        total += rules.hard(s, people[x], people[y])
    return total


def _three_pairs(rules: _Rules, rows: Int, top: Int, bot: Int) -> bool:
    """In each row still breaking an absolute criterion, its first such pair
    and two other pairs (within :data:`REACH` boards) re-paired in the best of
    the 15 ways, when that lowers the count; in place. False when no row is
    left to repair."""
    q = top.shape[1]
    if q < 3:
        return False
    hard = rules.hard(rows[:, None], top, bot)
    r = np.flatnonzero(hard.any(axis=1))
    if r.size == 0:
        return False
    i = hard[r].argmax(axis=1)
    s = rows[r]
    reach = max(REACH, 2) if q > 2 * REACH else q
    open_ = np.ones(r.size, dtype=bool)
    for dj in range(-reach, reach + 1):
        for dk in range(dj + 1, reach + 1):
            if 0 in (dj, dk):
                continue
            j, k = i + dj, i + dk
            ok = open_ & (j >= 0) & (j < q) & (k >= 0) & (k < q)
            if not ok.any():
                continue
            jj, kk = np.clip(j, 0, q - 1), np.clip(k, 0, q - 1)
            slots = (i, i, jj, jj, kk, kk)
            people = [(top if n % 2 == 0 else bot)[r, slot] for n, slot in enumerate(slots)]
            best = _cost(rules, s, people, ((0, 1), (2, 3), (4, 5)))
            pick = np.full(r.size, -1)
            for m, way in enumerate(_SIX):
                cost = _cost(rules, s, people, way)
                better = ok & (cost < best)
                best = np.where(better, cost, best)
                pick = np.where(better, m, pick)
            for m in np.unique(pick[pick >= 0]).tolist():
                sel = np.flatnonzero(pick == m)
                for slot, (x, y) in zip((i, jj, kk), _SIX[m], strict=True):
                    top[r[sel], slot[sel]] = people[x][sel]
                    bot[r[sel], slot[sel]] = people[y][sel]
            open_ &= pick < 0
    return True


def _repair(rules: _Rules, top: Int, bot: Int, bracket: Int) -> None:
    """Repair in place the pairs that break an absolute criterion, then
    improve colours (see the module docstring)."""
    sims, q = top.shape
    if q < 2:
        return
    everyone = np.arange(sims)
    steps = [d for k in range(1, REACH + 1) for d in (k, -k)]
    hard = rules.hard(everyone[:, None], top, bot).astype(bool)
    far = [d for k in range(1, q) for d in (k, -k)] if q <= 2 * REACH else steps
    for _ in range(PASSES):
        rows = np.flatnonzero(hard.any(axis=1))
        if rows.size == 0:
            break
        t, b, br, bad = top[rows], bot[rows], bracket[rows], hard[rows]
        for within, reach in ((True, steps), (False, far)):
            for d in reach:
                if not bad.any():
                    break
                _swap_pass(
                    rules, rows, t, b, br, bad, d, colour=False, within=within, exchange=not within
                )
        top[rows], bot[rows], hard[rows] = t, b, bad
    rows = np.flatnonzero(hard.any(axis=1))
    if rows.size:
        t, b = top[rows], bot[rows]
        for _ in range(PASSES):
            if not _three_pairs(rules, rows, t, b):
                break
        top[rows], bot[rows] = t, b
        hard[rows] = rules.hard(rows[:, None], t, b).astype(bool)
    clash = rules.soft(everyone[:, None], top, bot).astype(bool) & ~hard
    for d in [d for k in range(1, COLOUR_REACH + 1) for d in (k, -k)]:
        _swap_pass(
            rules, everyone, top, bot, bracket, clash, d, colour=True, within=True, exchange=False
        )


def _allocate(a: Int, b: Int, prefs: Preferences, colours: Int8) -> Bool:
    """True where ``a`` (ranked above ``b``, sims x games) gets White: rules E.1-E.5."""
    s = np.arange(a.shape[0])[:, None]
    ca, cb = prefs.colour[s, a], prefs.colour[s, b]
    sa, sb = prefs.strength[s, a], prefs.strength[s, b]
    wa = np.abs(prefs.difference[s, a])
    wb = np.abs(prefs.difference[s, b])
    both_abs = (sa == ABSOLUTE) & (sb == ABSOLUTE)
    out: Bool = np.select(
        [
            (ca != cb) & (ca != 0) & (cb != 0),
            (ca == 0) & (cb == 0),
            ca == 0,
            cb == 0,
            both_abs & (wa != wb),
            ~both_abs & (sa != sb),
        ],
        [
            ca == WHITE,
            a % 2 == 0,
            cb == BLACK,
            ca == WHITE,
            np.where(wa > wb, ca == WHITE, cb == BLACK),
            np.where(sa > sb, ca == WHITE, cb == BLACK),
        ],
        ca == WHITE,
    )
    # the rest: alternate from the latest round in which the two had
    # different colours (E.3), else the higher-ranked player's preference
    r, g = np.nonzero((ca == cb) & (ca != 0) & ~(both_abs & (wa != wb)) & (both_abs | (sa == sb)))
    if r.size:
        ha, hb = colours[r, a[r, g]], colours[r, b[r, g]]  # (k, rounds)
        differ = (ha != hb) & (ha != 0) & (hb != 0)
        latest = np.where(differ, np.arange(colours.shape[2]), -1).max(axis=1)
        had = ha[np.arange(r.size), np.maximum(latest, 0)]
        out[r, g] = np.where(latest >= 0, had == BLACK, out[r, g])
    return out


def pair_batch(points: Float, colours: Int8, had_bye: Bool, met: Bool) -> BatchPairing:
    """Pair one round in every simulation of a batch.

    All arrays have simulations as rows and players (in initial order) as
    columns: ``points`` (sims x n); ``colours`` (sims x n x rounds: +1 White,
    -1 Black, 0 no game over the board, rounds in order, unused rounds 0);
    ``had_bye`` (sims x n): a pairing-allocated bye already received;
    ``met`` (sims x n x n): True where the two players have met (both ways).
    Returns the games (White, Black) and the byes.
    """
    sims, n = points.shape
    if colours.shape[:2] != (sims, n) or had_bye.shape != (sims, n):
        raise ValueError(
            f"colours {colours.shape} and had_bye {had_bye.shape} do not match points {(sims, n)}"
        )
    if met.shape != (sims, n, n):
        raise ValueError(f"met {met.shape} does not match points {(sims, n)}")
    every = np.arange(sims)
    rows = every[:, None]
    ranking = np.argsort(-points, axis=1, kind="stable")
    order = ranking
    bye = np.full(sims, -1, dtype=np.int64)
    if n % 2:
        free = ~had_bye[rows, order][:, ::-1]
        at = np.where(free.any(axis=1), n - 1 - free.argmax(axis=1), n - 1)
        bye = order[every, at]
        keep = np.ones((sims, n), dtype=bool)
        keep[every, at] = False
        order = order[keep].reshape(sims, n - 1)
    m = order.shape[1]
    q = m // 2
    if q == 0:
        return BatchPairing(
            np.zeros((sims, 0), dtype=np.int64), np.zeros((sims, 0), dtype=np.int64), bye
        )
    sp = points[rows, order]
    start, end = _brackets(sp)
    pos = np.arange(m)
    nxt_pos = np.minimum(start + 1, m - 1)
    mover = sp[rows, start] > sp[rows, nxt_pos]
    rest = start + 2 * mover
    half = (end - rest) // 2
    partner = np.where(
        pos < rest,
        np.where(pos == start, start + 1, start),
        np.where(pos < rest + half, pos + half, pos - half),
    )
    heads = pos[None, :] < partner
    top_pos = np.broadcast_to(pos, (sims, m))[heads].reshape(sims, q)
    bot_pos = partner[heads].reshape(sims, q)
    top = order[rows, top_pos]
    bot = order[rows, bot_pos]
    bracket = start[rows, top_pos]
    prefs = preferences(colours)
    _repair(_Rules(met, prefs), top, bot, bracket)
    rank = np.empty((sims, n), dtype=np.int64)
    rank[rows, ranking] = np.arange(n)
    first = rank[rows, top] < rank[rows, bot]
    a = np.where(first, top, bot)
    b = np.where(first, bot, top)
    a_white = _allocate(a, b, prefs, colours)
    return BatchPairing(np.where(a_white, a, b), np.where(a_white, b, a), bye)


_COLOUR = {"W": WHITE, "B": BLACK, "-": 0}


def pair_round_batch(
    entrants: Sequence[Entrant],
    met: Collection[tuple[str, str]] = (),
) -> Pairing:
    """:func:`pair_batch` for one round of one event, with the contract of
    :func:`livegain.core.swiss_pairing.pair_round`: ``entrants`` in initial
    order, ``met`` the pairs that already played (either order); games as
    (White, Black), best boards first (highest score, then highest total, then
    highest-ranked player), and the bye (None when the count is even)."""
    index = {e.key: k for k, e in enumerate(entrants)}
    if len(index) != len(entrants):
        raise ValueError("a player is listed twice")
    n = len(entrants)
    for e in entrants:
        if set(e.colours) - set(_COLOUR):
            raise ValueError(f"{e.key}: colours are W, B or -, got {e.colours!r}")
    seen = np.zeros((1, n, n), dtype=bool)
    for x, y in met:
        i, j = index.get(x), index.get(y)
        if i is not None and j is not None and i != j:
            seen[0, i, j] = seen[0, j, i] = True
    rounds = max((len(e.colours) for e in entrants), default=0)
    colours = np.zeros((1, n, max(rounds, 1)), dtype=np.int8)
    for i, e in enumerate(entrants):
        colours[0, i, : len(e.colours)] = [_COLOUR[c] for c in e.colours]
    points = np.array([[e.points for e in entrants]], dtype=np.float64)
    had_bye = np.array([[e.had_bye for e in entrants]], dtype=bool)
    got = pair_batch(points, colours, had_bye, seen)
    pts = points[0].tolist()
    rank = {p: r for r, p in enumerate(sorted(range(n), key=lambda i: (-pts[i], i)))}
    games = sorted(
        zip(got.white[0].tolist(), got.black[0].tolist(), strict=True),
        key=lambda g: (
            -max(pts[g[0]], pts[g[1]]),
            -(pts[g[0]] + pts[g[1]]),
            min(rank[g[0]], rank[g[1]]),
        ),
    )
    keys = [e.key for e in entrants]
    bye = int(got.bye[0])
    return Pairing(tuple((keys[w], keys[b]) for w, b in games), None if bye < 0 else keys[bye])
