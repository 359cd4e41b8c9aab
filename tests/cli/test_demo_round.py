"""The demo round's data (livegain/data/demo-round.pgn, bench/make_demo_games.py)
shows what `make demo` is for: its clocks reach time trouble on one board, and the
service's rule makes a time-trouble moment of it."""

from __future__ import annotations

from pathlib import Path

from livegain.cli.demo import data_path
from livegain.core.board.registry import BoardRegistry
from livegain.core.moments import time_trouble_moment
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.feeds.pgn import parse_pgn


def test_the_demo_round_reaches_time_trouble_once() -> None:
    text = Path(data_path("demo-round.pgn")).read_text(encoding="utf-8")
    t = BoardRegistry(PAPER_ENGINE_RATING)
    moments = []
    for parsed in parse_pgn(text, "demo"):
        bid = t.apply(parsed.snapshot).board_id
        assert bid is not None
        game = t.board(bid)
        assert game.time_trouble_below == 300  # 90 min + 30 s: classical, 5 minutes
        moments += [m for p in range(1, game.plies + 1) if (m := time_trouble_moment(game, p))]
    # White on board 3 thinks long in the middlegame: under 5 minutes after his 38th move
    (m,) = moments
    assert (m.kind, m.ply, m.color) == ("time-trouble", 75, "white")
    assert m.clock is not None and 240 <= m.clock < 300
    assert t.board(m.board_id).white.name == "Achebe, Nkem"
