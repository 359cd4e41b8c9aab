"""What a player's moves show beyond the centipawns each one lost.

The perceived rating (``livegain.core.perceived``) reads each move as a
class: phase, evaluation band, centipawns lost. A multi-PV search of each
position (the best few moves and their values) says more: how far the best
move stood above the next, whether it was the only good one, how likely the
played move was among the candidates. This module turns one player's moves
in one game into such features, for measuring what each adds
(bench/move_features.py, docs/validity.md "Reading more from each move").

Everything here is pure: the moves come in as :class:`MoveRecord` values
(scores from the mover's side, centipawns), the features go out as numbers.
Scores are clipped to +/-:data:`~livegain.core.perceived.CLASS_CLIP_CP`
before use, as the perceived model clips them, so a mate counts as a large
advantage and not as 3900 points.

* **loss by phase**: the mean centipawns lost (``max(0, before - after)``)
  in each phase of :class:`~livegain.core.perceived.MoveClasses` (today's
  reading);
* **win%-scale loss**: the mean drop of the mover's expected score in
  percent (:func:`~livegain.core.wdl.win_percent`), so a pawn lost in a
  level position counts more than a pawn lost in a won one;
* **best gap**: where the played move was the engine's best, the mean lead
  of the best move over the second (a large gap: an easy find);
* **only move found**: the share of moves in positions where only one move
  kept the evaluation within :data:`ONLY_MOVE_MARGIN` of the best, and the
  player played it;
* **log-likelihood**: as Regan's intrinsic performance ratings do, the
  log-probability of the played move among the candidates under a softmax of
  their values, ``exp(v / T) / sum exp(v_i / T)``, with one temperature ``T``
  fitted by maximum likelihood on training moves (:func:`fit_temperature`);
  a played move outside the candidates joins them with its own value (at most
  the worst candidate's).

* **difficulty**: the position's difficulty as the candidates show it, the
  loss a player choosing by that same softmax would expect,
  ``sum_i p_i (v_best - v_i)`` over the candidates (a position where every
  candidate holds is easy, one where only the best does is hard);
* **excess loss**: the centipawns lost beyond that expectation (the loss
  read against the position's difficulty);
* **legal moves**: the mean number of legal moves in the positions the
  player moved from (where the record has it).

A move from a position with a single candidate (one legal move) is no
choice: it counts for the losses but not for the candidate features.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from livegain.core.perceived import CLASS_CLIP_CP, MoveClasses
from livegain.core.wdl import win_percent

#: Centipawns within which a second move must stay for the best not to be the
#: only good one.
ONLY_MOVE_MARGIN = 50
#: The range searched for the softmax temperature (centipawns).
TEMPERATURE_RANGE = (5.0, 2000.0)


def _clip(cp: int) -> int:
    return max(-CLASS_CLIP_CP, min(CLASS_CLIP_CP, cp))


@dataclass(frozen=True)
class MoveRecord:
    """One move: its ``ply`` (1-based), the position's value ``before`` it
    and ``after`` it (both from the mover's side, centipawns), the
    ``candidates`` of a multi-PV search of the position before it as
    ``(uci, value)`` best first (mover's side; empty when none was searched)
    and the ``played`` move (UCI)."""

    ply: int
    before: int
    after: int
    candidates: tuple[tuple[str, int], ...]
    played: str
    legal: int = 0
    """Legal moves in the position before it (0: not known)."""

    def __post_init__(self) -> None:
        values = [v for _m, v in self.candidates]
        if values != sorted(values, reverse=True):
            raise ValueError(f"ply {self.ply}: candidates not best first: {self.candidates}")

    @property
    def loss(self) -> int:
        """Centipawns lost, as the perceived model counts them (clipped)."""
        return max(0, _clip(self.before) - _clip(self.after))

    @property
    def win_loss(self) -> float:
        """The mover's expected score lost, in percent (0-100)."""
        return max(0.0, win_percent(self.before) - win_percent(self.after))

    @property
    def is_choice(self) -> bool:
        """Whether the search gave two candidates or more."""
        return len(self.candidates) >= 2

    @property
    def found_best(self) -> bool:
        return bool(self.candidates) and self.candidates[0][0] == self.played

    @property
    def best_gap(self) -> int | None:
        """The best candidate's lead over the second (clipped values) when the
        played move was the best and there was a choice, else None."""
        if not (self.is_choice and self.found_best):
            return None
        return _clip(self.candidates[0][1]) - _clip(self.candidates[1][1])

    @property
    def only_move(self) -> bool:
        """Whether only the best candidate kept the value within
        :data:`ONLY_MOVE_MARGIN` of the best."""
        if not self.is_choice:
            return False
        return _clip(self.candidates[0][1]) - _clip(self.candidates[1][1]) > ONLY_MOVE_MARGIN

    def choice_values(self) -> tuple[list[int], int]:
        """The values the softmax weighs (clipped) and the index of the
        played move among them: the candidates, and the played move appended
        with its value after the move (at most the worst candidate's) when it
        is not one of them. Raises ValueError without a candidate."""
        if not self.candidates:
            raise ValueError(f"ply {self.ply}: no candidates were searched")
        values = [_clip(v) for _m, v in self.candidates]
        for i, (move, _v) in enumerate(self.candidates):
            if move == self.played:
                return values, i
        return [*values, min(_clip(self.after), values[-1])], len(values)

    def expected_loss(self, temperature: float) -> float:
        """The loss (clipped centipawns, from the best candidate) expected of
        a move chosen by ``softmax(values / temperature)`` among the
        candidates alone: the position's difficulty."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if not self.candidates:
            raise ValueError(f"ply {self.ply}: no candidates were searched")
        values = [_clip(v) for _m, v in self.candidates]
        top = values[0]
        weights = [math.exp((v - top) / temperature) for v in values]
        return sum(w * (top - v) for w, v in zip(weights, values, strict=True)) / sum(weights)

    def log_likelihood(self, temperature: float) -> float:
        """log P(played) under ``softmax(values / temperature)``."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        values, i = self.choice_values()
        top = max(values)
        total = sum(math.exp((v - top) / temperature) for v in values)
        return (values[i] - top) / temperature - math.log(total)


def fit_temperature(moves: Sequence[MoveRecord]) -> float:
    """The temperature that maximises the summed log-likelihood of the
    played moves (those with a choice), by golden-section search on its
    logarithm over :data:`TEMPERATURE_RANGE`. Raises ValueError without a
    move with a choice."""
    chosen = [m.choice_values() for m in moves if m.is_choice]
    if not chosen:
        raise ValueError("no move with two candidates or more to fit a temperature")
    width = max(len(values) for values, _i in chosen)
    table = np.full((len(chosen), width), -np.inf)
    for row, (values, _i) in enumerate(chosen):
        table[row, : len(values)] = values
    table -= table.max(axis=1, keepdims=True)  # the best value 0 in each row
    played = table[np.arange(len(chosen)), [i for _v, i in chosen]]

    def total(log_t: float) -> float:
        t = math.exp(log_t)
        return float((played / t - np.log(np.exp(table / t).sum(axis=1))).sum())

    lo, hi = (math.log(x) for x in TEMPERATURE_RANGE)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = total(a), total(b)
    for _ in range(40):
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = total(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = total(b)
    return math.exp(0.5 * (lo + hi))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class MoveFeatures:
    """One player's moves in one game, summarised. None where no move
    qualified (a phase not reached, never the best move, no choice)."""

    moves: int
    loss_by_phase: tuple[float | None, ...]
    loss: float
    win_loss: float
    best_gap: float | None
    only_move_found: float | None
    log_likelihood: float | None
    difficulty: float | None = None
    excess_loss: float | None = None
    legal_moves: float | None = None


def move_features(
    moves: Sequence[MoveRecord],
    temperature: float,
    classes: MoveClasses | None = None,
) -> MoveFeatures:
    """The features of one player-game's ``moves`` (at least one), the
    log-likelihood under ``temperature``, the phases those of ``classes``."""
    if not moves:
        raise ValueError("no move to summarise")
    classes = classes or MoveClasses()
    phases = len(classes.phase_edges) + 1
    by_phase: list[list[float]] = [[] for _ in range(phases)]
    for m in moves:
        by_phase[bisect_right(classes.phase_edges, m.ply)].append(float(m.loss))
    chosen = [m for m in moves if m.is_choice]
    gaps = [float(g) for m in moves if (g := m.best_gap) is not None]
    expected = [m.expected_loss(temperature) for m in chosen]
    return MoveFeatures(
        moves=len(moves),
        loss_by_phase=tuple(_mean(p) for p in by_phase),
        loss=sum(m.loss for m in moves) / len(moves),
        win_loss=sum(m.win_loss for m in moves) / len(moves),
        best_gap=_mean(gaps),
        only_move_found=(
            sum(m.only_move and m.found_best for m in chosen) / len(chosen) if chosen else None
        ),
        log_likelihood=_mean([m.log_likelihood(temperature) for m in chosen]),
        difficulty=_mean(expected),
        excess_loss=_mean([m.loss - e for m, e in zip(chosen, expected, strict=True)]),
        legal_moves=_mean([float(m.legal) for m in moves if m.legal > 0]),
    )


def move_records(
    plies: Sequence[int],
    values: Sequence[int],
    candidates: Sequence[Sequence[tuple[str, int]]],
    played: Sequence[str],
    legal: Sequence[int] | None = None,
) -> list[MoveRecord]:
    """The records of consecutive moves of a game: ``values[i]`` the value of
    the position before move ``i`` from its side to move (``values`` has one
    more entry, the position after the last move), ``candidates[i]`` that
    position's candidates (side to move, best first), ``played[i]`` the move,
    ``plies[i]`` its ply, ``legal[i]`` the legal moves there (None: not
    known). Raises ValueError when the lengths disagree."""
    n = len(played)
    legal = [0] * n if legal is None else legal
    if not (len(plies) == len(candidates) == len(legal) == n and len(values) == n + 1):
        raise ValueError(
            f"{n} moves need {n} plies, {n} candidate lists and {n + 1} values; "
            f"got {len(plies)}, {len(candidates)} and {len(values)}"
        )
    return [
        MoveRecord(plies[i], values[i], -values[i + 1], tuple(candidates[i]), played[i], legal[i])
        for i in range(n)
    ]
