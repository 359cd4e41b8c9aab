"""Odds of winning a team event: every match left simulated board by board.

:func:`team_win_odds` starts from the games so far (each board's game, its
players' teams known): the matches they make (a round's boards between two
teams) give each team its match points and game points as
:class:`livegain.core.team_standings.TeamStandings` counts them. Then, in each
simulation:

* **the current round**: each match's finished boards count as they are, a
  board in progress is drawn from its live W/D/L, a board not started from the
  ratings' W/D/L (``prior``, else the draw-rate model, as in
  :mod:`livegain.core.tournament_odds`);
* **each round left**: paired as a Swiss of teams on match points
  (:func:`livegain.core.swiss_batch.pair_batch` with ``teams=True``, all
  simulations at once: colour is a quality criterion only, as in the FIDE
  team Swiss, so two teams with the same absolute colour preference may
  meet; a team's colour is its first board's, its initial order by the mean
  rating of its lineup), or from the ``schedule`` given (a round robin); each match
  played board by board: each team's lineup is its ``boards`` highest-rated
  players, board 1 first, and the first-named team (White in the pairing) has
  White on boards 1, 3, ... and Black on 2, 4, ..., as at the Olympiad;
* **the match**: the team with more game points wins it; match points
  ``points`` (2 / 1 / 0 by default);
* **the ranking**: match points, then the team tie-breaks in order (the
  definitions of :mod:`livegain.core.team_standings`, computed on all
  simulations at once; ``DE`` team by team in the simulations where a tie
  touches the top ``top_k``); a tie still level after the last tie-break
  shares the places it spans (:func:`livegain.core.swiss_odds.place_shares`).

Per team: the chances of finishing first and in the top ``top_k``, with their
Monte Carlo standard errors (:class:`livegain.core.swiss_odds.SwissChance`).

Simplifications: lineups are fixed (no rotation of a team's fifth player,
no player missing a round); a team with no match in a round left (an odd
number of teams in a Swiss) gets ``bye_match_points`` and
``bye_game_points`` (by default a drawn match: half the boards), a bye being
no opponent for the tie-breaks; no byes in the rounds so far (the games do
not show them: :mod:`livegain.core.team_standings` counts nothing for them
either); a team's colour in a round so far is that of its player on the
match's first board listed (``finished``, then ``in_progress``, then
``upcoming``, each in board order).

Pure: no I/O, no clock; randomness only from the seeded numpy Generator.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from livegain.core.elo import Model
from livegain.core.standings import Result
from livegain.core.swiss_batch import BLACK, WHITE, pair_batch
from livegain.core.swiss_odds import (
    CHUNK,
    Chances,
    Tally,
    chunks,
    copies,
    normalise_wdl,
    pair_wdl,
    place_shares,
)
from livegain.core.team_match import MatchPoints
from livegain.core.team_standings import OLYMPIAD_TIEBREAKS, TEAM_TIEBREAKS
from livegain.core.tournament_odds import DEFAULT_DRAW_RATE, InProgress, RatingsWdl

Float = npt.NDArray[np.float64]
Int = npt.NDArray[np.int64]
Int32 = npt.NDArray[np.int32]
Float32 = npt.NDArray[np.float32]
Bool = npt.NDArray[np.bool_]

_NONE = -1  # no match in that round (or a bye)


@dataclass(frozen=True)
class _Match:
    """A match of the rounds given: team ``a`` has White on its first board."""

    round: int
    a: int
    b: int
    points_a: float
    points_b: float
    live: list[tuple[float, float]]
    """Boards left, team a's view: (win, win or draw)."""


def _match_points(diff: Float, mp: MatchPoints) -> Float:
    out: Float = np.where(diff > 0, mp.win, np.where(diff < 0, mp.loss, mp.draw))
    return out


def _sign(diff: Float) -> npt.NDArray[np.int8]:
    return np.sign(diff).astype(np.int8)


def team_win_odds(
    team_of: Mapping[str, str],
    ratings: Mapping[str, float],
    finished: Iterable[Result] = (),
    in_progress: Iterable[InProgress] = (),
    upcoming: Iterable[tuple[str, str]] = (),
    *,
    round: int,
    rounds_total: int,
    schedule: Sequence[Sequence[tuple[str, str]]] | None = None,
    boards: int = 4,
    points: MatchPoints | None = None,
    tiebreaks: Sequence[str] = OLYMPIAD_TIEBREAKS,
    sims: int = 2_000,
    seed: int | None = None,
    top_k: int = 1,
    bye_match_points: float | None = None,
    bye_game_points: float | None = None,
    draw_rate: float = DEFAULT_DRAW_RATE,
    model: Model = "logistic",
    prior: RatingsWdl | None = None,
    precision: float | None = None,
) -> Chances:
    """Chances of each team finishing first (and in the top ``top_k``) in a
    team event of ``rounds_total`` rounds, ``round`` being the current one.

    ``team_of``: every player's team (the teams are its values); ``ratings``:
    every player's rating (unrated players: a rating the caller chooses).
    ``finished``: each board's finished game with its ``round`` (rounds
    1..``round``); ``in_progress`` (live W/D/L, White's view) and
    ``upcoming`` (not started): the current round's other boards.
    ``schedule``: the pairings of the rounds left, one list of (first-named
    team, other team) per round, for a round robin; None: a Swiss of teams,
    each round paired from the simulated match points. ``boards``: the
    lineup's size in the rounds left; ``points``: match points for a win, a
    draw, a loss; ``tiebreaks``: team tie-breaks after match points (names of
    :mod:`livegain.core.team_standings`). ``precision``: stop before
    ``sims`` once every chance of first place has a standard error this
    small; the result's ``sims`` says how many were run.
    """
    mp = points or MatchPoints()
    order_tb = tuple(tiebreaks)
    for tb in order_tb:
        if tb not in TEAM_TIEBREAKS:
            raise ValueError(f"unknown team tie-break {tb!r} (one of {sorted(TEAM_TIEBREAKS)})")
    if "MP" in order_tb:
        raise ValueError("match points come first already: MP is no tie-break here")
    if sims < 2:
        raise ValueError(f"need at least 2 simulations, got {sims}")
    if not 1 <= round <= rounds_total:
        raise ValueError(f"round {round} is not within 1..{rounds_total}")
    if boards < 1:
        raise ValueError(f"a match has at least one board, got {boards}")
    missing = sorted(p for p in team_of if p not in ratings)
    if missing:
        raise ValueError(f"no rating for: {', '.join(missing)}")
    members: dict[str, list[str]] = defaultdict(list)
    for p, name in team_of.items():
        members[name].append(p)
    short = sorted(t for t, ps in members.items() if len(ps) < boards)
    if short:
        raise ValueError(f"fewer than {boards} players in team_index(s): {', '.join(short)}")
    lineup = {t: sorted(ps, key=lambda p: (-ratings[p], p))[:boards] for t, ps in members.items()}
    strength = {t: sum(ratings[p] for p in ps) / boards for t, ps in lineup.items()}
    teams = sorted(members, key=lambda t: (-strength[t], t))
    n = len(teams)
    if n < 2:
        raise ValueError("need at least two teams")
    if not 1 <= top_k <= n:
        raise ValueError(f"top_k must lie in 1..{n}, got {top_k}")
    tix = {t: k for k, t in enumerate(teams)}
    future = rounds_total - round
    if schedule is not None and len(schedule) != future:
        raise ValueError(f"the schedule has {len(schedule)} rounds, {future} are left")

    def team_index(p: str) -> int:
        if p not in team_of:
            raise ValueError(f"no team for player {p!r}")
        return tix[team_of[p]]

    # the matches of the rounds given, from their boards
    matches: dict[tuple[int, int, int], _Match] = {}
    played_in: dict[tuple[int, int], tuple[int, int, int]] = {}

    def match(rnd: int, w: str, b: str) -> _Match:
        tw, tb_ = team_index(w), team_index(b)
        if tw == tb_:
            raise ValueError(f"round {rnd}: {w} - {b} is a game within team {teams[tw]!r}")
        key = (rnd, min(tw, tb_), max(tw, tb_))
        if key not in matches:
            for t in (tw, tb_):
                other = played_in.get((rnd, t))
                if other is not None and other != key:
                    raise ValueError(f"round {rnd}: team {teams[t]!r} plays two matches")
                played_in[(rnd, t)] = key
            matches[key] = _Match(rnd, tw, tb_, 0.0, 0.0, [])
        return matches[key]

    def add(m: _Match, w: str, white_points: float, black_points: float) -> None:
        a_white = team_index(w) == m.a
        pa, pb = (white_points, black_points) if a_white else (black_points, white_points)
        key = (m.round, min(m.a, m.b), max(m.a, m.b))
        matches[key] = _Match(m.round, m.a, m.b, m.points_a + pa, m.points_b + pb, m.live)

    for r in finished:
        if r.round is None or not 1 <= r.round <= round:
            raise ValueError(f"finished result {r} needs a round within 1..{round}")
        if r.black is None:
            raise ValueError(f"{r.white}: byes are not part of a team match")
        add(match(r.round, r.white, r.black), r.white, r.white_points, r.black_points)
    live: list[tuple[str, str, tuple[float, float, float]]] = []
    for w, b, wdl in in_progress:
        live.append((w, b, normalise_wdl(wdl, f"{w} - {b}")))
    for w, b in upcoming:
        if w not in ratings or b not in ratings:
            raise ValueError(f"no rating for {w} - {b}")
        pw, pwd = pair_wdl([ratings[w]], [ratings[b]], draw_rate, model, prior)
        live.append((w, b, (float(pw[0, 0]), float(pwd[0, 0] - pw[0, 0]), 1.0 - pwd[0, 0])))
    for w, b, (pw_, pd_, _) in live:
        m = match(round, w, b)
        a_white = team_index(w) == m.a
        m.live.append((pw_, pw_ + pd_) if a_white else (1.0 - pw_ - pd_, 1.0 - pw_))

    # the state before the simulation: slots are rounds
    opp0 = np.full((n, rounds_total), _NONE, dtype=np.int32)
    gp0 = np.zeros((n, rounds_total), dtype=np.float32)
    sign0 = np.zeros((n, rounds_total), dtype=np.int8)
    colour0 = np.zeros((n, rounds_total), dtype=np.int8)
    met0 = np.zeros((n, n), dtype=bool)
    current = [m for m in matches.values() if m.live]
    for m in matches.values():
        if m.live and m.round != round:
            raise ValueError("boards in progress or not started belong to the current round")
        s = m.round - 1
        opp0[m.a, s], opp0[m.b, s] = m.b, m.a
        colour0[m.a, s], colour0[m.b, s] = WHITE, BLACK
        met0[m.a, m.b] = met0[m.b, m.a] = True
        if not m.live:
            gp0[m.a, s], gp0[m.b, s] = m.points_a, m.points_b
            sign0[m.a, s] = np.sign(m.points_a - m.points_b)
            sign0[m.b, s] = -sign0[m.a, s]
    mp0 = np.zeros(n)
    for m in matches.values():
        if not m.live:
            mp0[[m.a, m.b]] += _match_points(np.array([1.0, -1.0]) * (m.points_a - m.points_b), mp)

    # the current round's boards left: one column each
    cur_a = np.array([m.a for m in current], dtype=np.int64)
    cur_b = np.array([m.b for m in current], dtype=np.int64)
    cur_pa = np.array([m.points_a for m in current])
    cur_pb = np.array([m.points_b for m in current])
    cells = [(k, w, wd) for k, m in enumerate(current) for w, wd in m.live]
    cell_match = np.array([c[0] for c in cells], dtype=np.int64)
    cell_w = np.array([c[1] for c in cells])
    cell_wd = np.array([c[2] for c in cells])
    cell_sum = np.zeros((len(cells), len(current)))
    cell_sum[np.arange(len(cells)), cell_match] = 1.0
    boards_left = np.bincount(cell_match, minlength=len(current)).astype(np.float64)

    # the rounds left: each board's chances, first-named team's view (a x b)
    lineup_ratings = [[ratings[p] for p in lineup[t]] for t in teams]
    board_w: list[Float] = []
    board_wd: list[Float] = []
    if future:
        for k in range(boards):
            rk = [lr[k] for lr in lineup_ratings]
            pw, pwd = pair_wdl(rk, rk, draw_rate, model, prior)
            if k % 2 == 0:  # the first-named team's player has White
                board_w.append(pw)
                board_wd.append(pwd)
            else:  # he has Black: his win is White's loss
                board_w.append(1.0 - pwd.T)
                board_wd.append(1.0 - pw.T)
    fixed_pairs: list[tuple[Int, Int]] = []
    if schedule is not None:
        for i, pairs in enumerate(schedule):
            seen: set[str] = set()
            for pair in pairs:
                for name in pair:
                    if name not in tix:
                        raise ValueError(f"schedule round {round + i + 1}: unknown team {name!r}")
                    if name in seen:
                        raise ValueError(f"schedule round {round + i + 1}: {name!r} plays twice")
                    seen.add(name)
            fixed_pairs.append(
                (
                    np.array([tix[x] for x, _ in pairs], dtype=np.int64),
                    np.array([tix[y] for _, y in pairs], dtype=np.int64),
                )
            )
    bye_mp = mp.draw if bye_match_points is None else bye_match_points
    bye_gp = boards / 2 if bye_game_points is None else bye_game_points

    rng = np.random.default_rng(seed)
    tally = Tally(n)
    for s_n in chunks(sims, CHUNK, tally, precision):
        rows = np.arange(s_n)[:, None]
        opp = copies(opp0, s_n)
        gp = copies(gp0, s_n)
        sign = copies(sign0, s_n)
        mps = copies(mp0, s_n)
        colours = copies(colour0, s_n)
        met = copies(met0, s_n)
        had_bye = np.zeros((s_n, n), dtype=bool)
        # the current round
        if current:
            u = rng.random((s_n, len(cells)))
            got_a = ((u < cell_w).astype(np.float64) + (u < cell_wd)) * 0.5
            pa = cur_pa + got_a @ cell_sum
            pb = cur_pb + boards_left - got_a @ cell_sum
            diff = pa - pb
            slot = round - 1
            for who, mine, d in ((cur_a, pa, diff), (cur_b, pb, -diff)):
                gp[rows, who, slot] = mine
                sign[rows, who, slot] = _sign(d)
                mps[rows, who] += _match_points(d, mp)
        for t in range(future):
            slot = round + t
            if schedule is not None:
                home = np.broadcast_to(fixed_pairs[t][0], (s_n, fixed_pairs[t][0].size))
                away = np.broadcast_to(fixed_pairs[t][1], (s_n, fixed_pairs[t][1].size))
                bye = np.full(s_n, -1, dtype=np.int64)
            else:
                home, away, bye = pair_batch(mps, colours, had_bye, met, teams=True)
            u = rng.random((boards, *home.shape))
            pa = np.zeros(home.shape)
            for k in range(boards):
                won = (u[k] < board_w[k][home, away]).astype(np.float64)
                pa += (won + (u[k] < board_wd[k][home, away])) * 0.5
            diff = 2.0 * pa - boards
            sides = ((home, away, pa, diff, WHITE), (away, home, boards - pa, -diff, BLACK))
            for who, other, mine, d, col in sides:
                opp[rows, who, slot] = other
                gp[rows, who, slot] = mine
                sign[rows, who, slot] = _sign(d)
                mps[rows, who] += _match_points(d, mp)
                colours[rows, who, slot] = col
            met[rows, home, away] = True
            met[rows, away, home] = True
            got = np.flatnonzero(bye >= 0)
            had_bye[got, bye[got]] = True
            mps[got, bye[got]] += bye_mp
            gp[got, bye[got], slot] = bye_gp
        keys = [mps, *_team_tiebreaks(order_tb, mps, opp, gp, sign, mp)]
        cut = 1 + order_tb.index("DE") if "DE" in order_tb else len(keys)
        first, top, touched = place_shares(keys[:cut], top_k)
        if cut < len(keys):
            for s in np.flatnonzero(touched).tolist():
                row = [k[s] for k in keys]
                row[cut] = _direct_encounter(row[:cut], opp[s], _gained(sign[s], opp[s], mp))
                f, tp, _ = place_shares([k[None, :] for k in row], top_k)
                first[s], top[s] = f[0], tp[0]
        tally.add(first, top)
    return tally.chances(teams)


def _team_tiebreaks(
    names: Sequence[str],
    mps: Float,
    opp: Int32,
    gp: Float32,
    sign: npt.NDArray[np.int8],
    mp: MatchPoints,
) -> list[Float]:
    """Values of the team tie-breaks ``names`` (each sims x teams), as
    :mod:`livegain.core.team_standings` defines them (DE: zeros, filled in
    by :func:`_direct_encounter` where needed): slots are rounds, ``opp`` the
    opponent or ``_NONE``."""
    sims = opp.shape[0]
    played = opp >= 0
    theirs = np.where(played, mps[np.arange(sims)[:, None, None], np.where(played, opp, 0)], 0.0)
    # the weakest opponent: the first with the fewest match points
    weakest = np.argmin(np.where(played, theirs, np.inf), axis=2)[:, :, None]
    any_played = played.any(axis=2)
    out: list[Float] = []
    for name in names:
        if name == "OSB":
            total = (theirs * gp * played).sum(axis=2)
            cut = np.take_along_axis(theirs * gp, weakest, axis=2)[:, :, 0]
            out.append(np.asarray(total - np.where(any_played, cut, 0.0), dtype=np.float64))
        elif name == "SB":
            gained = _gained(sign, opp, mp)
            out.append(np.asarray((theirs * gained).sum(axis=2), dtype=np.float64))
        elif name == "GP":
            out.append(np.asarray(gp.sum(axis=2), dtype=np.float64))
        elif name == "BH":
            out.append(np.asarray(theirs.sum(axis=2), dtype=np.float64))
        elif name == "BH-C1":
            cut = np.take_along_axis(theirs, weakest, axis=2)[:, :, 0]
            out.append(np.asarray(theirs.sum(axis=2) - np.where(any_played, cut, 0.0)))
        elif name == "MW":
            out.append(np.asarray(((sign > 0) & played).sum(axis=2), dtype=np.float64))
        else:  # DE
            out.append(np.zeros(mps.shape))
    return out


def _gained(sign: npt.NDArray[np.int8], opp: Int32, mp: MatchPoints) -> Float:
    """Match points of each slot's match (0 where no match)."""
    out: Float = np.select([sign > 0, sign < 0, opp >= 0], [mp.win, mp.loss, mp.draw], 0.0)
    return out


def _direct_encounter(keys: Sequence[Float], opp: Int32, gained: Float) -> Float:
    """DE in one simulation (teams): within each group of teams equal on
    ``keys``, when they have all met, the match points each scored against
    the others; else 0 (as :mod:`livegain.core.team_standings`)."""
    n = opp.shape[0]
    played = opp >= 0
    t, s = np.nonzero(played)
    against = np.zeros((n, n))
    np.add.at(against, (t, opp[t, s]), gained[t, s])
    met = np.zeros((n, n), dtype=bool)
    met[t, opp[t, s]] = True
    _, group = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)
    group = group.reshape(-1)
    out = np.zeros(n)
    sizes = np.bincount(group)
    for g in np.flatnonzero(sizes > 1).tolist():
        members = np.flatnonzero(group == g)
        inner = met[np.ix_(members, members)]
        np.fill_diagonal(inner, True)
        if inner.all():
            out[members] = against[np.ix_(members, members)].sum(axis=1)
    return out
