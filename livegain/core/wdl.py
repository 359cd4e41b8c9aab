"""Win/draw/loss of a position, from an engine's WDL or from a centipawn score.

When the engine reports WDL (Stockfish with ``UCI_ShowWDL``), that is used as
is. Otherwise the widely used human win-chance curve turns centipawns into an
expected score for White::

    win% = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1),   cp clipped to +/-1000

An expected score ``E`` (win + draw/2) does not fix the draw share by itself.
The split used here (documented in docs/game-state.md) gives a level position
a draw probability ``draw_share`` (default 0.5) that falls linearly to 0 as
``E`` approaches 0 or 1::

    draw = draw_share * (1 - |2E - 1|)
    win  = E - draw / 2
    loss = 1 - E - draw / 2

For ``0 <= draw_share <= 1`` all three are in [0, 1], they sum to 1 and
``win + draw / 2 == E`` exactly (before rounding to per mille). A mate score
(``Evaluation.mate``) is decisive: (1000, 0, 0) or (0, 0, 1000).

All values are per mille from White's point of view and sum to 1000.
"""

from __future__ import annotations

import math

from livegain.core.evaluation import Evaluation

WIN_CHANCE_K = 0.00368208
WIN_CHANCE_CLIP_CP = 1000
DEFAULT_DRAW_SHARE = 0.5

Wdl = tuple[int, int, int]


def win_percent(cp: int) -> float:
    """Expected score of White in percent (0-100) for a White-view score."""
    c = max(-WIN_CHANCE_CLIP_CP, min(WIN_CHANCE_CLIP_CP, int(cp)))
    return 50.0 + 50.0 * (2.0 / (1.0 + math.exp(-WIN_CHANCE_K * c)) - 1.0)


def wdl_from_expected(expected: float, draw_share: float = DEFAULT_DRAW_SHARE) -> Wdl:
    """Split an expected score (0..1, White's view) into per-mille WDL."""
    if not 0.0 <= draw_share <= 1.0:
        raise ValueError(f"draw_share must be in [0, 1], got {draw_share}")
    e = max(0.0, min(1.0, expected))
    draw = draw_share * (1.0 - abs(2.0 * e - 1.0))
    win = e - draw / 2.0
    loss = 1.0 - e - draw / 2.0
    w = round(win * 1000)
    lo = round(loss * 1000)
    w = max(0, min(1000, w))
    lo = max(0, min(1000 - w, lo))
    return (w, 1000 - w - lo, lo)


def wdl_from_cp(cp: int, draw_share: float = DEFAULT_DRAW_SHARE) -> Wdl:
    """Per-mille WDL (White's view) from centipawns through the win-chance curve."""
    return wdl_from_expected(win_percent(cp) / 100.0, draw_share)


def position_wdl(ev: Evaluation, draw_share: float = DEFAULT_DRAW_SHARE) -> Wdl:
    """The WDL shown for a position: the engine's if it has one, else the model's."""
    if ev.wdl is not None:
        w, d, lo = ev.wdl
        total = w + d + lo
        if total == 1000 and min(w, d, lo) >= 0:
            return (w, d, lo)
        if total > 0 and min(w, d, lo) >= 0:
            # Rescale an engine WDL that does not sum to 1000 (rounding).
            wn = round(1000 * w / total)
            ln = round(1000 * lo / total)
            return (wn, 1000 - wn - ln, ln)
    if ev.mate is not None and ev.mate != 0:
        return (1000, 0, 0) if ev.mate > 0 else (0, 0, 1000)
    return wdl_from_cp(ev.cp, draw_share)


def engine_wdl(ev: Evaluation) -> Wdl | None:
    """The engine's own W/D/L of an evaluation, per mille summing to 1000 (as
    :func:`livegain.core.wdl.position_wdl` rescales it); None when it gave none."""
    if ev.wdl is None:
        return None
    w, d, lo = ev.wdl
    total = w + d + lo
    if total <= 0 or min(w, d, lo) < 0:
        return None
    if total == 1000:
        return (w, d, lo)
    wn = round(1000 * w / total)
    ln = round(1000 * lo / total)
    return (wn, 1000 - wn - ln, ln)
