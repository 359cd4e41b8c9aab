"""One round of a Swiss pairing: a fast approximation of the FIDE Dutch system.

:func:`pair_round` pairs one round from the standings before it: each
player's points, colour history, float history and whether he already had a
bye, the pairs that already met, and the initial order (the order the
players are given in: by rating, highest first, as the starting rank).
Deterministic: the same input gives the same pairing. Checked against
bbpPairings, a FIDE-endorsed Dutch engine (docs/standings.md §9).

What it follows of the Dutch system (FIDE Handbook C.04.3):

* **Ranking**: by points, then by the initial order (pairing number).
* **Score brackets**, from the top: the players on the same points, with the
  players floated down from the bracket above (moved-down players) ahead of
  them. The moved-down players are paired first, each with the highest-ranked
  resident he may meet (S1 = moved-down players, S2 = residents); the
  remaining residents are split into S1 (top half) and S2 (bottom half, one
  more when the count is odd) and S1[i] meets S2[i].
* **Absolute criteria**: no rematch; two players with the same absolute
  colour preference do not meet.
* **Candidates in the Dutch order**: each pairing of the moved-down players
  (S2 in order), then for the remainder the transpositions of S2 in
  lexicographic order, then one player of S1 exchanged with one of S2
  (smallest difference of positions first, then the lowest of S1) and the
  transpositions again; only when that finds nothing, any pairing of the
  bracket (highest-ranked player first, each with the highest-ranked player
  left that he may meet). A depth-first search.
* **Quality criteria**, which come before that order (the search keeps the
  best candidate and takes a later one only when it is strictly better), in
  this order: the fewest floaters; moved-down players paired rather than
  floated on; the fewest pairs whose two players prefer the same colour
  (C.10; searched first at the least the bracket allows,
  ``max(0, w - q - f, b - q - f)`` with ``w``/``b`` the players preferring
  White/Black, ``q`` pairs and ``f`` floaters, then one more, then without a
  limit); the fewest such pairs where the player who yields has a strong
  preference (C.11); then the float history (C.12-C.15): the fewest players
  floating down who floated down in the previous round, floating up (against
  a moved-down player) who floated up in the previous round, and the same for
  two rounds before.
* **Bye**: when the number of players is odd, the last bracket leaves one
  player unpaired, who must not have had a bye (anyone when all have): the
  bye is chosen with the pairing of the last bracket, by the same criteria
  (so not always the lowest-ranked player).
* **Floaters**: a bracket with an odd count, or that cannot be paired
  completely, sends its unpaired players down to the next bracket.
* **Colour preferences** from the colour history (rounds without a game over
  the board are skipped): absolute when the colour difference (Whites minus
  Blacks) is beyond ±1 or the last two games had the same colour; strong at
  ±1; mild at 0 (the other colour than in the last game); none before a
  first game.
* **Colour allocation** (rules E.1-E.5): both preferences when they differ;
  else the stronger preference (between two absolute ones, the wider colour
  difference); else alternate from the latest round in which the two had
  different colours; else the higher-ranked player's preference; with no
  preference at all, the higher-ranked player gets the initial colour
  (White) when his pairing number is odd, the other otherwise.

What it simplifies:

* the float history counts only when given (:class:`Entrant` ``floats``);
  the score differences of repeated floaters (C.16-C.19) are not minimised;
* the choice of a bracket's floaters does not look at the next bracket (the
  Dutch system maximises the pairs and scores paired there, C.7), nor at the
  bye assignee's unplayed games;
* exchanges of two or more players are not searched (any pairing instead);
* no topscorer exceptions in the last round (absolute colour conflicts are
  never allowed);
* when the last bracket cannot be paired, the two lowest score groups are
  merged into one bracket and the whole round is paired again (the Dutch
  system re-pairs the penultimate bracket with other floaters instead); as a
  last resort (a tiny event late in its rounds) rematches are allowed;
* each search is limited to :data:`NODE_LIMIT` steps; past it the best
  candidate found so far is kept, or when there is none the next, looser
  search is tried.

Pure, typed, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache

WHITE = 1
BLACK = -1
NONE, MILD, STRONG, ABSOLUTE = 0, 1, 2, 3

NODE_LIMIT = 500
"""Steps of one depth-first search before it gives up (then a looser one is tried)."""


@dataclass(frozen=True)
class Entrant:
    """A player before the round: ``colours`` one letter per round so far,
    ``W`` or ``B`` for a game over the board, ``-`` otherwise (bye, forfeit,
    absent); ``had_bye``: a pairing-allocated bye already received;
    ``floats``: the float history, one letter per round so far, ``D`` when he
    floated down (met a player on fewer points, or had a bye with points),
    ``U`` when he floated up, ``-`` otherwise; only its last two rounds count,
    and empty means not known (no float is then avoided)."""

    key: str
    points: float
    colours: str = ""
    had_bye: bool = False
    floats: str = ""


@dataclass(frozen=True)
class Pairing:
    """The round: ``games`` as (White, Black), best boards first; ``bye``: who
    gets the bye (None when the count is even)."""

    games: tuple[tuple[str, str], ...]
    bye: str | None


def preference(colours: str) -> tuple[int, int]:
    """(colour, strength) of a player's colour preference: colour ``WHITE``,
    ``BLACK`` or 0; strength ``ABSOLUTE``, ``STRONG``, ``MILD`` or ``NONE``."""
    played = colours.replace("-", "")
    if not played:
        return 0, NONE
    cd = played.count("W") - played.count("B")
    if cd <= -2:
        return WHITE, ABSOLUTE
    if cd >= 2:
        return BLACK, ABSOLUTE
    if played[-2:] == "BB":
        return WHITE, ABSOLUTE
    if played[-2:] == "WW":
        return BLACK, ABSOLUTE
    if cd == -1:
        return WHITE, STRONG
    if cd == 1:
        return BLACK, STRONG
    return (BLACK if played[-1] == "W" else WHITE), MILD


# Weights of a bracket's cost, most significant first (each count stays
# below _BASE: a bracket has fewer than 1024 players... pairs).
_BASE = 1 << 10
_U2 = 1
_D2 = _BASE
_U1 = _BASE**2
_D1 = _BASE**3
_STRONG = _BASE**4
_CONFLICT = _BASE**5
_MOVER_FLOATS = _BASE**6

# How a bracket is searched: in the Dutch system's order of candidates (each
# pairing of the moved-down players, then for the remainder S1 against the
# transpositions of S2, then one player of S1 exchanged with one of S2 and
# the transpositions again), then any pairing.
_DUTCH, _ANY = 0, 1


@cache
def _exchanges(n1: int, n2: int) -> list[tuple[int, int]]:
    """Single exchanges (S1 index, S2 index) in the Dutch order: smallest
    difference of pairing positions first, then the lowest of S1."""
    return sorted(
        ((i, j) for i in range(n1) for j in range(n2)), key=lambda e: (n1 + e[1] - e[0], -e[0])
    )


class _Round:
    """The round being paired, players as indices (initial order)."""

    def __init__(
        self,
        points: Sequence[float],
        colours: Sequence[str],
        met: Collection[int],
        floats: Sequence[str] | None = None,
    ) -> None:
        self.n = len(points)
        self.points = points
        self.colours = colours
        self.met = met
        prefs = [preference(c) for c in colours]
        self.colour = [p[0] for p in prefs]
        self.strength = [p[1] for p in prefs]
        self.cd = [c.count("W") - c.count("B") for c in colours]
        history = floats if floats is not None else [""] * self.n
        # cost of floating down / of floating up against a moved-down player
        self.down = [
            (_D1 if f[-1:] == "D" else 0) + (_D2 if f[-2:-1] == "D" else 0) for f in history
        ]
        self.up = [(_U1 if f[-1:] == "U" else 0) + (_U2 if f[-2:-1] == "U" else 0) for f in history]
        self.rank = [0] * self.n
        for k, i in enumerate(sorted(range(self.n), key=lambda i: (-points[i], i))):
            self.rank[i] = k
        self.bye_ok: list[bool] | None = None
        self.last = False
        self.movers: frozenset[int] = frozenset()
        self.nodes = 0
        self.floor = 0
        self.strong_cap = 0
        self.best: tuple[int, list[tuple[int, int]], list[int]] | None = None
        self.rematch = False

    def allowed(self, a: int, b: int) -> bool:
        n = self.n
        if not self.rematch and (a * n + b if a < b else b * n + a) in self.met:
            return False
        ca = self.colour[a]
        return not (
            ca != 0
            and ca == self.colour[b]
            and self.strength[a] == ABSOLUTE
            and self.strength[b] == ABSOLUTE
        )

    def conflict(self, a: int, b: int) -> int:
        ca = self.colour[a]
        return 1 if ca != 0 and ca == self.colour[b] else 0

    def pair_cost(self, a: int, b: int) -> int:
        """Colour cost of a pair: both prefer the same colour (one of them
        does not get it), and that one's preference is strong (C.10, C.11)."""
        ca = self.colour[a]
        if ca == 0 or ca != self.colour[b]:
            return 0
        sa, sb = self.strength[a], self.strength[b]
        if min(sa, sb) >= STRONG and not (sa == ABSOLUTE and sb == ABSOLUTE):
            return _CONFLICT + _STRONG
        return _CONFLICT

    def allocate(self, a: int, b: int) -> tuple[int, int]:
        """(White, Black) of a pair; ``a`` ranked above ``b``."""
        ca, cb = self.colour[a], self.colour[b]
        if ca != cb and ca != 0 and cb != 0:
            return (a, b) if ca == WHITE else (b, a)
        if ca == 0 and cb == 0:
            return (a, b) if a % 2 == 0 else (b, a)
        if ca == 0:
            return (b, a) if cb == WHITE else (a, b)
        if cb == 0:
            return (a, b) if ca == WHITE else (b, a)
        sa, sb = self.strength[a], self.strength[b]
        if sa == ABSOLUTE and sb == ABSOLUTE:
            wa, wb = abs(self.cd[a]), abs(self.cd[b])
            if wa != wb:
                return _give(a, b, ca) if wa > wb else _give(b, a, cb)
        elif sa != sb:
            return _give(a, b, ca) if sa > sb else _give(b, a, cb)
        ha, hb = self.colours[a], self.colours[b]
        for k in range(min(len(ha), len(hb)) - 1, -1, -1):
            x, y = ha[k], hb[k]
            if x != y and x != "-" and y != "-":
                return (b, a) if x == "W" else (a, b)
        return _give(a, b, ca)

    # --- one bracket -------------------------------------------------------

    def bracket(
        self, movers: list[int], residents: list[int], most_floats: int | None = None
    ) -> tuple[list[tuple[int, int]], list[int]]:
        """Pairs of a bracket and its floaters (moved-down players first), at
        most ``most_floats`` of them (None: any number)."""
        everyone = movers + residents
        m = len(everyone)
        w = sum(1 for p in everyone if self.colour[p] == WHITE)
        b = sum(1 for p in everyone if self.colour[p] == BLACK)
        self.movers = frozenset(movers)
        top = m if most_floats is None else min(m, most_floats)
        for f in range(m % 2, top + 1, 2):
            q = (m - f) // 2
            x = max(0, w - q - f, b - q - f)
            self.floor = x * _CONFLICT
            self.best = None
            for mode in (_DUTCH, _ANY):
                for budget, self.strong_cap in ((x, 0), (x, m), (x + 1, m), (m, m)):
                    self.nodes = 0
                    self._movers(movers, 0, residents, f, budget, mode, [], [], 0)
                    if self.best is not None and self.best[0] < _MOVER_FLOATS:
                        break
                if self.best is not None:
                    break
            if self.best is not None:
                out = self.best[1]
                paired = {p for pair in out for p in pair}
                return out, [p for p in everyone if p not in paired]
        return [], everyone

    def _tick(self) -> bool:
        """Count a step; True past :data:`NODE_LIMIT` (the search stops)."""
        self.nodes += 1
        return self.nodes > NODE_LIMIT

    def _leaf(self, out: list[tuple[int, int]], floaters: list[int], cost: int) -> bool:
        """A complete candidate: kept if better than the best so far; True
        (stop) when nothing can beat it."""
        if self.last and self.bye_ok is not None and not all(self.bye_ok[p] for p in floaters):
            return False
        for p in floaters:
            cost += _MOVER_FLOATS if p in self.movers else self.down[p]
        if self.best is None or cost < self.best[0]:
            self.best = (cost, list(out), list(floaters))
            return cost <= self.floor
        return False

    def _movers(
        self,
        movers: list[int],
        k: int,
        left: list[int],
        floats: int,
        budget: int,
        mode: int,
        out: list[tuple[int, int]],
        floated: list[int],
        cost: int,
    ) -> bool:
        if k == len(movers):
            if mode == _ANY:
                return self._any(left, floats, budget, out, floated, cost)
            q = (len(left) - floats) // 2
            if q < 0:
                return False
            s1, s2 = left[:q], left[q:]
            if self._halves(s1, s2, budget, out, floated, cost):
                return True
            for i, j in _exchanges(len(s1), len(s2)):
                t1 = sorted([*s1[:i], *s1[i + 1 :], s2[j]], key=self.rank.__getitem__)
                t2 = sorted([*s2[:j], *s2[j + 1 :], s1[i]], key=self.rank.__getitem__)
                if self._halves(t1, t2, budget, out, floated, cost):
                    return True
            return False
        if self._tick():
            return True
        a = movers[k]
        best = self.best
        for i, b in enumerate(left):
            if not self.allowed(a, b):
                continue
            c = self.conflict(a, b)
            if c > budget:
                continue
            pc = cost + self.pair_cost(a, b) + self.up[b]
            if (best is not None and pc >= best[0]) or pc // _STRONG % _BASE > self.strong_cap:
                continue
            out.append((a, b))
            stop = self._movers(
                movers,
                k + 1,
                left[:i] + left[i + 1 :],
                floats,
                budget - c,
                mode,
                out,
                floated,
                pc,
            )
            out.pop()
            if stop:
                return True
            best = self.best
        if floats > 0:
            floated.append(a)
            stop = self._movers(
                movers, k + 1, left, floats - 1, budget, mode, out, floated, cost + _MOVER_FLOATS
            )
            floated.pop()
            return stop
        return False

    def _halves(
        self,
        s1: list[int],
        s2: list[int],
        budget: int,
        out: list[tuple[int, int]],
        floated: list[int],
        cost: int,
    ) -> bool:
        """S1[0], S1[1], ... each against the first S2 player left that keeps
        the search going (the transpositions of S2 in order)."""
        return self._transpose(s1, s2, budget, out, floated, cost, self._count(s1), self._count(s2))

    def _count(self, players: list[int]) -> list[int]:
        """Players with no preference, preferring White, preferring Black
        (indexed by the colour: 0, ``WHITE``, ``BLACK``)."""
        counts = [0, 0, 0]
        colour = self.colour
        for p in players:
            counts[colour[p]] += 1
        return counts

    def _transpose(
        self,
        s1: list[int],
        s2: list[int],
        budget: int,
        out: list[tuple[int, int]],
        floated: list[int],
        cost: int,
        k1: list[int],
        k2: list[int],
    ) -> bool:
        if not s1:
            return self._leaf(out, floated + s2, cost)
        if self._tick():
            return True
        a = s1[0]
        rest = s1[1:]
        colour = self.colour
        r1 = list(k1)
        r1[colour[a]] -= 1
        for i, b in enumerate(s2):
            if not self.allowed(a, b):
                continue
            c = self.conflict(a, b)
            if c > budget:
                continue
            r2 = list(k2)
            r2[colour[b]] -= 1
            bound = _halves_bound(r1, r2) if rest else 0
            if bound > budget - c:
                continue
            pc = cost + self.pair_cost(a, b)
            if pc // _STRONG % _BASE > self.strong_cap:
                continue
            if self.best is not None and pc + bound * _CONFLICT >= self.best[0]:
                continue
            out.append((a, b))
            stop = self._transpose(rest, s2[:i] + s2[i + 1 :], budget - c, out, floated, pc, r1, r2)
            out.pop()
            if stop:
                return True
        return False

    def _any(
        self,
        left: list[int],
        floats: int,
        budget: int,
        out: list[tuple[int, int]],
        floated: list[int],
        cost: int,
    ) -> bool:
        if len(left) <= floats:
            return self._leaf(out, floated + left, cost)
        if self._tick():
            return True
        bound = self._bound(left, floats)
        if bound > budget or (self.best is not None and cost + bound * _CONFLICT >= self.best[0]):
            return False
        a = left[0]
        for i in range(1, len(left)):
            b = left[i]
            if not self.allowed(a, b):
                continue
            c = self.conflict(a, b)
            if c > budget:
                continue
            pc = cost + self.pair_cost(a, b)
            if pc // _STRONG % _BASE > self.strong_cap:
                continue
            out.append((a, b))
            stop = self._any(
                left[1:i] + left[i + 1 :],
                floats,
                budget - c,
                out,
                floated,
                pc,
            )
            out.pop()
            if stop:
                return True
        if floats > 0:
            floated.append(a)
            stop = self._any(left[1:], floats - 1, budget, out, floated, cost)
            floated.pop()
            return stop
        return False

    def _bound(self, players: list[int], floats: int) -> int:
        """Fewest pairs with both players preferring the same colour among
        ``players`` with ``floats`` of them unpaired."""
        colour = self.colour
        w = b = 0
        for p in players:
            c = colour[p]
            if c == WHITE:
                w += 1
            elif c == BLACK:
                b += 1
        q = (len(players) - floats) // 2
        return max(0, w - q - floats, b - q - floats)

    def groups(self, groups: list[list[int]], odd: int) -> tuple[list[tuple[int, int]], list[int]]:
        """Pair the brackets from the top; the last one leaves ``odd`` (0 or
        1) players unpaired, the bye, or fails (returns its players)."""
        pairs: list[tuple[int, int]] = []
        carry: list[int] = []
        for k, group in enumerate(groups):
            self.last = k == len(groups) - 1
            got, carry = self.bracket(carry, group, odd if self.last else None)
            pairs += got
        return pairs, carry


def _halves_bound(k1: list[int], k2: list[int]) -> int:
    """Fewest same-colour pairs when each player of S1 meets one of S2, from
    their counts (:meth:`_Round._count`)."""
    n1, w1, b1 = k1
    n2, w2, b2 = k2
    a = min(w1, b2)
    c = min(b1, w2)
    free = a + c + min(n2, w1 - a + b1 - c) + n1
    return max(0, n1 + w1 + b1 - free)


def _give(a: int, b: int, colour: int) -> tuple[int, int]:
    """``a`` gets ``colour``."""
    return (a, b) if colour == WHITE else (b, a)


def pair_indices(
    points: Sequence[float],
    colours: Sequence[str],
    had_bye: Sequence[bool],
    met: Collection[int],
    floats: Sequence[str] | None = None,
) -> tuple[list[tuple[int, int]], int]:
    """:func:`pair_round` on players 0..n-1 in initial order: ``met`` holds
    ``a * n + b`` (``a < b``) for each pair that already met; ``floats`` the
    float history (:class:`Entrant`), None when not known. Returns the games
    as (White, Black) and the bye (-1: none)."""
    n = len(points)
    order = sorted(range(n), key=lambda i: (-points[i], i))
    groups: list[list[int]] = []
    for i in order:
        if groups and points[groups[-1][0]] == points[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    rnd = _Round(points, colours, met, floats)
    odd = n % 2
    if odd:
        rnd.bye_ok = [not had_bye[i] for i in range(n)]
        if not any(rnd.bye_ok):
            rnd.bye_ok = None
    while True:
        pairs, left = rnd.groups(groups, odd)
        if len(left) == odd:
            break
        if len(groups) > 1:
            groups = [*groups[:-2], groups[-2] + groups[-1]]
            continue
        if rnd.rematch:  # cannot happen: any players can meet with rematches allowed
            raise ValueError("no pairing found")
        rnd.rematch = True
    bye = left[0] if left else -1
    rank = {p: k for k, p in enumerate(order)}
    games = [rnd.allocate(a, b) if rank[a] < rank[b] else rnd.allocate(b, a) for a, b in pairs]
    games.sort(
        key=lambda g: (
            -max(points[g[0]], points[g[1]]),
            -(points[g[0]] + points[g[1]]),
            min(rank[g[0]], rank[g[1]]),
        )
    )
    return games, bye


def pair_round(
    entrants: Sequence[Entrant],
    met: Collection[tuple[str, str]] = (),
) -> Pairing:
    """Pair one round. ``entrants``: the players to pair, in initial order
    (pairing numbers 1, 2, ...: by rating, highest first); ``met``: the pairs
    that already played (either order; forfeits included if they count as
    having met)."""
    index = {e.key: k for k, e in enumerate(entrants)}
    if len(index) != len(entrants):
        raise ValueError("a player is listed twice")
    n = len(entrants)
    seen: set[int] = set()
    for a, b in met:
        i, j = index.get(a), index.get(b)
        if i is not None and j is not None and i != j:
            seen.add(min(i, j) * n + max(i, j))
    for e in entrants:
        if set(e.colours) - {"W", "B", "-"}:
            raise ValueError(f"{e.key}: colours are W, B or -, got {e.colours!r}")
        if set(e.floats) - {"D", "U", "-"}:
            raise ValueError(f"{e.key}: floats are D, U or -, got {e.floats!r}")
    games, bye = pair_indices(
        [e.points for e in entrants],
        [e.colours for e in entrants],
        [e.had_bye for e in entrants],
        seen,
        [e.floats for e in entrants] if any(e.floats for e in entrants) else None,
    )
    keys = [e.key for e in entrants]
    return Pairing(
        tuple((keys[w], keys[b]) for w, b in games),
        None if bye < 0 else keys[bye],
    )
