"""The win/draw/loss chances a board shows for each of its positions: the
human model's (:mod:`livegain.core.human_wdl`) from the evaluation, the ply,
the side to move and both official ratings; the engine's own, or the
win-chance curve (:mod:`livegain.core.wdl`), without a model.

Every update and snapshot reads the shown W/D/L of every move, and it changes
only with the evaluation, the model, the ratings or the position: each ply's
is kept until one of those changes."""

from __future__ import annotations

from livegain.core.evaluation import Evaluation
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.wdl import Wdl, position_wdl

_Kept = tuple[Evaluation, HumanWdlModel, float | None, float | None, str, Wdl]


class ShownWdl:
    """The W/D/L shown per ply of one board (``draw_share``: the curve's, without a model)."""

    def __init__(self, draw_share: float) -> None:
        self.draw_share = draw_share
        self._kept: dict[int, _Kept] = {}

    def at(
        self,
        ply: int,
        ev: Evaluation,
        model: HumanWdlModel | None,
        white: float | None,
        black: float | None,
        fen: str,
    ) -> Wdl:
        """The W/D/L shown for the position ``fen`` after ``ply`` plies, evaluated
        ``ev``, between players rated ``white`` and ``black`` (None: unknown)."""
        if model is None:
            return position_wdl(ev, self.draw_share)
        kept = self._kept.get(ply)
        if (
            kept is not None
            and kept[0] is ev
            and kept[1] is model
            and kept[2] == white
            and kept[3] == black
            and kept[4] == fen
        ):
            return kept[5]
        wdl = model.wdl(ev, ply, white, black, fen.split()[1] == "w")
        self._kept[ply] = (ev, model, white, black, fen, wdl)
        return wdl
