"""Tournament standings from finished results, with FIDE tie-breaks (Handbook C.07).

Players are identified by a key chosen by the caller (a FIDE id when known,
otherwise the name). A :class:`Result` is one round of one player pairing:
a game between two players (played over the board, or decided by forfeit), or
a bye (one player, no opponent). A game's result is kept as game points
(1 a win, 0.5 a draw, 0 a loss; a double forfeit, 0-0, is allowed); the
event's :class:`~livegain.core.scoring.Scoring` turns them into points
(default 1 / 0.5 / 0 for either colour; 3 / 1 / 0, or more for Black, as the
event says). A game decided by forfeit scores as the result it stands for
(a forfeit win gets that colour's win points, a forfeit loss its loss
points). A bye keeps the value it is given, in the event's points.

Tie-breaks (names, with FIDE's abbreviations accepted as aliases):

``direct_encounter`` (DE)
    Among the players still tied (on points and on every earlier tie-break),
    the points each scored against the others of the group (the event's
    points). When all of them have met, they are ordered by those points. When
    some have not met, a player (or a group) is ranked ahead only if no result
    of the missing games could change it: ahead of the rest means scoring more
    than any of the rest could reach by winning all their missing games within
    the group (a missing game worth the larger win of the scoring); players
    that cannot be separated this way stay tied for the next tie-break.
    Games decided by forfeit count as encounters, with their result.
``sonneborn_berger`` (SB)
    Sum over games of (opponent's points x own game points in that game): the
    opponent's points are the event's, the factor is 1 for a win, 0.5 for a
    draw, 0 for a loss whatever the scoring.
``wins`` (WIN)
    Rounds in which the player got a win's points, played or not (forfeit wins
    and byes worth a win included: :meth:`Scoring.bye_game_points`).
``won`` (WON)
    Games won over the board.
``buchholz`` (BH)
    Sum of the opponents' points (the event's).
``buchholz_cut1`` (BH-C1)
    Buchholz without its least significant contribution.

**Armageddon** (a scoring with an Armageddon rule, Norway Chess): the
Armageddon that follows a classical draw is part of that pairing, not a game
or a round of its own (:attr:`Result.armageddon` on the classical draw). It
changes the pairing's points only: its winner gets the rule's ``win`` in all,
its loser its ``loss`` (:meth:`Scoring.armageddon_points`), in the points and
in the direct encounter; everything else sees the classical game: one round,
one game over the board, a draw (Sonneborn-Berger counts half the opponent's
points whoever won the Armageddon; an Armageddon win is no win for ``wins``
and ``won``; Buchholz adds the opponent once). Until the Armageddon is over
the classical draw counts alone. How a game is known to be an Armageddon is
the caller's (:func:`names_armageddon`, :func:`attach_armageddons`).

Unplayed rounds (byes, forfeits either way) are kept simple, in the spirit
of C.07's "dummy opponent": for Buchholz and Sonneborn-Berger each unplayed
round of a player counts as a game against an opponent with the player's own
points (so a Buchholz contribution equal to the player's own points, and a
Sonneborn-Berger contribution of own points x game points obtained in that
round: a forfeit's, or the result a bye stands for);
for Buchholz cut-1 an unplayed round is the contribution cut first. The
player's real opponents see the player's actual points.

Points and tie-break values are added up exactly when every value of the
scoring (and of the byes) is a multiple of 1/1024; otherwise (0.1...) they are
rounded to 9 decimals, so that equal totals compare equal.

Ranks: players are ordered by points, then by each tie-break in turn; those
still equal after the last tie-break share a rank (competition ranking:
1, 2, 2, 4).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from livegain.core.scoring import EXACT_STEP, ROUND_DIGITS, STANDARD, Scoring, outcome

Tiebreak = Literal[
    "direct_encounter", "sonneborn_berger", "wins", "won", "buchholz", "buchholz_cut1"
]
TIEBREAKS: tuple[Tiebreak, ...] = get_args(Tiebreak)

ALIASES: dict[str, Tiebreak] = {
    "DE": "direct_encounter",
    "SB": "sonneborn_berger",
    "WIN": "wins",
    "WON": "won",
    "BH": "buchholz",
    "BH-C1": "buchholz_cut1",
}

DEFAULT_TIEBREAKS: tuple[Tiebreak, ...] = ("direct_encounter", "sonneborn_berger", "wins")
"""A usual order for a round robin: direct encounter, Sonneborn-Berger, wins."""

_POINTS = (0.0, 0.5, 1.0)
_MAX_BYE = 1_000_000.0


def tiebreak_names(names: Iterable[str]) -> tuple[Tiebreak, ...]:
    """Check and normalise a list of tie-break names (aliases such as ``"SB"`` accepted)."""
    out: list[Tiebreak] = []
    for raw in names:
        tb = ALIASES.get(raw.upper()) or _as_tiebreak(raw)
        if tb in out:
            raise ValueError(f"tie-break {tb!r} given twice")
        out.append(tb)
    return tuple(out)


def _as_tiebreak(name: str) -> Tiebreak:
    for tb in TIEBREAKS:
        if tb == name:
            return tb
    known = ", ".join([*TIEBREAKS, *ALIASES])
    raise ValueError(f"unknown tie-break {name!r}; expected one of {known}")


@dataclass(frozen=True)
class Result:
    """One finished pairing.

    For a game, ``white_points`` and ``black_points`` are game points (1, 0.5
    or 0), which the event's :class:`~livegain.core.scoring.Scoring` turns
    into points. ``black`` is None for a bye (``white`` is the player who got
    it, with ``white_points``: the bye's value in the event's points, any
    number from 0). ``played`` is False for a game decided by forfeit (and for
    a bye).
    """

    white: str
    black: str | None
    white_points: float
    black_points: float = 0.0
    played: bool = True
    round: int | None = None
    armageddon: tuple[str, float] | None = None
    """The Armageddon after this classical draw, when it is over: (the player
    who had White in it, his game points 1, ½ or 0)."""

    def __post_init__(self) -> None:
        if self.armageddon is not None:
            arm_white, arm_points = self.armageddon
            if not (self.played and self.white_points == self.black_points == 0.5):
                raise ValueError("an Armageddon follows a classical draw played over the board")
            if arm_white not in (self.white, self.black):
                raise ValueError(f"Armageddon White {arm_white!r} is not one of the two players")
            if arm_points not in _POINTS:
                raise ValueError(f"Armageddon points must be 0, 0.5 or 1, got {arm_points}")
        if self.black is None:
            if self.played:
                raise ValueError("a bye is not a played game (played=False)")
            if self.black_points != 0.0:
                raise ValueError("a bye has no opponent to give points to")
            if not 0.0 <= self.white_points <= _MAX_BYE:  # NaN fails too
                raise ValueError(
                    f"a bye is worth a number of points from 0, got {self.white_points}"
                )
            return
        if self.white_points not in _POINTS or self.black_points not in _POINTS:
            raise ValueError(
                f"points must be 0, 0.5 or 1, got {self.white_points} and {self.black_points}"
            )
        if self.white == self.black:
            raise ValueError(f"player {self.white!r} paired with himself")
        if self.played and self.white_points + self.black_points != 1.0:
            raise ValueError(
                f"a played game gives 1 point in all, got {self.white_points} + {self.black_points}"
            )
        if not self.played and self.white_points + self.black_points > 1.0:
            raise ValueError("a forfeit gives at most 1 point in all")

    @classmethod
    def game(cls, white: str, black: str, result: str, round: int | None = None) -> Result:
        """A game from a PGN-style result: ``1-0``, ``0-1``, ``1/2-1/2`` (or ``½-½``);
        forfeits ``+/-``, ``-/+``, ``-/-`` (also ``+--``, ``--+``, ``---``)."""
        w, b, played = outcome(result)
        return cls(white, black, w, b, played, round)

    @classmethod
    def bye(cls, player: str, points: float = 1.0, round: int | None = None) -> Result:
        """A bye worth ``points`` (1 for a pairing-allocated bye, often 0.5 or 0 on
        request): the event's points, kept as given whatever the scoring."""
        return cls(player, None, points, 0.0, False, round)

    def with_armageddon(self, white: str, result: str) -> Result:
        """This classical draw with its Armageddon over: ``white`` had White in
        it, ``result`` is its result (``1-0``, ``0-1``, ``1/2-1/2``)."""
        w, _, played = outcome(result)
        if not played:
            raise ValueError(f"an Armageddon is played over the board, got {result!r}")
        return replace(self, armageddon=(white, w))


ARMAGEDDON = "armageddon"
"""The word that marks an Armageddon game in a ``GameType`` tag, a round's or
an event's name (case ignored)."""


def names_armageddon(*labels: str | None) -> bool:
    """Whether any of ``labels`` (a ``GameType`` tag, a round name, an event
    name) says the game is an Armageddon."""
    return any(label is not None and ARMAGEDDON in label.lower() for label in labels)


def result_points(r: Result, scoring: Scoring) -> tuple[float, float]:
    """White's and Black's points of a game ``r`` with ``scoring``: the
    colours' points for their game points, or the pairing's totals when its
    Armageddon is over (:meth:`Scoring.armageddon_points`)."""
    if r.black is None:
        raise ValueError("a bye has no game points")
    if r.armageddon is None:
        return scoring.game(r.white_points, r.black_points)
    arm_white, arm_points = r.armageddon
    first, second = scoring.armageddon_points(arm_points)
    return (first, second) if arm_white == r.white else (second, first)


def classical_draw(
    results: Sequence[Result], white: str, black: str, round: int | None = None
) -> int | None:
    """The index in ``results`` of the classical draw an Armageddon between
    ``white`` and ``black`` follows: a draw over the board between the two,
    without an Armageddon yet, of the same ``round`` (any round when None or
    when the draw has none); the latest one. None when there is none."""
    pair = {white, black}
    for k in range(len(results) - 1, -1, -1):
        r = results[k]
        if (
            r.black is not None
            and {r.white, r.black} == pair
            and r.played
            and r.white_points == 0.5
            and r.armageddon is None
            and (round is None or r.round is None or r.round == round)
        ):
            return k
    return None


def attach_armageddons(results: Iterable[Result], armageddons: Iterable[Result]) -> list[Result]:
    """``results`` (classical games, byes) with each finished Armageddon of
    ``armageddons`` attached to the classical draw it follows
    (:func:`classical_draw`: the same two players, the same round when both
    say). ValueError naming the game when there is no such draw."""
    out = list(results)
    for arm in armageddons:
        if arm.black is None or not arm.played:
            raise ValueError(f"Armageddon of {arm.white!r}: not a game played over the board")
        k = classical_draw(out, arm.white, arm.black, arm.round)
        if k is None:
            where = f" in round {arm.round}" if arm.round is not None else ""
            raise ValueError(
                f"Armageddon {arm.white} - {arm.black}{where}: no classical draw between them"
            )
        out[k] = replace(out[k], armageddon=(arm.white, arm.white_points))
    return out


@dataclass(frozen=True)
class Row:
    """One line of the standings; ``tiebreaks`` follows :attr:`Standings.tiebreaks`.

    A direct-encounter value is None when the player was not tied with anyone
    when that tie-break came to be applied (it is then meaningless).
    """

    rank: int
    player: str
    points: float
    rounds: int
    tiebreaks: tuple[float | None, ...]


@dataclass
class _Player:
    points: float = 0.0
    rounds: int = 0
    # (opponent, own game points) of games played over the board
    played: list[tuple[str, float]] = field(default_factory=list)
    unplayed: int = 0
    unplayed_game_points: float = 0.0
    wins: int = 0
    won: int = 0


@dataclass(frozen=True)
class Standings:
    """The standings: ``rows`` ordered by rank."""

    rows: tuple[Row, ...]
    tiebreaks: tuple[Tiebreak, ...]

    @classmethod
    def from_results(
        cls,
        results: Iterable[Result],
        tiebreaks: Iterable[str] = DEFAULT_TIEBREAKS,
        players: Iterable[str] = (),
        scoring: Scoring = STANDARD,
    ) -> Standings:
        """Standings of every player in ``players`` or in ``results``, the
        points counted with ``scoring`` (default 1 / 0.5 / 0)."""
        order = tiebreak_names(tiebreaks)
        white_of, black_of = scoring.by_game_points
        standard = scoring.is_standard
        exact = scoring.exact  # else totals are rounded (see livegain.core.scoring)
        stats: dict[str, _Player] = {}
        for p in players:
            stats.setdefault(p, _Player())
        # points each scored against each opponent, games decided by forfeit included
        encounters: dict[str, dict[str, float]] = defaultdict(dict)
        for r in results:
            white = stats.setdefault(r.white, _Player())
            if r.black is None:
                value = r.white_points
                exact = exact and (value / EXACT_STEP).is_integer()
                game = scoring.bye_game_points(value)
                white.points += value
                white.rounds += 1
                white.wins += game == 1.0
                white.unplayed += 1
                white.unplayed_game_points += game
                continue
            wkey, bkey = r.white, r.black
            black = stats.setdefault(bkey, _Player())
            wg, bg = r.white_points, r.black_points
            if r.armageddon is not None:
                wp, bp = result_points(r, scoring)
            else:
                wp, bp = (wg, bg) if standard else (white_of[wg], black_of[bg])
            versus = encounters[wkey]
            versus[bkey] = versus.get(bkey, 0.0) + wp
            versus = encounters[bkey]
            versus[wkey] = versus.get(wkey, 0.0) + bp
            played = r.played
            for st, opp, game, pts in ((white, bkey, wg, wp), (black, wkey, bg, bp)):
                st.points += pts
                st.rounds += 1
                st.wins += game == 1.0
                if played:
                    st.played.append((opp, game))
                    st.won += game == 1.0
                else:
                    st.unplayed += 1
                    st.unplayed_game_points += game
        if not exact:
            for s in stats.values():
                s.points = _rounded(s.points)
        points = {p: s.points for p, s in stats.items()}
        values: dict[Tiebreak, dict[str, float]] = {
            tb: {p: _value(tb, s, points) for p, s in stats.items()}
            for tb in order
            if tb != "direct_encounter"
        }
        if not exact:
            values = {tb: {p: _rounded(v) for p, v in vs.items()} for tb, vs in values.items()}
        de_shown: dict[str, float] = {}

        def refine(group: list[str], level: int) -> list[list[str]]:
            if len(group) == 1 or level == len(order):
                return [sorted(group)]
            tb = order[level]
            if tb == "direct_encounter":
                tiers = _direct_encounter_tiers(
                    group, encounters, de_shown, scoring.most, None if exact else _rounded
                )
            else:
                tiers = _split(group, values[tb])
            return [t for tier in tiers for t in refine(tier, level + 1)]

        ranked = [t for tier in _split(list(stats), points) for t in refine(tier, 0)]
        rows: list[Row] = []
        position = 1
        for tier in ranked:
            for p in tier:
                s = stats[p]
                shown = tuple(
                    de_shown.get(p) if tb == "direct_encounter" else values[tb][p] for tb in order
                )
                rows.append(Row(position, p, s.points, s.rounds, shown))
            position += len(tier)
        return cls(tuple(rows), order)

    def leaders(self) -> list[str]:
        """The players ranked first (more than one when tied after every tie-break)."""
        return [r.player for r in self.rows if r.rank == 1]

    def row(self, player: str) -> Row:
        for r in self.rows:
            if r.player == player:
                return r
        raise KeyError(player)

    def value(self, player: str, tiebreak: str) -> float | None:
        """``player``'s value of ``tiebreak`` (which must be one of :attr:`tiebreaks`)."""
        tb = tiebreak_names([tiebreak])[0]
        if tb not in self.tiebreaks:
            raise KeyError(f"tie-break {tb!r} is not in these standings")
        return self.row(player).tiebreaks[self.tiebreaks.index(tb)]


def _rounded(x: float) -> float:
    return round(x, ROUND_DIGITS)


def _value(tb: Tiebreak, s: _Player, points: dict[str, float]) -> float:
    if tb == "sonneborn_berger":
        return sum(points[o] * game for o, game in s.played) + s.unplayed_game_points * s.points
    if tb == "wins":
        return float(s.wins)
    if tb == "won":
        return float(s.won)
    contributions = [points[o] for o, _ in s.played]
    total = sum(contributions) + s.unplayed * s.points
    if tb == "buchholz":
        return total
    if tb == "buchholz_cut1":
        if s.unplayed:
            return total - s.points
        return total - min(contributions) if contributions else 0.0
    raise ValueError(f"no value for tie-break {tb!r}")


def _split(group: list[str], key: dict[str, float]) -> list[list[str]]:
    """``group`` split by ``key``, highest first."""
    by: dict[float, list[str]] = defaultdict(list)
    for p in group:
        by[key[p]].append(p)
    return [by[k] for k in sorted(by, reverse=True)]


def _direct_encounter_tiers(
    group: list[str],
    encounters: dict[str, dict[str, float]],
    shown: dict[str, float],
    most: float = 1.0,
    tidy: Callable[[float], float] | None = None,
) -> list[list[str]]:
    """Direct encounter within ``group`` (see the module docstring); ``most``:
    what a game not played could give; ``tidy``: how totals are rounded (None:
    not at all)."""
    members = set(group)
    current = {p: sum(v for o, v in encounters[p].items() if o in members) for p in group}
    reach = {
        p: current[p] + most * sum(1 for o in members if o != p and o not in encounters[p])
        for p in group
    }
    if tidy is not None:
        current = {p: tidy(v) for p, v in current.items()}
        reach = {p: tidy(v) for p, v in reach.items()}
    for p in group:
        shown[p] = current[p]
    rest = sorted(group, key=lambda p: (-current[p], p))
    tiers: list[list[str]] = []
    while rest:
        for k in range(1, len(rest) + 1):
            tail = max((reach[p] for p in rest[k:]), default=float("-inf"))
            if current[rest[k - 1]] > tail:
                tiers.append(rest[:k])
                rest = rest[k:]
                break
    return tiers
