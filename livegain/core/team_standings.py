"""Team standings: match points, game points and the team tie-breaks.

A team event (the Olympiad, a league) is played in matches of k boards
between two teams (``WhiteTeam``/``BlackTeam`` of each game). A match's game
points are the sums of its boards' points; the team with more wins the match:
2 match points for a win, 1 for a draw, 0 for a loss (FIDE's team
competitions; :class:`~livegain.core.team_match.MatchPoints` to change them).

Teams are ordered by match points (or game points: ``primary="GP"``), then
by the tie-breaks in the order given (FIDE Handbook C.07 for team
competitions, and the Olympiad's own); teams still equal share a rank.

========  ================================================================
name      value
========  ================================================================
``OSB``   Olympiad Sonneborn-Berger: over the team's opponents but the one
          with the fewest match points, each opponent's match points times
          the game points scored against it
``SB``    Sonneborn-Berger on match points: each opponent's match points
          times the match points scored against it
``GP``    game points
``MP``    match points (when the primary is game points)
``BH``    Buchholz: the sum of the opponents' match points
``BH-C1`` Buchholz without the opponent with the fewest match points
``DE``    direct encounter: match points among the tied teams, when they
          have all met (else no separation)
``MW``    matches won
========  ================================================================

The Olympiad 2018 and 2022 (open sections) used match points, then OSB,
then game points, then BH-C1: ``tests/core/test_team_standings.py`` finds
their official podiums (2018: China, USA and Russia on 18 match points, in
that order; 2022: Uzbekistan and Armenia on 19, India 2 third) from the
games alone. A team with no opponent in a round (a bye) scores nothing here
unless its match is given. Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from livegain.core.scoring import outcome
from livegain.core.team_match import MatchPoints

TEAM_TIEBREAKS = frozenset({"OSB", "SB", "GP", "MP", "BH", "BH-C1", "DE", "MW"})
#: The Olympiad's order (match points first).
OLYMPIAD_TIEBREAKS: tuple[str, ...] = ("OSB", "GP", "BH-C1")


@dataclass(frozen=True)
class TeamGame:
    """One board's game of a team match, as its PGN tags give it."""

    round: int
    white_team: str
    black_team: str
    result: str
    """White's view: ``1-0``, ``0-1``, ``1/2-1/2`` or a forfeit (``*``: not over)."""


@dataclass(frozen=True)
class TeamMatch:
    """A match: its round, its two teams (``a`` the first named) and their game points."""

    round: int
    a: str
    b: str
    points_a: float
    points_b: float
    boards: int
    unfinished: int = 0
    """Boards not over yet: the match is in progress."""

    @property
    def finished(self) -> bool:
        return self.unfinished == 0


def team_matches(games: Iterable[TeamGame]) -> list[TeamMatch]:
    """The matches the games make: grouped by round and pair of teams, in the
    order first met (each board's points to its player's team)."""
    acc: dict[tuple[int, frozenset[str]], list[float]] = {}
    names: dict[tuple[int, frozenset[str]], tuple[str, str]] = {}
    for g in games:
        if g.white_team == g.black_team:
            raise ValueError(f"round {g.round}: a game within team {g.white_team!r}")
        key = (g.round, frozenset((g.white_team, g.black_team)))
        if key not in acc:
            acc[key] = [0.0, 0.0, 0, 0]
            names[key] = (g.white_team, g.black_team)
        a, _b = names[key]
        slot = acc[key]
        slot[2] += 1
        try:
            w, bl, _ = outcome(g.result)
        except ValueError:  # not over yet
            slot[3] += 1
            continue
        if g.white_team == a:
            slot[0] += w
            slot[1] += bl
        else:
            slot[0] += bl
            slot[1] += w
    return [
        TeamMatch(k[0], names[k][0], names[k][1], v[0], v[1], int(v[2]), int(v[3]))
        for k, v in acc.items()
    ]


@dataclass(frozen=True)
class TeamRow:
    rank: int
    team: str
    match_points: float
    game_points: float
    matches: int
    won: int
    drawn: int
    lost: int
    tiebreaks: tuple[float, ...]


@dataclass(frozen=True)
class TeamStandings:
    rows: tuple[TeamRow, ...]
    tiebreaks: tuple[str, ...]
    primary: str

    @classmethod
    def from_matches(
        cls,
        matches: Sequence[TeamMatch],
        tiebreaks: Sequence[str] = OLYMPIAD_TIEBREAKS,
        *,
        primary: str = "MP",
        points: MatchPoints | None = None,
        teams: Iterable[str] = (),
    ) -> TeamStandings:
        """The standings of the finished matches (those in progress are left out)."""
        for tb in tiebreaks:
            if tb not in TEAM_TIEBREAKS:
                raise ValueError(f"unknown team tie-break {tb!r} (one of {sorted(TEAM_TIEBREAKS)})")
        if primary not in ("MP", "GP"):
            raise ValueError(f"the primary score is MP or GP, not {primary!r}")
        mp = points or MatchPoints()
        done = [m for m in matches if m.finished]
        all_teams = {t for m in matches for t in (m.a, m.b)} | set(teams)
        mps: dict[str, float] = defaultdict(float)
        gps: dict[str, float] = defaultdict(float)
        record: dict[str, list[int]] = {t: [0, 0, 0] for t in all_teams}
        met: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
        for m in done:
            outcome = (m.points_a > m.points_b) - (m.points_a < m.points_b)
            for team, other, own, sign in (
                (m.a, m.b, m.points_a, outcome),
                (m.b, m.a, m.points_b, -outcome),
            ):
                gained = mp.win if sign > 0 else mp.draw if sign == 0 else mp.loss
                mps[team] += gained
                gps[team] += own
                record[team][0 if sign > 0 else 1 if sign == 0 else 2] += 1
                met[team].append((other, own, gained))
        first = mps if primary == "MP" else gps
        keys: dict[str, list[float]] = {t: [first[t]] for t in all_teams}
        for name in tiebreaks:
            if name == "DE":
                de = _direct_encounter(keys, met)
                for t in all_teams:
                    keys[t].append(de[t])
            else:
                for t in all_teams:
                    keys[t].append(_tiebreak(name, t, mps, gps, met, record))
        ordered = sorted(all_teams, key=lambda t: (tuple(-x for x in keys[t]), t))
        rows: list[TeamRow] = []
        for i, t in enumerate(ordered):
            tied = bool(rows) and keys[rows[-1].team] == keys[t]
            rank = rows[-1].rank if tied else i + 1
            w, d, lo = record[t]
            rows.append(TeamRow(rank, t, mps[t], gps[t], w + d + lo, w, d, lo, tuple(keys[t][1:])))
        return cls(tuple(rows), tuple(tiebreaks), primary)

    def row(self, team: str) -> TeamRow:
        return next(r for r in self.rows if r.team == team)


def _tiebreak(
    name: str,
    team: str,
    mps: Mapping[str, float],
    gps: Mapping[str, float],
    met: Mapping[str, list[tuple[str, float, float]]],
    record: Mapping[str, list[int]],
) -> float:
    """One tie-break's value for a team (all but DE: see the module docstring)."""
    opponents = met.get(team, [])
    weakest = min(opponents, key=lambda o: mps.get(o[0], 0.0), default=None)
    if name == "OSB":
        kept = list(opponents)
        if weakest is not None:
            kept.remove(weakest)
        return sum(mps.get(o, 0.0) * own for o, own, _ in kept)
    if name == "SB":
        return sum(mps.get(o, 0.0) * gained for o, _, gained in opponents)
    if name == "GP":
        return gps.get(team, 0.0)
    if name == "MP":
        return mps.get(team, 0.0)
    if name == "BH":
        return sum(mps.get(o, 0.0) for o, _, _ in opponents)
    if name == "BH-C1":
        total = sum(mps.get(o, 0.0) for o, _, _ in opponents)
        return total - (mps.get(weakest[0], 0.0) if weakest is not None else 0.0)
    return float(record[team][0])  # MW


def _direct_encounter(
    keys: Mapping[str, list[float]], met: Mapping[str, list[tuple[str, float, float]]]
) -> dict[str, float]:
    """DE: within each group of teams equal on everything so far, when they
    have all met, the match points each scored against the others (else 0)."""
    groups: dict[tuple[float, ...], list[str]] = defaultdict(list)
    for t, k in keys.items():
        groups[tuple(k)].append(t)
    out = dict.fromkeys(keys, 0.0)
    for group in groups.values():
        if len(group) < 2:
            continue
        members = set(group)
        faced = {t: {o for o, _, _ in met.get(t, [])} for t in group}
        if all(members - {t} <= faced[t] for t in group):
            for t in group:
                out[t] = sum(g for o, _, g in met.get(t, []) if o in members)
    return out
