"""Team match odds and a knockout's chance of going through, against cases
worked by hand (livegain.core.team_match, livegain.core.knockout)."""

from __future__ import annotations

import pytest

from livegain.core.knockout import Armageddon, Knockout, Stage, alternating, through
from livegain.core.odds import GameOdds
from livegain.core.team_match import MatchPoints, TeamBoard, team_match_odds


def test_a_four_board_match_two_finished_one_in_progress_one_not_started() -> None:
    boards = [
        TeamBoard(a_white=True, result="1-0"),  # A 1 - 0
        TeamBoard(a_white=False, result="1/2-1/2"),  # A 1.5 - 0.5
        TeamBoard(a_white=True, wdl=GameOdds(0.5, 0.3, 0.2)),  # in progress, White's view
        TeamBoard(a_white=False, wdl=GameOdds(0.4, 0.4, 0.2)),  # not started: A is Black
    ]
    got = team_match_odds(boards)
    assert (got.score_a, got.score_b, got.boards_left) == (1.5, 0.5, 2)
    # A needs more than half a point from the last two boards (A's view: board 3
    # .5/.3/.2, board 4 .2/.4/.4): nothing at all, .2 x .4 = .08, loses the match;
    # exactly a half, .3 x .4 + .2 x .4 = .20, draws it; else wins it.
    assert got.loss == pytest.approx(0.08)
    assert got.draw == pytest.approx(0.20)
    assert got.win == pytest.approx(0.72)
    assert got.expected_a == pytest.approx(1.5 + 0.65 + 0.4)
    assert got.expected_match_points_a == pytest.approx(0.72 * 2 + 0.20 * 1)
    # 3/1/0 match points
    assert team_match_odds(boards, MatchPoints(3, 1, 0)).expected_match_points_a == pytest.approx(
        0.72 * 3 + 0.20
    )
    assert not got.decided


def test_a_finished_team_match_is_decided_and_forfeits_count() -> None:
    done = team_match_odds(
        [
            TeamBoard(True, "1-0"),
            TeamBoard(False, "-/+"),  # A's Black player wins by forfeit
            TeamBoard(True, "-/-"),  # nobody played: no points
            TeamBoard(False, "1-0"),
        ]
    )
    assert (done.score_a, done.score_b, done.win, done.decided) == (2.0, 1.0, 1.0, True)
    with pytest.raises(ValueError):
        TeamBoard(True, "1-0", GameOdds(1, 0, 0))
    with pytest.raises(ValueError):
        TeamBoard(True)
    with pytest.raises(ValueError):
        team_match_odds([])


def test_a_two_game_match_into_rapid_tie_breaks_and_armageddon() -> None:
    rapid = alternating(True, GameOdds(0.4, 0.4, 0.2), GameOdds(0.3, 0.4, 0.3), 2)
    k = Knockout(
        stage=Stage("classical", ()),  # game 1 drawn, game 2 in progress
        score_a=0.5,
        score_b=0.5,
        current=GameOdds(0.2, 0.6, 0.2),
        later=(Stage("rapid", rapid),),
        armageddon=Armageddon(GameOdds(0.3, 0.4, 0.3), a_black=True),
    )
    got = through(k)
    # classical: A .2 ahead, .6 level; rapid from level: A ahead .40
    # (WW .12, WD .16, DW .12), level .34 (WL .12, DD .16, LW .06);
    # Armageddon with Black: .3 + .4 (a draw sends Black through)
    assert got.a == pytest.approx(0.2 + 0.6 * (0.40 + 0.34 * 0.7))
    assert got.in_stage == pytest.approx(0.4)
    assert [name for name, _ in got.by_stage] == ["rapid", "Armageddon"]
    assert [p for _, p in got.by_stage] == pytest.approx([0.6, 0.6 * 0.34])
    # A White in the Armageddon: only a win.
    white = Knockout(
        k.stage, 0.5, 0.5, k.current, k.later, Armageddon(GameOdds(0.3, 0.4, 0.3), a_black=False)
    )
    assert through(white).a == pytest.approx(0.2 + 0.6 * (0.40 + 0.34 * 0.3))


def test_a_won_mini_match_and_a_repeated_last_stage() -> None:
    over = through(Knockout(Stage("classical", ()), score_a=1.5, score_b=0.5))
    assert (over.a, over.by_stage) == (1.0, ())
    # Level, no Armageddon: the last stage again until it is not level.
    blitz = alternating(True, GameOdds(0.5, 0.2, 0.3), GameOdds(0.3, 0.2, 0.5), 2)
    k = Knockout(Stage("classical", ()), 1.0, 1.0, later=(Stage("blitz", blitz),))
    ahead = 0.5 * 0.3 + 0.5 * 0.2 + 0.2 * 0.3
    behind = 0.3 * 0.5 + 0.3 * 0.2 + 0.2 * 0.5
    assert through(k).a == pytest.approx(ahead / (ahead + behind))
    with pytest.raises(ValueError, match="nothing to break the tie"):
        through(Knockout(Stage("classical", ()), 1.0, 1.0))
