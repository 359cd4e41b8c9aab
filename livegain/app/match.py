"""Live odds of a configured match (``[[matches]]``: two players over several
games): the boards that belong to it, their results so far and the current
game's chances, as match-win odds (seeds 003/004)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from livegain.config import MatchConfig
from livegain.core.board.board import BoardGame
from livegain.core.board.updates import Color
from livegain.core.odds import GameOdds, game_probabilities, match_odds
from livegain.core.snapshot import normalise_name
from livegain.publish import schema


def _name_tokens(name: str) -> frozenset[str]:
    return frozenset(normalise_name(name).split())


def same_name(configured: str, feed_name: str) -> bool:
    """Case/accents/punctuation-insensitive; ``Carlsen`` matches ``Carlsen, Magnus``."""
    want, have = _name_tokens(configured), _name_tokens(feed_name)
    return bool(want) and want <= have


@dataclass
class MatchTracker:
    """Live odds of one configured match, from the boards that belong to it."""

    cfg: MatchConfig

    def side_of(self, game: BoardGame) -> str | None:
        """``"white"`` if player A has White on this board, ``"black"`` if Black, else None."""
        w, b = game.white.name, game.black.name
        if same_name(self.cfg.a, w) and same_name(self.cfg.b, b):
            return "white"
        if same_name(self.cfg.a, b) and same_name(self.cfg.b, w):
            return "black"
        return None

    def odds(
        self,
        game: BoardGame,
        boards: Sequence[BoardGame],
        results: Mapping[str, str] | None = None,
    ) -> schema.MatchOdds | None:
        """``results``: the other boards' results as viewers know them (a
        delayed broadcast's released ones; default: the boards' own)."""
        a_side = self.side_of(game)
        if a_side is None:
            return None
        cfg = self.cfg
        score_a, score_b = cfg.score_a, cfg.score_b
        played = cfg.played_before
        for g in boards:
            side = self.side_of(g)
            result = g.result if results is None or g is game else results.get(g.board_id, "*")
            if side is None or result not in ("1-0", "0-1", "1/2-1/2"):
                continue
            played += 1
            white_pts = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
            a_pts = white_pts if side == "white" else 1.0 - white_pts
            score_a += a_pts
            score_b += 1.0 - a_pts
        games_left = max(0, cfg.games - played)
        current: GameOdds | None = None
        if game.result == "*":
            wdl = game.current_wdl
            if wdl is not None:
                w, d, lo = (x / 1000.0 for x in wdl)
                current = GameOdds(w, d, lo) if a_side == "white" else GameOdds(lo, d, w)
            games_left = max(1, games_left)
        ra, rb = self._ratings(game, a_side)
        human = game.wdl_model
        if human is not None:
            # The human model's ratings-only layer, as the board's own chances
            # start: this game in its colours, the later ones alternating.
            here = _odds(human.prior.probabilities(*((ra, rb) if a_side == "white" else (rb, ra))))
            here = here if a_side == "white" else here.swapped()
            other = _odds(human.prior.probabilities(*((rb, ra) if a_side == "white" else (ra, rb))))
            other = other.swapped() if a_side == "white" else other
            per_game = _odds(
                (
                    (here.win + other.win) / 2,
                    (here.draw + other.draw) / 2,
                    (here.loss + other.loss) / 2,
                )
            )
        else:
            diff = 0.0 if ra is None or rb is None else float(ra) - float(rb)
            per_game = here = game_probabilities(diff, cfg.draw_rate)
        if current is None and game.result == "*":
            current = here
        mo = match_odds(per_game, games_left, score_a, score_b, current)
        return schema.MatchOdds(
            a=cfg.a,
            b=cfg.b,
            score_a=score_a,
            score_b=score_b,
            games_left=games_left,
            a_wins=mo.a_wins,
            draw=mo.draw,
            b_wins=mo.b_wins,
        )

    def _ratings(self, game: BoardGame, a_side: str) -> tuple[float | None, float | None]:
        """(A's rating, B's rating) as ``rating_source`` says (None: unknown)."""
        a_player = game.white if a_side == "white" else game.black
        b_player = game.black if a_side == "white" else game.white
        ra: float | None = self.cfg.rating_a if self.cfg.rating_a is not None else a_player.rating
        rb: float | None = self.cfg.rating_b if self.cfg.rating_b is not None else b_player.rating
        if self.cfg.rating_source == "perceived":
            a_color: Color = "white" if a_side == "white" else "black"
            b_color: Color = "black" if a_side == "white" else "white"
            if game.model is not None:
                # The calibrated estimate, once neither is "too early".
                ca, cb = game.scoring.calibrated(a_color), game.scoring.calibrated(b_color)
                if ca is not None and cb is not None and not (ca.early or cb.early):
                    ra, rb = ca.rating, cb.rating
            else:
                pa, pb = game.scoring.perceived(a_color), game.scoring.perceived(b_color)
                if pa is not None and pb is not None:
                    ra, rb = pa.rating, pb.rating
        return (
            None if ra is None or ra <= 0 else float(ra),
            None if rb is None or rb <= 0 else float(rb),
        )


def _odds(p: tuple[float, float, float]) -> GameOdds:
    """Probabilities from a model as :class:`GameOdds` (rounding cleaned up)."""
    w, d, lo = (max(0.0, x) for x in p)
    total = w + d + lo
    return GameOdds(w / total, d / total, lo / total)
