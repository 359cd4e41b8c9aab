"""One Swiss round paired for many simulations at once: a vectorised approximation.

:func:`pair_batch` pairs one round in every simulation of a batch together:
arrays over simulations x players (points, colour history, byes, opponents
met), players indexed in initial order (index 0 is pairing number 1, by
rating, highest first). There is no loop over simulations: the loops are per
place in a bracket's S1 (the colour criterion; the brackets themselves are
computed as arrays) and per repair pass. :func:`pair_round_batch` is the
same pairing for one simulation, with the contract of
:func:`livegain.core.swiss_pairing.pair_round` (same ``Entrant`` input, same
``Pairing`` output), so that the two can be compared.

What it follows of the Dutch system (FIDE Handbook C.04.3), as
:mod:`livegain.core.swiss_pairing` does:

* **Ranking** by points, then initial order.
* **Bye** (odd count) to the lowest-ranked player without one (the last-ranked
  when all have had one).
* **Score brackets** from the top; a bracket with an odd count floats one
  player down (its lowest-ranked, or the one the colour criterion leaves
  unpaired), who heads the next bracket and meets its highest-ranked
  resident (the moved-down player's pairing); the rest of the bracket is
  split into S1 (top half) and S2 (bottom half) and S1[i] meets S2[i], then
  the colour criterion transposes S2.
* **Colour criterion**, in each bracket's S1 against S2 (the homogeneous
  part; S2 with the lowest player too when the count is odd): the first
  transposition of S2 in the Dutch order with the fewest pairs of players
  preferring the same colour (counted from the colour preferences alone):
  S1[0], S1[1], ... in turn take the highest S2 player left with whom the
  rest can still reach that fewest, one they may meet when there is one
  (:func:`_transpose`, all brackets of all simulations at once, one step per
  S1 place); the S2 player left floats.
* **Absolute criteria**: no rematch, and no two players with the same absolute
  colour preference together, repaired by swapping: a pair that breaks them
  exchanges its S2 player with the pair ``d`` boards below or above it
  (``d = 1, 2, ...`` up to :data:`REACH`, the first that makes both pairs
  legal), first within its bracket (a transposition of S2), then with pairs of
  other brackets (the two players change brackets: floaters), also pairing the
  two S1 players together and the two S2 players together (an exchange); at
  most :data:`PASSES` rounds of this, then three pairs re-paired at once,
  then what is left is accepted.
* **A Swiss of teams** (``teams=True``): colour is a quality criterion only
  (the FIDE team Swiss, C.04.6, has no absolute colour criterion; a team's
  colour is only which team has White on board 1): two teams with the same
  absolute colour preference may meet, S1[i] meets S2[i] without the search
  of the transposition, and a pair whose two teams prefer the same colour
  exchanges its S2 team with a pair of its bracket (up to
  :data:`COLOUR_REACH` boards away) when that lowers the number of such pairs
  and keeps both pairs legal (:func:`_colour_pass`).
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

* the colour criterion is searched over the transpositions of S2 only (no
  exchanges between S1 and S2 to reach fewer clashes, no strong-preference
  criterion), and its count ignores rematches: a rematch left is then mended
  by the repair, which may cost a colour clash;
* the repair is a local search (one pair against one other pair, a bounded
  number of passes), not the Dutch exhaustive search of transpositions and
  exchanges, and a round it cannot repair keeps its rematch (or colour
  clash) instead of re-pairing the brackets above;
* the floater is chosen for the colours of its bracket, not for the next
  bracket; a bracket that cannot be paired without a rematch does not float
  more players (the repair moves players between brackets instead); the
  moved-down player meets the highest resident whatever the colours;
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
"""How many boards away a pair of teams with a colour clash looks for a pair
to swap with (``teams=True``)."""


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
    by_round = np.ascontiguousarray(colours.transpose(2, 0, 1))  # contiguous rounds
    for r in range(rounds):
        c = by_round[r]
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

    def __init__(self, met: Bool, prefs: Preferences, teams: bool = False) -> None:
        self.n = met.shape[1]
        self.met = met.reshape(-1)
        self.colour = prefs.colour.reshape(-1)
        self.absolute: Int8 | None = (
            np.where(prefs.strength == ABSOLUTE, prefs.colour, 0).reshape(-1) if not teams else None
        )

    def hard(self, s: Int, a: Int, b: Int) -> Int:
        """1 where ``a``-``b`` breaks an absolute criterion (a rematch, or the
        same absolute colour preference, unless the pairing is of teams), else 0."""
        sa = s * self.n + a
        met = self.met[sa * self.n + b]
        if self.absolute is None:
            return np.asarray(met, dtype=np.int64)
        ca = self.absolute[sa]
        clash = (ca != 0) & (ca == self.absolute[s * self.n + b])
        return np.asarray(met | clash, dtype=np.int64)

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
        if colour:
            # the colour gain first (cheap), the absolute criteria only where
            # the swap would lower the clashes
            s = rows[r]
            ti, bi, tj, bj = top[r, i], bot[r, i], top[r, j], bot[r, j]
            c_old = 1 + rules.soft(s, tj, bj)
            gain = (rules.soft(s, ti, bj) + rules.soft(s, tj, bi)) < c_old
            r, i, j = r[gain], i[gain], j[gain]
            if r.size == 0:
                continue
        s = rows[r]
        ti, bi, tj, bj = top[r, i], bot[r, i], top[r, j], bot[r, j]
        h1 = rules.hard(s, ti, bj) + rules.hard(s, tj, bi)
        if colour:
            take1 = (h1 == 0) & (rules.hard(s, tj, bj) == 0)
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
                live = bad.any(axis=1)
                if not live.any():
                    break
                if 2 * np.count_nonzero(live) < live.size:  # drop the rows mended
                    done = ~live
                    top[rows[done]], bot[rows[done]], hard[rows[done]] = t[done], b[done], False
                    rows, t, b, br, bad = rows[live], t[live], b[live], br[live], bad[live]
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
    if rules.absolute is None:  # teams: colours not searched by _transpose
        _colour_pass(rules, top, bot, bracket, hard)


def _colour_pass(rules: _Rules, top: Int, bot: Int, bracket: Int, hard: Bool) -> None:
    """The colour criterion, in place: a pair whose two players prefer the same
    colour (and that breaks no absolute criterion) swaps its S2 player with the
    pair ``d`` boards away in its bracket (``d = ±1, ..., ±``:data:`COLOUR_REACH`)
    when that lowers the pairs with a colour clash and leaves both pairs legal.
    The colour test is done on whole arrays of boards; the absolute criteria
    only where the colours gain. Pairs in alternate blocks of ``|d|`` boards
    move in turn, so that no pair takes part in two swaps at once."""
    sims, q = top.shape
    rows = np.arange(sims)[:, None]
    colour = rules.colour.reshape(sims, -1)
    ct, cb = colour[rows, top], colour[rows, bot]
    slot = np.arange(q)
    for d in [d for k in range(1, COLOUR_REACH + 1) for d in (k, -k)]:
        e = abs(d)
        if e >= q:
            continue
        for parity in (0, 1):
            at = np.flatnonzero((slot + d >= 0) & (slot + d < q) & ((slot // e) % 2 == parity))
            to = at + d
            cti, cbi, ctj, cbj = ct[:, at], cb[:, at], ct[:, to], cb[:, to]
            clash_i = (cti == cbi) & (cti != 0) & ~hard[:, at]
            old_j = ((ctj == cbj) & (ctj != 0)).astype(np.int8)
            new = ((cti == cbj) & (cti != 0)).astype(np.int8) + ((ctj == cbi) & (ctj != 0))
            gain = clash_i & (new < 1 + old_j) & ~hard[:, to]
            gain &= bracket[:, at] == bracket[:, to]
            r, k = np.nonzero(gain)
            if r.size == 0:
                continue
            i, j = at[k], to[k]
            ti, bi, tj, bj = top[r, i], bot[r, i], top[r, j], bot[r, j]
            ok = (rules.hard(r, ti, bj) + rules.hard(r, tj, bi)) == 0
            r, i, j, bi, bj = r[ok], i[ok], j[ok], bi[ok], bj[ok]
            bot[r, i], bot[r, j] = bj, bi
            cb[r, i], cb[r, j] = cb[r, j], cb[r, i]


def _fewest_clashes(k1: Int, k2: Int) -> Int:
    """Fewest pairs of players preferring the same colour when each player of
    S1 meets one of S2, from their counts (``...`` x 3: no preference,
    White, Black), as :func:`livegain.core.swiss_pairing._halves_bound`."""
    n1, w1, b1 = k1[..., 0], k1[..., 1], k1[..., 2]
    n2, w2, b2 = k2[..., 0], k2[..., 1], k2[..., 2]
    a = np.minimum(w1, b2)
    c = np.minimum(b1, w2)
    free = a + c + np.minimum(n2, w1 - a + b1 - c) + n1
    out: Int = np.maximum(0, n1 + w1 + b1 - free)
    return out


def _transpose(rules: _Rules, order: Int, rest: Int, half: Int, mover: Bool, partner: Int) -> None:
    """The colour criterion in each bracket's S1 against S2, in place on
    ``partner`` (positions in ranking order): the first transposition of S2 in
    the Dutch order that has the fewest pairs of players preferring the same
    colour. S1[0], S1[1], ... in turn (all brackets of all simulations at
    once) each take the highest S2 player left whose colour preference lets
    the rest of the bracket still reach that fewest (counted from the colour
    preferences alone), preferring one he may meet (no rematch, no absolute
    colour clash); a rematch left is mended by the repair that follows. Since
    only the colour class matters to the count, each class of S2 is taken in
    order, and S1[k]'s choice is between the first S2 player left of each
    class. A bracket with an odd count has its lowest player in S2 too (the
    Dutch S2 has one player more): the one left unpaired floats down, in
    place on ``order`` (he takes the lowest player's position, heading the
    next bracket, ``mover`` there)."""
    sims, m = order.shape
    rows = np.arange(sims)[:, None]
    k = np.arange(m) - rest
    in_s1 = (k >= 0) & (k < half)
    if not in_s1.any():
        return
    colour = rules.colour.reshape(sims, -1)[rows, order]
    cls = np.where(colour == WHITE, 1, np.where(colour == BLACK, 2, 0))
    # the brackets (their S1[0]); a bracket whose S1[i] - S2[i] is legal with
    # the fewest clashes keeps it (it is the first transposition)
    rb, pb = np.nonzero(in_s1 & (k == 0))
    hb = half[rb, pb]
    nb = rb.size
    bid = np.repeat(np.arange(nb), hb)
    r1 = rb[bid]
    p1 = pb[bid] + np.arange(bid.size) - np.repeat(np.cumsum(hb) - hb, hb)
    c1, c2 = cls[r1, p1], cls[r1, p1 + hb[bid]]
    k1 = np.bincount(bid * 3 + c1, minlength=nb * 3).reshape(nb, 3)
    k2 = np.bincount(bid * 3 + c2, minlength=nb * 3).reshape(nb, 3)
    # the floater of an odd score group: the next bracket's moved-down player
    low = np.minimum(pb + 2 * hb, m - 1)
    xb = (pb + 2 * hb < m) & mover[rb, low]
    k2[np.flatnonzero(xb), cls[rb, low][xb]] += 1
    k1, k2 = k1.astype(np.int16), k2.astype(np.int16)  # small counts: fast
    budget = _fewest_clashes(k1, k2)
    same = np.bincount(bid, weights=(c1 == c2) & (c1 != 0), minlength=nb) > budget
    same |= (
        np.bincount(
            bid, weights=rules.hard(r1, order[r1, p1], order[r1, p1 + hb[bid]]), minlength=nb
        )
        > 0
    )
    # the others, largest first: at step k the brackets left are a prefix
    todo = np.flatnonzero(same)
    if todo.size == 0:
        return
    todo = todo[np.argsort(-hb[todo], kind="stable")]
    rb, pb, hb, k1, k2, budget = rb[todo], pb[todo], hb[todo], k1[todo], k2[todo], budget[todo]
    xb = xb[todo]
    nb = todo.size
    # each class of each bracket's S2, in order: queue[first + taken]
    s2 = hb + xb
    bid = np.repeat(np.arange(nb), s2)
    r2 = rb[bid]
    p2 = pb[bid] + hb[bid] + np.arange(bid.size) - np.repeat(np.cumsum(s2) - s2, s2)
    key = bid * 3 + cls[r2, p2]
    queue = p2[np.argsort(key, kind="stable")]
    size = np.bincount(key, minlength=nb * 3).astype(np.int16).reshape(nb, 3)
    first = (np.cumsum(size, dtype=np.int64) - size.reshape(-1)).reshape(nb, 3)
    taken = np.zeros((nb, 3), dtype=np.int16)
    classes = np.arange(3)
    minus = np.eye(3, dtype=np.int16)
    active = np.searchsorted(-hb, -np.arange(int(hb[0])), side="left")
    for step, n in enumerate(active.tolist()):
        r, p = rb[:n], pb[:n] + step
        at = np.arange(n)
        ca = cls[r, p]
        left1 = k1[:n] - minus[ca]
        left2 = k2[:n, None, :] - minus[None, :, :]
        fewest = _fewest_clashes(left1[:, None, :], left2)
        clash = (ca[:, None] == classes) & (classes != 0)
        t = taken[:n]
        have = t < size[:n]
        fits = have & (clash + fewest <= budget[:n, None])
        head = queue[np.minimum(first[:n] + t, queue.size - 1)]
        # the first S2 player left that fits (else the first left), unless
        # he may not meet S1[k]: then the first that is legal and fits
        tier = np.where(fits, 0, np.where(have, 1, 2))
        chosen = np.argmin(tier * m + head, axis=1)
        best = head[at, chosen]
        a = order[r, p]
        wrong = np.flatnonzero(rules.hard(r, a, order[r, best]) & fits[at, chosen])
        if wrong.size:
            rw, hw = r[wrong, None], head[wrong]
            legal = rules.hard(rw, a[wrong, None], order[rw, hw]) == 0
            ok = fits[wrong] & legal
            alt = np.argmin(np.where(ok, 0, 1) * m + hw, axis=1)
            use = ok.any(axis=1)
            chosen[wrong[use]] = alt[use]
            best = head[at, chosen]
        partner[r, p] = best
        partner[r, best] = p
        k1[:n] -= minus[ca]
        k2[:n] -= minus[chosen]
        taken[:n] += minus[chosen]
        budget[:n] -= ((ca == chosen) & (ca != 0)).astype(np.int16)
    # the S2 player left in an odd bracket floats: he and the lowest player
    # change places (the lowest then meets the S1 player who chose him)
    j = np.flatnonzero(xb)
    if j.size:
        c = np.argmax(taken[j] < size[j], axis=1)
        left = queue[first[j, c] + taken[j, c]]
        low = pb[j] + 2 * hb[j]
        moved = left != low
        r, left, low = rb[j][moved], left[moved], low[moved]
        chose = partner[r, low]
        partner[r, chose] = left
        partner[r, left] = chose
        partner[r, low] = low + 1
        order[r, left], order[r, low] = order[r, low], order[r, left]


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


def pair_batch(
    points: Float,
    colours: Int8,
    had_bye: Bool,
    met: Bool,
    *,
    teams: bool = False,
) -> BatchPairing:
    """Pair one round in every simulation of a batch.

    All arrays have simulations as rows and players (in initial order) as
    columns: ``points`` (sims x n); ``colours`` (sims x n x rounds: +1 White,
    -1 Black, 0 no game over the board, rounds in order, unused rounds 0);
    ``had_bye`` (sims x n): a pairing-allocated bye already received;
    ``met`` (sims x n x n): True where the two players have met (both ways).
    ``teams``: a Swiss of teams, where colour is a quality criterion only
    (the FIDE team Swiss, C.04.6, has no absolute colour criterion, and the
    Olympiad's rules keep S1 against S2 ahead of colours): two teams with the
    same absolute colour preference may meet, and S1[i] meets S2[i] with the
    colours mended only locally (no search of the transposition with the
    fewest colour clashes). Returns the games (White, Black) and the byes.
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
    order = ranking.copy()  # _transpose may move floaters in it
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
    prefs = preferences(colours)
    rules = _Rules(met, prefs, teams)
    if not teams:
        _transpose(rules, order, rest, half, mover, partner)
    heads = pos[None, :] < partner
    top_pos = np.broadcast_to(pos, (sims, m))[heads].reshape(sims, q)
    bot_pos = partner[heads].reshape(sims, q)
    top = order[rows, top_pos]
    bot = order[rows, bot_pos]
    bracket = start[rows, top_pos]
    _repair(rules, top, bot, bracket)
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
    *,
    teams: bool = False,
) -> Pairing:
    """:func:`pair_batch` for one round of one event, with the contract of
    :func:`livegain.core.swiss_pairing.pair_round`: ``entrants`` in initial
    order, ``met`` the pairs that already played (either order); games as
    (White, Black), best boards first (highest score, then highest total, then
    highest-ranked player), and the bye (None when the count is even).
    ``teams`` as :func:`pair_batch`'s."""
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
    got = pair_batch(points, colours, had_bye, seen, teams=teams)
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
