"""One round of a Swiss pairing: a fast approximation of the FIDE Dutch system.

:func:`pair_round` pairs one round from the standings before it: each
player's points, colour history and whether he already had a bye, the pairs
that already met, and the initial order (the order the players are given in:
by rating, highest first, as the starting rank). Deterministic: the same
input gives the same pairing.

What it follows of the Dutch system (FIDE Handbook C.04.3):

* **Ranking**: by points, then by the initial order (pairing number).
* **Bye**: when the number of players is odd, the lowest-ranked player who has
  not had a bye gets it (the last-ranked when all have had one).
* **Score brackets**, from the top: the players on the same points, with the
  players floated down from the bracket above (moved-down players) ahead of
  them. The moved-down players are paired first, each with the highest-ranked
  resident he may meet (S1 = moved-down players, S2 = residents); the
  remaining residents are split into S1 (top half) and S2 (bottom half, one
  more when the count is odd) and S1[i] meets S2[i].
* **Absolute criteria**: no rematch; two players with the same absolute
  colour preference do not meet.
* **Transpositions**: when S1[i] - S2[i] is not allowed, S2 is permuted in
  lexicographic order (S1[0] keeps the highest S2 player he can have with a
  complete pairing of the rest, then S1[1]...), a depth-first search.
* **Exchanges**: when no transposition pairs the bracket, any pairing of its
  players is searched, highest-ranked player first, each with the
  highest-ranked player left that he may meet.
* **Colour criterion**: a pairing is searched first with the fewest pairs in
  which both players prefer the same colour that the bracket allows (at least
  ``max(0, w - q - f, b - q - f)`` with ``w``/``b`` the players preferring
  White/Black, ``q`` pairs and ``f`` floaters), then one more, then without a
  limit; this comes before the order of transpositions, as in the Dutch
  quality criteria.
* **Floaters**: a bracket with an odd count, or that cannot be paired
  completely, sends its unpaired players (the lowest-ranked the search
  leaves) down to the next bracket; fewer floaters are always preferred.
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

* no float history (C.14-C.17: a player floating down twice in a row, or
  again in the next round, is not avoided);
* no topscorer exceptions in the last round (absolute colour conflicts are
  never allowed);
* the colour criterion counts players not getting their preference whatever
  its strength (no separate minimisation of strong preferences, C.13), and
  the search for the fewest is capped (above);
* when the last bracket cannot be paired, the two lowest score groups are
  merged into one bracket and the whole round is paired again (the Dutch
  system re-pairs the penultimate bracket with other floaters instead); as a
  last resort (a tiny event late in its rounds) rematches are allowed;
* the bye goes to the lowest-ranked player without one even when another
  choice would give better pairings of the rest;
* each search is limited to :data:`NODE_LIMIT` steps; past it the next,
  looser search is tried.

Pure, typed, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

WHITE = 1
BLACK = -1
NONE, MILD, STRONG, ABSOLUTE = 0, 1, 2, 3

NODE_LIMIT = 500
"""Steps of one depth-first search before it gives up (then a looser one is tried)."""


@dataclass(frozen=True)
class Entrant:
    """A player before the round: ``colours`` one letter per round so far,
    ``W`` or ``B`` for a game over the board, ``-`` otherwise (bye, forfeit,
    absent); ``had_bye``: a pairing-allocated bye already received."""

    key: str
    points: float
    colours: str = ""
    had_bye: bool = False


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


class _Round:
    """The round being paired, players as indices (initial order)."""

    def __init__(
        self,
        points: Sequence[float],
        colours: Sequence[str],
        met: Collection[int],
    ) -> None:
        self.n = len(points)
        self.points = points
        self.colours = colours
        self.met = met
        prefs = [preference(c) for c in colours]
        self.colour = [p[0] for p in prefs]
        self.strength = [p[1] for p in prefs]
        self.cd = [c.count("W") - c.count("B") for c in colours]
        self.nodes = 0
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
        self, movers: list[int], residents: list[int]
    ) -> tuple[list[tuple[int, int]], list[int]]:
        """Pairs of a bracket and its floaters (moved-down players first)."""
        everyone = movers + residents
        m = len(everyone)
        w = sum(1 for p in everyone if self.colour[p] == WHITE)
        b = sum(1 for p in everyone if self.colour[p] == BLACK)
        for f in range(m % 2, m + 1, 2):
            q = (m - f) // 2
            x = max(0, w - q - f, b - q - f)
            for budget in (x, x + 1, m):
                for halves in (True, False):
                    self.nodes = 0
                    out: list[tuple[int, int]] = []
                    if self._movers(movers, 0, residents, f, budget, halves, out):
                        paired = {p for pair in out for p in pair}
                        return out, [p for p in everyone if p not in paired]
        return [], everyone

    def _movers(
        self,
        movers: list[int],
        k: int,
        left: list[int],
        floats: int,
        budget: int,
        halves: bool,
        out: list[tuple[int, int]],
    ) -> bool:
        if k == len(movers):
            if halves:
                q = (len(left) - floats) // 2
                if q < 0:
                    return False
                return self._halves(left[:q], left[q:], budget, out)
            return self._any(left, floats, budget, out)
        self.nodes += 1
        if self.nodes > NODE_LIMIT:
            return False
        a = movers[k]
        for i, b in enumerate(left):
            if not self.allowed(a, b):
                continue
            cost = self.conflict(a, b)
            if cost > budget:
                continue
            out.append((a, b))
            if self._movers(
                movers, k + 1, left[:i] + left[i + 1 :], floats, budget - cost, halves, out
            ):
                return True
            out.pop()
        if floats > 0:
            return self._movers(movers, k + 1, left, floats - 1, budget, halves, out)
        return False

    def _halves(
        self, s1: list[int], s2: list[int], budget: int, out: list[tuple[int, int]]
    ) -> bool:
        if not s1:
            return True
        self.nodes += 1
        if self.nodes > NODE_LIMIT:
            return False
        a = s1[0]
        rest = s1[1:]
        for i, b in enumerate(s2):
            if not self.allowed(a, b):
                continue
            cost = self.conflict(a, b)
            if cost > budget:
                continue
            out.append((a, b))
            if self._halves(rest, s2[:i] + s2[i + 1 :], budget - cost, out):
                return True
            out.pop()
        return False

    def _any(self, left: list[int], floats: int, budget: int, out: list[tuple[int, int]]) -> bool:
        if len(left) <= floats:
            return True
        self.nodes += 1
        if self.nodes > NODE_LIMIT or self._bound(left, floats) > budget:
            return False
        a = left[0]
        for i in range(1, len(left)):
            b = left[i]
            if not self.allowed(a, b):
                continue
            cost = self.conflict(a, b)
            if cost > budget:
                continue
            out.append((a, b))
            if self._any(left[1:i] + left[i + 1 :], floats, budget - cost, out):
                return True
            out.pop()
        return floats > 0 and self._any(left[1:], floats - 1, budget, out)

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

    def _halves_bound(self, s1: list[int], s2: list[int]) -> int:
        """Fewest same-colour pairs when each of ``s1`` meets one of ``s2``."""
        colour = self.colour
        w1 = b1 = n1 = w2 = b2 = n2 = 0
        for p in s1:
            c = colour[p]
            if c == WHITE:
                w1 += 1
            elif c == BLACK:
                b1 += 1
            else:
                n1 += 1
        for p in s2:
            c = colour[p]
            if c == WHITE:
                w2 += 1
            elif c == BLACK:
                b2 += 1
            else:
                n2 += 1
        a = min(w1, b2)
        c = min(b1, w2)
        free = a + c + min(n2, w1 - a + b1 - c) + n1
        return max(0, len(s1) - free)

    def groups(self, groups: list[list[int]]) -> tuple[list[tuple[int, int]], list[int]]:
        pairs: list[tuple[int, int]] = []
        carry: list[int] = []
        for group in groups:
            got, carry = self.bracket(carry, group)
            pairs += got
        return pairs, carry


def _give(a: int, b: int, colour: int) -> tuple[int, int]:
    """``a`` gets ``colour``."""
    return (a, b) if colour == WHITE else (b, a)


def pair_indices(
    points: Sequence[float],
    colours: Sequence[str],
    had_bye: Sequence[bool],
    met: Collection[int],
) -> tuple[list[tuple[int, int]], int]:
    """:func:`pair_round` on players 0..n-1 in initial order: ``met`` holds
    ``a * n + b`` (``a < b``) for each pair that already met. Returns the
    games as (White, Black) and the bye (-1: none)."""
    n = len(points)
    order = sorted(range(n), key=lambda i: (-points[i], i))
    bye = -1
    if n % 2:
        bye = next((i for i in reversed(order) if not had_bye[i]), order[-1])
        order.remove(bye)
    groups: list[list[int]] = []
    for i in order:
        if groups and points[groups[-1][0]] == points[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    rnd = _Round(points, colours, met)
    while True:
        pairs, left = rnd.groups(groups)
        if not left:
            break
        if len(groups) > 1:
            groups = [*groups[:-2], groups[-2] + groups[-1]]
            continue
        if rnd.rematch:  # cannot happen: any players can meet with rematches allowed
            raise ValueError("no pairing found")
        rnd.rematch = True
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
    games, bye = pair_indices(
        [e.points for e in entrants],
        [e.colours for e in entrants],
        [e.had_bye for e in entrants],
        seen,
    )
    keys = [e.key for e in entrants]
    return Pairing(
        tuple((keys[w], keys[b]) for w, b in games),
        None if bye < 0 else keys[bye],
    )
