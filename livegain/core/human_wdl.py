"""Win/draw/loss chances for the humans at the board, fitted on real results.

Stockfish's own W/D/L (``UCI_ShowWDL``) describes Stockfish playing itself:
on real human games it predicts results worse than the players' ratings alone
(docs/validity.md, "Win/draw/loss"). This module holds the model shown
instead, in two layers (docs/maths.md, "Human win/draw/loss"):

1. **Ratings only** (:class:`RatingsPrior`), one per kind of game: White's
   expected score is the Elo expectation ``E = 1 / (1 + 10^(-(Rw - Rb + A)/S))``
   with a fitted White advantage ``A`` and spread ``S`` (about 400 over the
   board; lichess's Glicko-2 ratings need about 780), and the draw probability a fitted
   logistic of the mean rating and the rating gap,
   ``D = sigma(d0 + d1 (mean - 2000)/400 + d2 |Rw - Rb|/400)`` (kept within
   ``2 min(E, 1 - E)``); then ``W = E - D/2`` and ``L = 1 - E - D/2``. With a
   rating unknown: ``E`` from ``A`` alone and ``D`` the kind's draw rate.
2. **Live** (:class:`HumanWdlModel`): the ratings-only chances in ordered-logit
   form, ``W = sigma(mu - theta)``, ``L = sigma(-mu - theta)``, are moved by
   the evaluation ``x`` (pawns, White's view, clipped to +/-39; a mate counts
   as +/-39) through two saturating transforms ``u = tanh(x/2)`` and
   ``v = tanh(x/8)`` as the game goes on::

       mu    = a(p) mu0 + b(p) u + c(p) v + m(p) s
       theta = softplus(e(p) eta0 + f(p) + g(p) |u| + h(p) |v|),
       eta0  = softplus^-1(theta0)

   where ``s`` is +1 with White to move and -1 with Black to move (the side
   to move is about to lose some of the evaluation: humans rarely find the
   engine's move), ``p`` is the ply, and ``a .. m`` are interpolated linearly between
   fitted knots (constant past the last). The knot at ply 0 is fixed to
   ``a = e = 1`` and the rest 0: before any move the model *is* the
   ratings-only model, and it becomes decisive as the evaluation does.

A position decided by a rule (checkmate, stalemate, insufficient material, a
repetition) keeps its certain W/D/L. Everything here is pure: no I/O, plain
floats, a few microseconds per position.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field

from livegain.core.evaluation import Evaluation
from livegain.core.wdl import Wdl

#: The kinds of game the shipped models are fitted on.
ONLINE_RAPID = "online-rapid"
CLASSICAL_OTB = "classical-otb"
KINDS: tuple[str, ...] = (ONLINE_RAPID, CLASSICAL_OTB)

#: Evaluations are clipped to this many pawns (a mate counts as the clip).
CLIP_PAWNS = 39.0
#: Scales (pawns) of the two saturating transforms of the evaluation.
U_SCALE = 2.0
V_SCALE = 8.0
#: Probabilities are kept at least this far from 0 and 1 before the logits.
_EPS = 1e-6


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    ez = math.exp(z)
    return ez / (1.0 + ez)


def _logit(p: float) -> float:
    p = min(1.0 - _EPS, max(_EPS, p))
    return math.log(p / (1.0 - p))


def softplus(z: float) -> float:
    """``log(1 + e^z)``, without overflow."""
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))


def softplus_inverse(y: float) -> float:
    """The ``z`` with ``softplus(z) == y`` (``y > 0``)."""
    y = max(y, _EPS)
    return y + math.log(-math.expm1(-y)) if y < 30 else y


def to_per_mille(win: float, loss: float) -> Wdl:
    """(W, D, L) per mille from two probabilities, summing to 1000."""
    w = max(0, min(1000, round(win * 1000)))
    lo = max(0, min(1000 - w, round(loss * 1000)))
    return (w, 1000 - w - lo, lo)


@dataclass(frozen=True)
class RatingsPrior:
    """The ratings-only model of one kind of game (step 1 above)."""

    kind: str
    white_advantage: float
    scale: float
    draw_intercept: float
    draw_level: float
    draw_gap: float
    draw_rate: float
    provenance: dict[str, str] = field(default_factory=dict, compare=False)

    def expected(self, white: float | None, black: float | None) -> float:
        """White's expected score from the two ratings (None: unknown)."""
        diff = self.white_advantage
        if white is not None and black is not None:
            diff += white - black
        return 1.0 / (1.0 + math.pow(10.0, -diff / self.scale))

    def draw(self, white: float | None, black: float | None, expected: float) -> float:
        """The draw probability, within ``2 min(E, 1 - E)``."""
        if white is None or black is None:
            d = self.draw_rate
        else:
            z = (
                self.draw_intercept
                + self.draw_level * ((white + black) / 2.0 - 2000.0) / 400.0
                + self.draw_gap * abs(white - black) / 400.0
            )
            d = _sigmoid(z)
        return min(d, 2.0 * min(expected, 1.0 - expected) * 0.999)

    def probabilities(self, white: float | None, black: float | None) -> tuple[float, float, float]:
        """(W, D, L) as probabilities, White's view."""
        e = self.expected(white, black)
        d = self.draw(white, black, e)
        return (e - d / 2.0, d, 1.0 - e - d / 2.0)

    def logits(self, white: float | None, black: float | None) -> tuple[float, float]:
        """``(mu0, theta0)`` of the ordered-logit form of :meth:`probabilities`."""
        w, _d, lo = self.probabilities(white, black)
        lw, ll = _logit(w), _logit(lo)
        return ((lw - ll) / 2.0, -(lw + ll) / 2.0)

    def wdl(self, white: float | None, black: float | None) -> Wdl:
        """Per-mille W/D/L before any move (also for games not yet started)."""
        w, _d, lo = self.probabilities(white, black)
        return to_per_mille(w, lo)


@dataclass(frozen=True)
class Knot:
    """The live model's coefficients at one ply (step 2 above)."""

    ply: int
    a: float
    b: float
    c: float
    e: float
    f: float
    g: float
    h: float
    m: float


IDENTITY_KNOT = Knot(0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
Coefficients = tuple[float, float, float, float, float, float, float, float]


def features(pawns: float) -> tuple[float, float]:
    """``(u, v)``: the two transforms of an evaluation in pawns."""
    x = max(-CLIP_PAWNS, min(CLIP_PAWNS, pawns))
    return (math.tanh(x / U_SCALE), math.tanh(x / V_SCALE))


@dataclass(frozen=True)
class HumanWdlModel:
    """The live W/D/L of one evaluation source and kind of game.

    ``knots`` (with ratings) and ``unrated_knots`` (when a rating is unknown)
    each start with :data:`IDENTITY_KNOT` at ply 0. ``evals`` names the
    evaluation source it was fitted on (``"pgn"`` for lichess's ``[%eval]``,
    else the engine and limit, ``"Stockfish 15.1 depth 10"``).
    """

    name: str
    evals: str
    prior: RatingsPrior
    knots: tuple[Knot, ...]
    unrated_knots: tuple[Knot, ...]
    provenance: dict[str, str] = field(default_factory=dict, compare=False)
    #: the draw share of the win%-curve baseline fitted on the same games
    #: (``core.wdl.wdl_from_cp``; for the validation's comparison only)
    curve_draw_share: float | None = None
    _plies: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _unrated_plies: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for label, knots in (("knots", self.knots), ("unrated_knots", self.unrated_knots)):
            if not knots or knots[0] != IDENTITY_KNOT:
                raise ValueError(
                    f"W/D/L model {self.name!r}: {label} must start at ply 0 as identity"
                )
            plies = [k.ply for k in knots]
            if plies != sorted(set(plies)):
                raise ValueError(f"W/D/L model {self.name!r}: {label} plies must increase")
        object.__setattr__(self, "_plies", tuple(k.ply for k in self.knots))
        object.__setattr__(self, "_unrated_plies", tuple(k.ply for k in self.unrated_knots))

    @property
    def kind(self) -> str:
        return self.prior.kind

    def coefficients(self, ply: int, rated: bool) -> Coefficients:
        """``(a, b, c, e, f, g, h, m)`` at ``ply``, interpolated between knots."""
        knots, plies = (
            (self.knots, self._plies) if rated else (self.unrated_knots, self._unrated_plies)
        )
        i = bisect_right(plies, ply) - 1
        k0 = knots[max(0, i)]
        if i >= len(knots) - 1:
            return (k0.a, k0.b, k0.c, k0.e, k0.f, k0.g, k0.h, k0.m)
        k1 = knots[i + 1]
        t = (ply - k0.ply) / (k1.ply - k0.ply)
        return (
            k0.a + t * (k1.a - k0.a),
            k0.b + t * (k1.b - k0.b),
            k0.c + t * (k1.c - k0.c),
            k0.e + t * (k1.e - k0.e),
            k0.f + t * (k1.f - k0.f),
            k0.g + t * (k1.g - k0.g),
            k0.h + t * (k1.h - k0.h),
            k0.m + t * (k1.m - k0.m),
        )

    def probabilities(
        self,
        pawns: float,
        ply: int,
        white: float | None,
        black: float | None,
        white_to_move: bool | None = None,
    ) -> tuple[float, float, float]:
        """(W, D, L) probabilities at ``ply`` for an evaluation of ``pawns``
        (White's view) between players rated ``white`` and ``black``;
        ``white_to_move`` None: as after ``ply`` plies from the usual start."""
        rated = white is not None and black is not None
        mu0, theta0 = self.prior.logits(white, black)
        if ply <= 0:
            w, d, lo = self.prior.probabilities(white, black)
            return (w, d, lo)
        a, b, c, e, f, g, h, m = self.coefficients(ply, rated)
        u, v = features(pawns)
        if white_to_move is None:
            white_to_move = ply % 2 == 0
        mu = a * mu0 + b * u + c * v + (m if white_to_move else -m)
        theta = softplus(e * softplus_inverse(theta0) + f + g * abs(u) + h * abs(v))
        w = _sigmoid(mu - theta)
        lo = _sigmoid(-mu - theta)
        return (w, 1.0 - w - lo, lo)

    def wdl(
        self,
        ev: Evaluation,
        ply: int,
        white: float | None,
        black: float | None,
        white_to_move: bool | None = None,
    ) -> Wdl:
        """Per-mille W/D/L (White's view) of a position evaluated ``ev`` after
        ``ply`` plies. A position decided by a rule keeps its certain W/D/L."""
        if ev.rule is not None and ev.wdl is not None:
            return ev.wdl
        if ev.mate is not None and ev.mate != 0:
            pawns = CLIP_PAWNS if ev.mate > 0 else -CLIP_PAWNS
        else:
            pawns = ev.cp / 100.0
        w, _d, lo = self.probabilities(pawns, ply, white, black, white_to_move)
        return to_per_mille(w, lo)


def kind_of_tags(tags: Mapping[str, str]) -> str:
    """The kind of game of a PGN's tags: its ``TimeControl``'s nearer kind;
    without one, online rapid for a game whose Site is a URL (a game played
    on a server), else classical over the board."""
    kind = kind_of_time_control(tags.get("TimeControl"))[0]
    if kind is not None:
        return kind
    site = tags.get("Site", "").strip()
    return ONLINE_RAPID if site.startswith(("http://", "https://")) else CLASSICAL_OTB


def kind_of_time_control(time_control: str | None) -> tuple[str | None, bool]:
    """The kind of game nearest to a PGN ``TimeControl`` (``"5400+30"``,
    ``"40/7200:1800+30"``, ``"600+5"``), and whether that is an exact match of
    a fitted kind (False: the nearer of the two, a fallback). ``(None, False)``
    when the tag says nothing usable.

    A player's expected time for 60 moves (base plus 60 increments, the first
    period's base when there are several) of 60 minutes or more is classical,
    anything faster is rapid (blitz and bullet fall back to rapid).
    """
    if not time_control or time_control.strip() in ("?", "-"):
        return (None, False)
    first = time_control.strip().split(":")[0]
    if "/" in first:
        first = first.split("/", 1)[1]
    base_text, _, inc_text = first.partition("+")
    try:
        base = float(base_text)
        inc = float(inc_text) if inc_text else 0.0
    except ValueError:
        return (None, False)
    seconds = base + 60.0 * inc
    if seconds >= 3600:
        return (CLASSICAL_OTB, True)
    return (ONLINE_RAPID, 480 <= seconds < 3600)
