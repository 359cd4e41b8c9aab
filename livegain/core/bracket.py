"""A knockout's bracket: who remains, and each player's exact chance of winning the event.

The rounds on the boards give the bracket's matches, each a :class:`Tie`
between two players with the chance that the first goes through (1 or 0 once
decided; a match in progress: its live chance, :mod:`livegain.core.knockout`).
Each match of a round is a node of the bracket; the winners of two nodes of
one round meet in the next. Which two:

* where the next round is already on the boards, as it is paired there: a
  match of round r+1 between X and Y joins the nodes of round r that X and Y
  come from (a player who is in no node of round r enters there, as a seeded
  player would);
* otherwise by the **bracket order**: ``adjacent``, the nodes 2j and 2j+1 of
  the round (in board order: the first round's boards, then each later
  node at the place of the earlier of the two it joins); ``folded``, nodes i
  and n-1-i (boards in seeding order, 1 v 64, 2 v 63: the FIDE World Cup's,
  and its files'). Nodes whose partner by that order is already paired are
  paired among themselves in the same way; a node left alone (an odd count)
  passes to the next round without a match. Unless it is given, the order is
  read from the rounds already paired on the boards (every pairing they show
  fits it), else ``adjacent``.

A match of round r+1 between two players who both lost in round r is a place
match (third place): it is not part of the bracket.

The chance of winning a node is exact, by dynamic programming from the first
round: a match on the boards is won with its own chance (its players are
there); a match not yet paired, between the winners of nodes c1 and c2, is
won by p from c1 with

    P(p wins) = P(p wins c1) x sum over q of P(q wins c2) x P(p beats q)

(and the same for the players of c2), ``P(p beats q)`` from ``beat(p, q,
round)``: a mini-match from the ratings (:mod:`livegain.core.knockout_table`
gives it). The chance of winning the event is the chance of winning the last
node; a player's chance of reaching round k+1 is that of winning his node of
round k. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from livegain.core.knockout import BracketOrder


@dataclass(frozen=True)
class Tie:
    """A match on the boards: its two players (keys) and the chance that ``a``
    goes through."""

    a: str
    b: str
    p_a: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_a <= 1.0:
            raise ValueError(f"match {self.a} - {self.b}: chance {self.p_a} is not in [0, 1]")
        if self.a == self.b:
            raise ValueError(f"match {self.a} - {self.b}: a player against himself")


@dataclass(frozen=True)
class BracketRow:
    """A player still in the event: his chance of reaching each round from
    his current one (``reach``, round number -> chance) and of winning it."""

    player: str
    round: int
    """The round he plays (or waits for) now."""
    reach: tuple[tuple[int, float], ...]
    """(round, chance of reaching it), for each round after ``round``."""
    win: float


@dataclass(frozen=True)
class Bracket:
    rows: tuple[BracketRow, ...]
    """The players still in, by chance of winning the event (highest first)."""
    rounds: tuple[int, ...]
    """Every round of the bracket, those on the boards and those to come."""
    order: BracketOrder
    why: str
    """Why that bracket order (given, read from the boards, or the default)."""
    place_matches: tuple[tuple[int, str, str], ...] = field(default=())
    """(round, a, b) of the matches left out: between two players already out."""

    def win(self, player: str) -> float:
        """A player's chance of winning the event (0 once he is out)."""
        return next((r.win for r in self.rows if r.player == player), 0.0)


@dataclass
class _Node:
    dist: dict[str, float]
    """Player -> the chance that he wins this node."""
    pos: float
    """Its place in its round's order."""
    children: tuple[int, ...] = ()
    """Its feeders' indices in the round before (a known match's or a pairing's)."""


Beat = Callable[[str, str, int], float]
"""``beat(p, q, round)``: the chance that p beats q in a match of ``round``."""


def _rule_pairs(n: int, order: BracketOrder) -> list[tuple[int, int]]:
    """The pairs of n nodes (indices in order) by the bracket order; with n odd
    the last (adjacent) or the middle (folded) node is left out."""
    if order == "adjacent":
        return [(i, i + 1) for i in range(0, n - 1, 2)]
    return [(i, n - 1 - i) for i in range(n // 2)]


def _fits(pairs: list[tuple[int, int]], n: int, order: BracketOrder) -> bool:
    rule = {frozenset(p) for p in _rule_pairs(n, order)}
    return all(frozenset(p) in rule for p in pairs)


def bracket(
    rounds: Sequence[Sequence[Tie]],
    beat: Beat,
    *,
    first_round: int = 1,
    order: BracketOrder | None = None,
) -> Bracket:
    """The bracket of the matches on the boards, round by round from
    ``first_round`` (each round's matches in board order), to its last
    round; see the module docstring."""
    if not rounds or not rounds[0]:
        raise ValueError("a bracket needs the matches of its first round")
    chosen, why = _order(order, rounds)
    place: list[tuple[int, str, str]] = []
    levels: list[list[_Node]] = [
        [_Node({t.a: t.p_a, t.b: 1.0 - t.p_a}, float(i)) for i, t in enumerate(rounds[0])]
    ]
    for t in range(1, len(rounds)):
        prev = levels[-1]
        where = {p: i for i, node in enumerate(prev) for p in node.dist}
        nodes: list[_Node] = []
        used: set[int] = set()
        for tie in rounds[t]:
            ia, ib = where.get(tie.a), where.get(tie.b)
            out_a = ia is not None and prev[ia].dist[tie.a] == 0.0
            out_b = ib is not None and prev[ib].dist[tie.b] == 0.0
            if out_a and out_b:
                place.append((first_round + t, tie.a, tie.b))
                continue
            # a player on the boards of round t won his node of the round before
            for i, p in ((ia, tie.a), (ib, tie.b)):
                if i is not None:
                    prev[i].dist = {q: 1.0 if q == p else 0.0 for q in prev[i].dist}
            children = tuple(i for i in (ia, ib) if i is not None)
            used.update(children)
            pos = float(min(children)) if children else float(len(prev))
            nodes.append(_Node({tie.a: tie.p_a, tie.b: 1.0 - tie.p_a}, pos, children))
        nodes.extend(_pair(prev, used, chosen, beat, first_round + t))
        nodes.sort(key=lambda node: node.pos)
        levels.append(nodes)
    # the rounds to come
    while len(levels[-1]) > 1:
        levels.append(_pair(levels[-1], set(), chosen, beat, first_round + len(levels)))
    return _rows(levels, first_round, chosen, why, place)


def _order(given: BracketOrder | None, rounds: Sequence[Sequence[Tie]]) -> tuple[BracketOrder, str]:
    """The bracket order: as given, else the one every pairing on the boards
    fits (each match of round t+1 between the players of boards i and j of
    round t), else ``adjacent``."""
    if given is not None:
        return given, f"{given}, as configured"
    shown: list[tuple[list[tuple[int, int]], int]] = []
    for t in range(1, len(rounds)):
        pos = {p: i for i, tie in enumerate(rounds[t - 1]) for p in (tie.a, tie.b)}
        pairs = [(pos[tie.a], pos[tie.b]) for tie in rounds[t] if tie.a in pos and tie.b in pos]
        if pairs:
            shown.append((pairs, len(rounds[t - 1])))
    candidates: tuple[BracketOrder, ...] = ("folded", "adjacent")
    if shown:
        for candidate in candidates:
            if all(_fits(p, n, candidate) for p, n in shown):
                return candidate, f"{candidate}, as the rounds already paired show"
    return "adjacent", "adjacent, the default (no round paired yet shows the order)"


def _pair(
    prev: list[_Node], used: set[int], order: BracketOrder, beat: Beat, rnd: int
) -> list[_Node]:
    """The nodes of the next round from the nodes of ``prev`` that no match on
    the boards takes (``used``): paired by ``order``, the rest among themselves."""
    free = [i for i in range(len(prev)) if i not in used]
    if not free:
        return []
    taken: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for i, j in _rule_pairs(len(prev), order):
        if i in free and j in free:
            pairs.append((i, j))
            taken.update((i, j))
    rest = [i for i in free if i not in taken]
    pairs.extend((rest[i], rest[j]) for i, j in _rule_pairs(len(rest), order))
    taken.update(x for pair in pairs for x in pair)
    out = [_match(prev[i], prev[j], beat, rnd, (i, j)) for i, j in pairs]
    # a node left alone goes through without a match
    out.extend(_Node(dict(prev[i].dist), prev[i].pos, (i,)) for i in free if i not in taken)
    return out


def _match(c1: _Node, c2: _Node, beat: Beat, rnd: int, children: tuple[int, int]) -> _Node:
    """A match not yet paired between the winners of ``c1`` and ``c2``."""
    dist: dict[str, float] = {}
    one = [(p, x) for p, x in c1.dist.items() if x > 0.0]
    two = [(q, y) for q, y in c2.dist.items() if y > 0.0]
    for p, _ in one:
        dist[p] = 0.0
    for q, _ in two:
        dist[q] = 0.0
    for p, x in one:
        for q, y in two:
            w = beat(p, q, rnd)
            dist[p] += x * y * w
            dist[q] += x * y * (1.0 - w)
    # players already out of a feeder stay listed with 0 (they are out)
    for node in (c1, c2):
        for p, x in node.dist.items():
            if x == 0.0:
                dist.setdefault(p, 0.0)
    return _Node(dist, min(c1.pos, c2.pos), children)


def _rows(
    levels: list[list[_Node]],
    first_round: int,
    order: BracketOrder,
    why: str,
    place: list[tuple[int, str, str]],
) -> Bracket:
    rounds = tuple(first_round + t for t in range(len(levels)))
    # per player: the chance of winning his node at each level he is part of
    won: dict[str, dict[int, float]] = {}
    for t, nodes in enumerate(levels):
        for node in nodes:
            for p, x in node.dist.items():
                won.setdefault(p, {})[t] = x
    last = len(levels) - 1
    rows: list[BracketRow] = []
    for p, by_level in won.items():
        top = max(by_level)
        if by_level[top] == 0.0 and top > min(by_level):
            continue  # out
        # his current round: the first level whose node he has not won for sure
        now = next((t for t in sorted(by_level) if by_level[t] < 1.0), top)
        if by_level.get(now, 0.0) == 0.0:
            continue  # out in his current round
        reach = tuple((first_round + t + 1, by_level.get(t, 0.0)) for t in range(now, last))
        rows.append(BracketRow(p, first_round + now, reach, by_level.get(last, 0.0)))
    rows.sort(key=lambda r: (-r.win, r.player))
    return Bracket(tuple(rows), rounds, order, why, tuple(place))
