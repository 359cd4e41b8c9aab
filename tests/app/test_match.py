"""Live match odds: which boards belong to a match, the score so far, the game in progress."""

from __future__ import annotations

import pytest

from livegain.app.match import MatchTracker, same_name
from livegain.config import MatchConfig
from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.odds import GameOdds, game_probabilities, match_odds
from livegain.core.snapshot import GameSnapshot, PlayerInfo

from .conftest import toy_model


def test_same_name() -> None:
    assert same_name("Carlsen", "Carlsen, Magnus")
    assert same_name("carlsen magnus", "Carlsen, Magnus")
    assert same_name("Nepomniachtchi", "NEPOMNIACHTCHI, Ian")
    assert same_name("Dominguez", "Domínguez Pérez, Leinier")
    assert not same_name("Carlsen", "Caruana, Fabiano")
    assert not same_name("", "Carlsen, Magnus")


def snap(game: int, white: str, black: str, moves: tuple[str, ...], result: str) -> GameSnapshot:
    return GameSnapshot(
        source="t",
        white=PlayerInfo(white, rating=2800 if white.startswith("Alpha") else 2700),
        black=PlayerInfo(black, rating=2800 if black.startswith("Alpha") else 2700),
        moves=moves,
        result=result,
        game_id=f"g{game}",
        round=str(game),
    )


def test_odds_follow_results_and_the_live_game() -> None:
    t = BoardRegistry(engine_rating=2860.0)
    t.apply(snap(1, "Alpha, Ann", "Beta, Bob", ("e4", "e5"), "1-0"))
    t.apply(snap(2, "Beta, Bob", "Alpha, Ann", ("d4", "d5"), "1/2-1/2"))
    live = t.apply(snap(3, "Beta, Bob", "Alpha, Ann", ("c4",), "*")).board_id
    assert live is not None
    game = t.board(live)
    # The engine says Black (Alpha, player A here) is better: 70 % / 20 % / 10 % for Black.
    for ply in (0, 1):
        t.record_eval(live, ply, game.fen_at(ply), Evaluation(cp=-150, wdl=(100, 200, 700)))
    cfg = MatchConfig(a="Alpha", b="Beta", games=6, draw_rate=0.4)
    tracker = MatchTracker(cfg)
    assert tracker.side_of(game) == "black"
    odds = tracker.odds(game, list(t.boards.values()))
    assert odds is not None
    # 1.5 - 0.5 after two finished games; four left, counting the live one.
    assert (odds.score_a, odds.score_b, odds.games_left) == (1.5, 0.5, 4)
    expected = match_odds(
        game_probabilities(100.0, 0.4), 4, 1.5, 0.5, current=GameOdds(0.7, 0.2, 0.1)
    )
    assert odds.a_wins == pytest.approx(expected.a_wins)
    assert odds.draw == pytest.approx(expected.draw)
    assert odds.b_wins == pytest.approx(expected.b_wins)
    # A board of other players is not part of the match.
    other = t.apply(snap(4, "Gamma, Gil", "Delta, Dan", ("e4",), "*")).board_id
    assert other is not None
    assert tracker.odds(t.board(other), list(t.boards.values())) is None


def test_perceived_ratings_replace_official_ones_once_known() -> None:
    t = BoardRegistry(engine_rating=2860.0)
    bid = t.apply(snap(1, "Alpha, Ann", "Beta, Bob", ("e4", "e5", "Nf3", "Nc6"), "*")).board_id
    assert bid is not None
    g = t.board(bid)
    for ply, cp in enumerate((20, 20, 20, -200, -200)):  # White's 2nd move loses 2 pawns
        t.record_eval(bid, ply, g.fen_at(ply), Evaluation(cp=cp, wdl=(300, 400, 300)))
    official = MatchTracker(MatchConfig(a="Alpha", b="Beta", games=2, draw_rate=0.5))
    perceived = MatchTracker(
        MatchConfig(a="Alpha", b="Beta", games=2, draw_rate=0.5, rating_source="perceived")
    )
    o = official.odds(g, [g])
    p = perceived.odds(g, [g])
    assert o is not None and p is not None
    pw, pb = g.scoring.perceived("white"), g.scoring.perceived("black")
    assert pw is not None and pb is not None and pw.rating < pb.rating
    # Officially A is 100 points stronger; perceived, A played worse than B.
    assert o.a_wins > p.a_wins


def test_perceived_odds_use_the_calibrated_estimate_once_not_early() -> None:
    t = BoardRegistry(engine_rating=2860.0, model=toy_model())
    moves = ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5")
    bid = t.apply(snap(1, "Alpha, Ann", "Beta, Bob", moves[:8], "*")).board_id
    assert bid is not None
    g = t.board(bid)
    # White (Alpha, player A) loses material with every move; Black holds.
    cps = [20, -80, -80, -180, -180, -280, -280, -380, -380, -480, -480, -580, -580]
    for ply in range(9):
        t.record_eval(bid, ply, g.fen_at(ply), Evaluation(cp=cps[ply], wdl=(300, 400, 300)))
    official = MatchTracker(MatchConfig(a="Alpha", b="Beta", games=2, draw_rate=0.5))
    perceived = MatchTracker(
        MatchConfig(a="Alpha", b="Beta", games=2, draw_rate=0.5, rating_source="perceived")
    )
    cw = g.scoring.calibrated("white")
    assert cw is not None and cw.early  # four moves each: too early, official ratings still
    assert perceived.odds(g, [g]) == official.odds(g, [g])
    t.apply(snap(1, "Alpha, Ann", "Beta, Bob", moves, "*"))
    for ply in range(9, 13):
        t.record_eval(bid, ply, g.fen_at(ply), Evaluation(cp=cps[ply], wdl=(300, 400, 300)))
    cw, cb = g.scoring.calibrated("white"), g.scoring.calibrated("black")
    assert cw is not None and cb is not None and not (cw.early or cb.early)
    assert cw.rating < cb.rating
    o, p = official.odds(g, [g]), perceived.odds(g, [g])
    assert o is not None and p is not None
    # Officially A is 100 points stronger; calibrated, A played worse than B.
    assert o.a_wins > p.a_wins
    ra, rb = perceived._ratings(g, "white")
    assert ra is not None and rb is not None
    assert ra - rb == pytest.approx(cw.rating - cb.rating)
