"""Accuracy per player, as lichess computes it, overall and by game phase.

Pure: scores in, percentages out. The method (docs/maths.md, "Accuracy") is
lichess's (``AccuracyPercent.gameAccuracy``):

1. Each position's score (centipawns, White's view) becomes White's win
   percentage on the win-chance curve :func:`livegain.core.wdl.win_percent`
   (clipped at +/-1000 cp).
2. A move's accuracy is, from the mover's win percentage before (``b``) and
   after (``a``) it: 100 when ``a >= b``, else
   ``103.1668 * exp(-0.04354 * (b - a)) - 3.1669 + 1`` (lichess's "+1
   uncertainty bonus"), clipped to [0, 100].
3. Each move gets a volatility weight: the population standard deviation of
   a window of the win-percentage series, clipped to [0.5, 12]. The window
   has ``clamp(n // 10, 2, 8)`` positions (``n``: moves in the game); the
   first ``window - 2`` moves use the first window, then the window slides
   one position per move.
4. A player's accuracy is the mean of the weighted mean of his move
   accuracies and their harmonic mean (each accuracy at least 1 there).

By phase: the same two means over the player's moves of that phase, each
move keeping the weight it has in the whole game. The phase of a move is
read from the position before it (:func:`phase_of`): the endgame when at
most 6 queens, rooks, bishops and knights are left on the board (both sides
together); else the opening up to ply 20 while more than 10 of them are
left; else the middlegame.

The weights depend on the whole game (the window grows with its length);
:class:`AccuracyTally` keeps them as the game grows (O(1) a ply, all of them
again only when the window grows), and :func:`game_accuracy` is a tally fed
the whole game, so live and batch give the same figures. A rollback starts
a new tally from the ledger's scores (exact: nothing else is carried over).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import chess

from livegain.core.wdl import win_percent

Phase = Literal["opening", "middlegame", "endgame"]
PHASES: tuple[Phase, ...] = ("opening", "middlegame", "endgame")

#: lichess's fit of accuracy against the drop in win percentage.
ACC_A = 103.1668100711649
ACC_K = 0.04354415386753951
ACC_B = -3.166924740191411
UNCERTAINTY_BONUS = 1.0

WEIGHT_MIN = 0.5
WEIGHT_MAX = 12.0

#: Phase rule: at most this many queens, rooks, bishops and knights: endgame.
ENDGAME_PIECES = 6
#: The opening: up to this ply, while more than OPENING_PIECES are left.
OPENING_PLIES = 20
OPENING_PIECES = 10


@dataclass(frozen=True)
class PlayerAccuracy:
    """One player's accuracy (percent, 0-100) over ``moves`` moves, overall
    and per phase (None: no move in it)."""

    overall: float | None
    moves: int
    opening: float | None = None
    middlegame: float | None = None
    endgame: float | None = None

    def phase(self, phase: Phase) -> float | None:
        if phase == "opening":
            return self.opening
        return self.middlegame if phase == "middlegame" else self.endgame


NO_ACCURACY = PlayerAccuracy(None, 0)


@dataclass(frozen=True)
class GameAccuracy:
    white: PlayerAccuracy
    black: PlayerAccuracy

    def of(self, color: str) -> PlayerAccuracy:
        return self.white if color == "white" else self.black


def move_accuracy(before: float, after: float) -> float:
    """Accuracy (0-100) of a move from the mover's win percentage before and after it."""
    if after >= before:
        return 100.0
    raw = ACC_A * math.exp(-ACC_K * (before - after)) + ACC_B + UNCERTAINTY_BONUS
    return max(0.0, min(100.0, raw))


def window_size(moves: int) -> int:
    """The volatility window (positions) for a game of ``moves`` moves."""
    return max(2, min(8, moves // 10))


def _pstdev(xs: Sequence[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def volatility_weights(win_percents: Sequence[float]) -> list[float]:
    """One weight per move from the win percentages of positions 0..n (White's view)."""
    n = len(win_percents) - 1
    if n < 1:
        return []
    w = window_size(n)
    first = list(win_percents[:w])
    windows = [first] * (min(w, len(win_percents)) - 2)
    windows += [list(win_percents[i : i + w]) for i in range(len(win_percents) - w + 1)]
    return [_clipped_weight(x) for x in windows[:n]]


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float | None:
    total = sum(weights)
    if not values or total == 0:
        return None
    return sum(v * w for v, w in zip(values, weights, strict=True)) / total


def harmonic_mean(values: Sequence[float]) -> float | None:
    """lichess's harmonic mean: each value counted as at least 1."""
    if not values:
        return None
    return len(values) / sum(1.0 / max(1.0, v) for v in values)


def combine(accuracies: Sequence[float], weights: Sequence[float]) -> float | None:
    """The mean of the weighted and the harmonic mean (None: no move)."""
    wm = weighted_mean(accuracies, weights)
    hm = harmonic_mean(accuracies)
    if wm is None or hm is None:
        return None
    return (wm + hm) / 2.0


@functools.lru_cache(maxsize=1 << 16)
def pieces_in_fen(fen: str) -> int:
    """Queens, rooks, bishops and knights of both sides in a FEN."""
    placement = fen.split(" ", 1)[0]
    return sum(placement.count(c) for c in "QRBNqrbn")


def pieces_on(board: chess.Board) -> int:
    """Queens, rooks, bishops and knights of both sides on ``board``: what
    :func:`pieces_in_fen` counts in its FEN, without writing the FEN (batch
    analysis counts them on the board it plays the game on)."""
    return chess.popcount(board.occupied & ~board.pawns & ~board.kings)


def phase_of(ply: int, pieces: int) -> Phase:
    """The phase of move ``ply`` (1-based) played from a position with
    ``pieces`` queens, rooks, bishops and knights."""
    if pieces <= ENDGAME_PIECES:
        return "endgame"
    if ply <= OPENING_PLIES and pieces > OPENING_PIECES:
        return "opening"
    return "middlegame"


def move_accuracies(
    scores: Sequence[int], first_mover_is_white: bool = True
) -> tuple[list[float], list[float]]:
    """Per-move accuracies (the mover's) and volatility weights from scores
    ``s_0..s_n`` (centipawns, White's view; mates as +/-3900)."""
    wp = [win_percent(s) for s in scores]
    accs: list[float] = []
    white = first_mover_is_white
    for before, after in itertools.pairwise(wp):
        accs.append(move_accuracy(before, after) if white else move_accuracy(after, before))
        white = not white
    return accs, volatility_weights(wp)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def game_accuracy(
    scores: Sequence[int],
    first_mover_is_white: bool = True,
    phases: Sequence[Phase] | None = None,
    skip: Collection[int] = (),
) -> GameAccuracy:
    """Both players' accuracies from scores ``s_0..s_n``, rounded to 0.1.

    ``phases[k - 1]``: the phase of ply ``k`` (None: no phases). ``skip``:
    plies (1-based) left out of the means (an illegal move that stood);
    their positions still count in the volatility windows.
    """
    n = len(scores) - 1
    if phases is not None and len(phases) < n:
        raise ValueError(f"{n} moves but {len(phases)} phases")
    tally = AccuracyTally(scores[0] if scores else 0, first_mover_is_white)
    for k in range(1, n + 1):
        tally.push(scores[k], phases[k - 1] if phases is not None else None, k not in skip)
    return tally.result()


_KEYS: tuple[Phase | None, ...] = (None, *PHASES)


class AccuracyTally:
    """:func:`game_accuracy` kept as a game grows, one ply at a time.

    A move's accuracy never changes once its positions are scored, and while
    the volatility window keeps its size (it grows every ten moves up to
    eight positions) neither does any earlier move's weight: each new ply
    adds one accuracy and one weight to its player's sums (overall and in its
    phase), in the order :func:`game_accuracy` adds them. When the window
    grows, every weight is worked out again (six times in a game of 80
    moves or more). So a game's accuracies cost O(1) a ply, not O(plies).
    """

    def __init__(self, start_score: int, first_mover_is_white: bool = True) -> None:
        self.first_mover_is_white = first_mover_is_white
        self._wp: list[float] = [win_percent(start_score)]
        self._accs: list[float] = []
        self._phases: list[Phase | None] = []
        self._counted: list[bool] = []
        self._window = 0
        self._weights: list[float] = []
        # per side (True: White) and key (None: overall, else a phase):
        # [sum of accuracy x weight, sum of weights, sum of 1 / max(1, accuracy), moves]
        self._sums: dict[tuple[bool, Phase | None], list[float]] = {}

    @property
    def plies(self) -> int:
        return len(self._accs)

    def push(self, score: int, phase: Phase | None = None, counted: bool = True) -> None:
        """The next ply's score (centipawns, White's view), its phase, and
        whether it counts in the means (``counted`` False: an illegal move
        that stood; its position still counts in the windows)."""
        before = self._wp[-1]
        after = win_percent(score)
        self._wp.append(after)
        white = (len(self._accs) % 2 == 0) == self.first_mover_is_white
        self._accs.append(move_accuracy(before, after) if white else move_accuracy(after, before))
        self._phases.append(phase)
        self._counted.append(counted)
        n = len(self._accs)
        w = window_size(n)
        if w != self._window:
            self._recount(w)
            return
        # the window keeps its size: one more window, the last w positions
        self._weights.append(_clipped_weight(self._wp[-w:]))
        self._add(n - 1)

    def _recount(self, w: int) -> None:
        self._window = w
        self._weights = volatility_weights(self._wp)
        self._sums = {}
        for i in range(len(self._accs)):
            self._add(i)

    def _add(self, i: int) -> None:
        if not self._counted[i]:
            return
        white = (i % 2 == 0) == self.first_mover_is_white
        a, w = self._accs[i], self._weights[i]
        for key in (None, self._phases[i]):
            sums = self._sums.get((white, key))
            if sums is None:
                sums = self._sums[(white, key)] = [0.0, 0.0, 0.0, 0.0]
            sums[0] += a * w
            sums[1] += w
            sums[2] += 1.0 / max(1.0, a)
            sums[3] += 1
            if self._phases[i] is None:
                break  # no phase: the overall sums only

    def result(self) -> GameAccuracy:
        """Both players' accuracies now, as :func:`game_accuracy` gives them."""
        out: dict[bool, PlayerAccuracy] = {}
        for white in (True, False):
            values = {key: self._combined(white, key) for key in _KEYS}
            overall = self._sums.get((white, None))
            out[white] = PlayerAccuracy(
                overall=values[None],
                moves=int(overall[3]) if overall is not None else 0,
                opening=values["opening"],
                middlegame=values["middlegame"],
                endgame=values["endgame"],
            )
        return GameAccuracy(white=out[True], black=out[False])

    def _combined(self, white: bool, key: Phase | None) -> float | None:
        sums = self._sums.get((white, key))
        if sums is None or sums[3] == 0 or sums[1] == 0:
            return None
        weighted = sums[0] / sums[1]
        harmonic = sums[3] / sums[2]
        return _round((weighted + harmonic) / 2.0)


def _clipped_weight(window: Sequence[float]) -> float:
    return max(WEIGHT_MIN, min(WEIGHT_MAX, _pstdev(window)))


def phases_from_fens(fens_before: Sequence[str], first_ply: int = 1) -> list[Phase]:
    """The phase of each move from the FEN of the position before it."""
    return [phase_of(first_ply + i, pieces_in_fen(f)) for i, f in enumerate(fens_before)]


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return round(sum(vals) / len(vals), 1) if vals else None


def mean_accuracy(games: Sequence[PlayerAccuracy]) -> PlayerAccuracy:
    """A player's accuracy over several games: the plain mean of his games'
    accuracies, overall and per phase (each over the games with a move in it)."""
    return PlayerAccuracy(
        overall=_mean([g.overall for g in games]),
        moves=sum(g.moves for g in games),
        opening=_mean([g.opening for g in games]),
        middlegame=_mean([g.middlegame for g in games]),
        endgame=_mean([g.endgame for g in games]),
    )
