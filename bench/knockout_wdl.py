"""The ratings-only W/D/L of a knockout's tie-break games, against what happened.

For every game of the FIDE World Cup files (``../shared/data/events/knockout``,
2011 and 2013; Round tag R.G, the stage of game G by the World Cup's format,
the finals of round 7 four classical games), per stage: the games, White's
observed score and draw rate, the means the models predict, and the
log-loss of the result (``-ln p(result)``) under

* ``classical-otb``: the shipped ratings-only model of classical games over
  the board (what the knockout table uses for every stage);
* ``online-rapid``: the shipped rapid model (lichess games, lichess ratings:
  the one the service picks for a rapid TimeControl, shown for reference);
* the baseline: Elo's expected score (no White advantage) with draw rate 0.5
  (:func:`livegain.core.odds.game_probabilities`, the service's model
  without a human one).

Probabilities below 0.001 count as 0.001 in the log-loss (the baseline's
draw cap gives some upsets no chance); the games where that happened are
counted. Usage: ``.venv/bin/python bench/knockout_wdl.py``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import chess.pgn

from livegain.core.knockout import WORLD_CUP_STAGES, StageRule, stage_of_game, stage_rule
from livegain.core.odds import game_probabilities
from livegain.models.wdl import load_wdl_file

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "events" / "knockout"
FILES = ("world-cup-2011.pgn", "world-cup-2013.pgn")
FINAL = (StageRule("classical", 4), *WORLD_CUP_STAGES[1:])
FLOOR = 1e-3
RESULT = {"1-0": 0, "1/2-1/2": 1, "0-1": 2}


def games() -> list[tuple[str, float, float, int]]:
    """(stage, White's rating, Black's rating, result index) of every rated game."""
    out = []
    for name in FILES:
        with (DATA / name).open(encoding="utf-8") as fh:
            while (h := chess.pgn.read_headers(fh)) is not None:
                rnd, _, game = h.get("Round", "").partition(".")
                we, be = h.get("WhiteElo", ""), h.get("BlackElo", "")
                if not (rnd.isdigit() and game.isdigit() and we.isdigit() and be.isdigit()):
                    continue
                stages = FINAL if rnd == "7" else WORLD_CUP_STAGES
                index = stage_of_game(stages, int(game))
                rule = None if index is None else stage_rule(stages, index)
                if rule is None or h.get("Result") not in RESULT:
                    continue
                out.append((rule.name, float(we), float(be), RESULT[h["Result"]]))
    return out


def main() -> int:
    if not all((DATA / f).exists() for f in FILES):
        print(f"skipped: the World Cup files are not in {DATA}")
        return 0
    priors = {p.kind: p for p in load_wdl_file()[0]}
    models = {
        "classical-otb": priors["classical-otb"].probabilities,
        "online-rapid": priors["online-rapid"].probabilities,
        "Elo, draw rate 0.5": lambda w, b: _elo(w, b),
    }
    rows = games()
    print(f"FIDE World Cup 2011 and 2013: {len(rows)} rated games")
    names = [s.name for s in WORLD_CUP_STAGES]
    groups = [(s, [r for r in rows if r[0] == s]) for s in names]
    groups.append(("all tie-breaks", [r for r in rows if r[0] != "classical"]))
    head = "stage | games | White score | draws | " + " | ".join(
        f"{m}: score, draws, log-loss" for m in models
    )
    print(head)
    for stage, gs in groups:
        n = len(gs)
        if n == 0:
            continue
        score = sum((1.0, 0.5, 0.0)[r] for *_, r in gs) / n
        draws = sum(r == 1 for *_, r in gs) / n
        cells = [stage, str(n), f"{score:.3f}", f"{draws:.3f}"]
        for model in models.values():
            ps = [model(w, b) for _, w, b, _ in gs]
            mean = sum(p[0] + p[1] / 2 for p in ps) / n
            d = sum(p[1] for p in ps) / n
            floored = sum(p[r] < FLOOR for p, (*_, r) in zip(ps, gs, strict=True))
            loss = -sum(math.log(max(p[r], FLOOR)) for p, (*_, r) in zip(ps, gs, strict=True)) / n
            cells.append(
                f"{mean:.3f}, {d:.3f}, {loss:.3f}" + (f" ({floored} floored)" if floored else "")
            )
        print(" | ".join(cells))
    return 0


def _elo(white: float, black: float) -> tuple[float, float, float]:
    g = game_probabilities(white - black, 0.5)
    return (g.win, g.draw, g.loss)


if __name__ == "__main__":
    sys.exit(main())
