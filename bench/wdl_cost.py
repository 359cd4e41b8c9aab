"""What the human W/D/L costs per position, against today's W/D/L.

The human model (``HumanWdlModel.wdl``: the ratings-only prior in
ordered-logit form, moved by the evaluation through the knots of the ply) is
timed on the same positions as the baseline, measured in the same run:
``core.wdl.position_wdl``, today's W/D/L, on evaluations without an engine
W/D/L (the win-chance curve: what the human model replaces for ``[%eval]``
files) and with one (passed through: what a live engine gives).

Positions: evaluations drawn around 0 (normal, 1.5 pawns; 2 % mates), plies
1..160, ratings 2000..2800 (a tenth unrated). The model is the shipped one
for Stockfish 15.1 depth 10, classical over the board (or ``--models PATH``);
without a model file, one with the fit's default knots (the cost depends on
the number of knots, not on their values), and the line says so.

    .venv/bin/python bench/wdl_cost.py [--positions 20000] [--rounds 5] [--models PATH]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from livegain.core.evaluation import Evaluation
from livegain.core.human_wdl import CLASSICAL_OTB, IDENTITY_KNOT, HumanWdlModel, Knot, RatingsPrior
from livegain.core.wdl import position_wdl
from livegain.models.wdl import pick_wdl_model

Position = tuple[Evaluation, int, float | None, float | None, bool]


def default_knots_model() -> HumanWdlModel:
    """A model with the fit's default knot plies (values of the size a fit gives)."""
    from livegain.batch.wdl_fit import DEFAULT_KNOT_PLIES

    knots = (
        IDENTITY_KNOT,
        *(
            Knot(p, 0.9, 1.2 + p / 100, 0.8, 1.0, -0.1, 0.3, 0.4, 0.05)
            for p in DEFAULT_KNOT_PLIES[1:]
        ),
    )
    prior = RatingsPrior(CLASSICAL_OTB, 35.0, 400.0, 0.3, 0.5, -0.6, 0.5)
    return HumanWdlModel("default knots", "engine", prior, knots, knots)


def positions(n: int, seed: int, engine_wdl: bool) -> list[Position]:
    rng = random.Random(seed)
    out: list[Position] = []
    for _ in range(n):
        if rng.random() < 0.02:
            mate = rng.choice([-3, -1, 1, 2, 5])
            ev = Evaluation(cp=3900 if mate > 0 else -3900, mate=mate)
        else:
            cp = max(-3900, min(3900, round(rng.gauss(0.0, 150.0))))
            ev = Evaluation(cp=cp)
        if engine_wdl:
            w = rng.randint(0, 1000)
            ev = Evaluation(cp=ev.cp, mate=ev.mate, wdl=(w, 1000 - w, 0))
        ply = rng.randint(1, 160)
        white = None if rng.random() < 0.1 else float(rng.randint(2000, 2800))
        black = None if white is None else float(rng.randint(2000, 2800))
        out.append((ev, ply, white, black, ply % 2 == 0))
    return out


def best_us(
    fn: Callable[[Sequence[Position]], object], pos: Sequence[Position], rounds: int
) -> float:
    """The best of ``rounds`` runs, in microseconds per position."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(pos)
        best = min(best, time.perf_counter() - t0)
    return best / len(pos) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", default=None, metavar="PATH", help="a W/D/L model file")
    args = ap.parse_args()
    model, why = pick_wdl_model("engine", CLASSICAL_OTB, "Stockfish 15.1", "depth 10", args.models)
    if model is None:
        model = default_knots_model()
        why = f"{why}; timed with a model of the fit's default knots"
    print(f"human W/D/L model: {model.name} ({why}); {len(model.knots)} knots")
    plain = positions(args.positions, args.seed, engine_wdl=False)
    given = positions(args.positions, args.seed, engine_wdl=True)

    def human(pos: Sequence[Position]) -> None:
        wdl = model.wdl
        for ev, ply, white, black, to_move in pos:
            wdl(ev, ply, white, black, to_move)

    def today(pos: Sequence[Position]) -> None:
        for ev, _ply, _white, _black, _to_move in pos:
            position_wdl(ev)

    best_us(human, plain[:1000], 1)  # warm up
    h = best_us(human, plain, args.rounds)
    curve = best_us(today, plain, args.rounds)
    passed = best_us(today, given, args.rounds)
    print(f"{args.positions:,} positions, best of {args.rounds} runs, per position:")
    print(f"  human model, HumanWdlModel.wdl: {h:.2f} us")
    print(f"  baseline, position_wdl without an engine W/D/L (win-chance curve): {curve:.2f} us")
    print(f"  baseline, position_wdl with the engine's W/D/L (passed through): {passed:.2f} us")
    print(f"  human / curve: {h / curve:.1f}x; human / engine's: {h / passed:.1f}x")


if __name__ == "__main__":
    main()
