"""The helpers of the back-test across formats (bench/events_backtest.py):
unrated players rated from round 1's board order, an event's results with
its Armageddons, the scores of a forecast of the winner; a team event's
winner and lineups; a knockout's boards before a game, its winner and "the
higher-rated player wins each match"."""

from __future__ import annotations

import gzip
import math
from dataclasses import replace
from pathlib import Path

import pytest

from livegain.batch.backtest import (
    LOG_LOSS_FLOOR,
    EventGame,
    brier,
    estimated_ratings,
    event_results,
    higher_rated_forecast,
    knockout_boards,
    knockout_winner,
    leader_forecast,
    reachable_forecast,
    read_event,
    reliability,
    team_lineups,
    team_winners,
    winner_log_loss,
)
from livegain.core.event_table import EventRules
from livegain.core.knockout import KnockoutRules
from livegain.core.knockout_table import knockout_table
from livegain.core.scoring import Scoring
from livegain.core.standings import Standings


def game(
    rnd: int,
    white: str,
    black: str,
    result: str = "1-0",
    welo: float | None = None,
    belo: float | None = None,
    *,
    board: int | None = None,
    armageddon: bool = False,
) -> EventGame:
    return EventGame(rnd, white, black, result, welo, belo, armageddon, board)


def test_unrated_players_are_rated_from_the_first_round_board_order() -> None:
    """Board k pairs numbers k and k + 3; the higher rated of a board is the
    top-half player. Order: A C D | X B E; X and B lie between D (2400) and E
    (2000); Z, first seen in round 2, gets the median."""
    games = [
        game(1, "A", "X", welo=2600, board=1),
        game(1, "B", "C", belo=2500, board=2),
        game(1, "D", "E", welo=2400, belo=2000, board=3),
        game(2, "Z", "A", welo=None, belo=2600),
    ]
    est = estimated_ratings(games)
    assert est.from_file == 4
    assert est.interpolated == ("X", "B")
    assert est.ratings["X"] == pytest.approx(2400 - 400 / 3)
    assert est.ratings["B"] == pytest.approx(2400 - 800 / 3)
    assert est.default == ("Z",)
    assert est.ratings["Z"] == pytest.approx((2400 + 2400 - 400 / 3) / 2)


def test_board_order_follows_the_board_numbers_not_the_file_order() -> None:
    games = [
        game(1, "D", "E", welo=2400, belo=2000, board=2),
        game(1, "A", "X", welo=2600, board=1),
    ]
    # order A D | X E: X between D (2400) and E (2000), halfway
    assert estimated_ratings(games).ratings["X"] == pytest.approx(2200)


def test_event_results_attach_armageddons_with_the_rule_only() -> None:
    games = [
        game(1, "A", "B", "1/2-1/2"),
        game(1, "A", "B", "0-1", armageddon=True),
    ]
    norway = Standings.from_results(
        event_results(games, Scoring.norway()), scoring=Scoring.norway()
    )
    assert {r.player: (r.points, r.rounds) for r in norway.rows} == {
        "A": (1.0, 1),
        "B": (1.5, 1),
    }
    plain = event_results(games)
    assert len(plain) == 2  # without the rule: a game of its own


def test_scores_of_a_forecast() -> None:
    forecast = {"A": 0.5, "B": 0.3, "C": 0.2, "D": 0.0}
    assert winner_log_loss(forecast, ["B"]) == pytest.approx(-math.log(0.3))
    assert winner_log_loss(forecast, ["B", "C"]) == pytest.approx(-math.log(0.5))
    assert winner_log_loss(forecast, ["D"]) == pytest.approx(-math.log(LOG_LOSS_FLOOR))
    assert brier(forecast, ["A"]) == pytest.approx(0.25 + 0.09 + 0.04)
    assert brier(forecast, ["A", "B"]) == pytest.approx(0.0 + 0.04 + 0.04)


def test_naive_forecasts() -> None:
    points = {"A": 3.0, "B": 3.0, "C": 2.0, "D": 0.5}
    assert leader_forecast(points) == {"A": 0.5, "B": 0.5, "C": 0.0, "D": 0.0}
    assert reachable_forecast(points, 1.0) == pytest.approx(
        {"A": 1 / 3, "B": 1 / 3, "C": 1 / 3, "D": 0.0}
    )
    assert leader_forecast(dict.fromkeys("AB", 0.0)) == {"A": 0.5, "B": 0.5}


def test_reliability_bins() -> None:
    bins = reliability([(0.0, 0.0), (0.005, 1.0), (0.3, 0.0), (0.35, 1.0), (1.0, 1.0)])
    by_low = {b.low: b for b in bins}
    assert (by_low[0.0].count, by_low[0.0].mean_forecast, by_low[0.0].observed) == (
        2,
        0.0025,
        0.5,
    )
    assert by_low[0.2].count == 2 and by_low[0.2].observed == 0.5
    assert by_low[0.8].count == 1  # a forecast of 1 in the last bin
    assert by_low[0.4].count == 0 and math.isnan(by_low[0.4].mean_forecast)


def pgn(*games: tuple[str, str, str, str, dict[str, str]]) -> str:
    """PGN text of (round, white, black, result, other tags) games, no moves."""
    out = []
    for rnd, white, black, result, tags in games:
        head = {"Round": rnd, "White": white, "Black": black, "Result": result, **tags}
        out.append("".join(f'[{k} "{v}"]\n' for k, v in head.items()) + f"\n{result}\n")
    return "\n".join(out)


def team_match(
    rnd: int, a: str, b: str, first: str, second: str
) -> list[tuple[str, str, str, str, dict[str, str]]]:
    """A 2-board match: team a White on board 1 (a1 - b1), Black on board 2 (b2 - a2)."""
    return [
        (f"{rnd}.1", f"{a}1", f"{b}1", first, {"WhiteTeam": a, "BlackTeam": b}),
        (f"{rnd}.2", f"{b}2", f"{a}2", second, {"WhiteTeam": b, "BlackTeam": a}),
    ]


def test_the_team_winner_from_a_gzipped_file(tmp_path: Path) -> None:
    """A round robin of four teams. A and C both win two matches and draw
    theirs (5 match points each), each 4.5 game points. OSB (the opponents
    but the weakest, D on 0): A 2 x 2 (against B) + 5 x 1 (C) = 9, C 5 x 1
    (A) + 2 x 1.5 (B) = 8: A wins. On game points alone they share first."""
    games = [
        *team_match(1, "A", "B", "1-0", "0-1"),  # A 2-0
        *team_match(1, "C", "D", "1-0", "0-1"),  # C 2-0
        *team_match(2, "A", "C", "1/2-1/2", "1/2-1/2"),  # 1-1
        *team_match(2, "B", "D", "1-0", "0-1"),  # B 2-0
        *team_match(3, "A", "D", "1-0", "1/2-1/2"),  # A 1.5-0.5
        *team_match(3, "C", "B", "1-0", "1/2-1/2"),  # C 1.5-0.5
    ]
    path = tmp_path / "teams.pgn.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(pgn(*games))
    event = read_event(path)
    assert (event.games[1].white_team, event.games[1].black_team) == ("B", "A")
    assert team_winners(event.games) == ["A"]
    assert team_winners(event.games, ("GP",)) == ["A", "C"]
    with pytest.raises(ValueError, match="no WhiteTeam/BlackTeam"):
        team_winners([game(1, "x", "y")])


def test_team_lineups_rate_the_unrated_from_their_team() -> None:
    """Rated in the file: a1 2600, b1 2400, b2 2200, d1 2000 (median 2300).
    a2 takes his team's mean, team C (no one rated) the median; with three
    boards each team of two gets a stand-in at its mean."""

    def g(rnd: int, w: str, b: str, we: float | None = None, be: float | None = None) -> EventGame:
        return EventGame(rnd, w, b, "1-0", we, be, white_team=w[0].upper(), black_team=b[0].upper())

    games = [
        g(1, "a1", "b1", 2600, 2400),
        g(1, "b2", "a2", 2200),
        g(1, "c1", "d1", None, 2000),
        g(1, "d2", "c2"),
    ]
    got = team_lineups(games, boards=3)
    assert got.from_file == 4
    assert got.from_team == ("a2", "d2")
    assert got.default == ("c1", "c2")
    assert {p: got.ratings[p] for p in ("a2", "c1", "c2", "d2")} == {
        "a2": 2600,
        "c1": 2300,
        "c2": 2300,
        "d2": 2000,
    }
    assert got.stand_ins == tuple(f"{t} (stand-in 3)" for t in "ABCD")
    assert got.team_of["B (stand-in 3)"] == "B"
    assert got.ratings["B (stand-in 3)"] == 2300
    with pytest.raises(ValueError, match="plays for 'A' and 'C'"):
        team_lineups([*games, replace(g(2, "a1", "c1"), white_team="C")])


KNOCKOUT = pgn(
    # round 1, boards in seeding order: P1 (2700) - P4 (2400), P2 (2600) - P3 (2500)
    ("1.1", "P1", "P4", "1/2-1/2", {}),
    ("1.1", "P2", "P3", "1/2-1/2", {}),
    ("1.2", "P4", "P1", "1-0", {}),  # P4 through 1.5-0.5
    ("1.2", "P3", "P2", "1/2-1/2", {}),  # 1-1: rapid
    ("1.3", "P2", "P3", "1-0", {}),
    ("1.4", "P3", "P2", "1/2-1/2", {}),  # P2 through 2.5-1.5
    ("2.1", "P4", "P2", "1-0", {}),
    ("2.2", "P2", "P4", "1/2-1/2", {}),  # P4 wins the final 1.5-0.5
)
ELO = {"P1": 2700, "P2": 2600, "P3": 2500, "P4": 2400}
KO_RULES = EventRules(format="knockout", knockout=KnockoutRules(bracket="folded"))


def knockout_event(tmp_path: Path) -> tuple[list[EventGame], dict[str, str]]:
    path = tmp_path / "ko.pgn"
    text = KNOCKOUT
    for name, elo in ELO.items():
        text = text.replace(f'[White "{name}"]', f'[White "{name}"]\n[WhiteElo "{elo}"]')
        text = text.replace(f'[Black "{name}"]', f'[Black "{name}"]\n[BlackElo "{elo}"]')
    path.write_text(text, encoding="utf-8")
    event = read_event(path)
    return list(event.games), event.names


def test_the_knockout_winner_from_its_final(tmp_path: Path) -> None:
    games, names = knockout_event(tmp_path)
    table = knockout_table(knockout_boards(games, names), KO_RULES, priors={})
    assert table is not None
    assert table.names[knockout_winner(table)] == "P4"
    # the final not over after its first game
    during = knockout_table(knockout_boards(games, names, (2, 2)), KO_RULES, priors={})
    assert during is not None
    with pytest.raises(ValueError, match="the knockout is not over"):
        knockout_winner(during)


def test_the_boards_before_a_game_of_a_round(tmp_path: Path) -> None:
    games, names = knockout_event(tmp_path)
    boards = knockout_boards(games, names, (1, 3))
    assert [(b.round, b.white.name, b.result) for b in boards] == [
        ("1.1", "P1", "1/2-1/2"),
        ("1.1", "P2", "1/2-1/2"),
        ("1.2", "P4", "1-0"),
        ("1.2", "P3", "1/2-1/2"),
        ("1.3", "P2", "*"),  # on its board, not started
    ]
    assert boards[0].white.rating == 2700 and boards[0].black.rating == 2400
    assert [b.result for b in knockout_boards(games, names, (1, 1))] == ["*", "*"]
    with pytest.raises(ValueError, match="no game number"):
        knockout_boards([game(1, "A", "B")], {})


def test_the_higher_rated_player_wins_each_match(tmp_path: Path) -> None:
    games, names = knockout_event(tmp_path)

    def forecast(before: tuple[int, int]) -> dict[str, float]:
        table = knockout_table(knockout_boards(games, names, before), KO_RULES, priors={})
        assert table is not None
        got = higher_rated_forecast(table, "folded")
        return {table.names[p]: x for p, x in got.items() if x > 0}

    assert forecast((1, 1)) == {"P1": 1.0}  # the top seed through every match
    assert forecast((1, 3)) == {"P2": 1.0}  # P1 is out: P2 beats P3, then P4
    assert forecast((2, 1)) == {"P2": 1.0}  # the final: P2 (2600) over P4 (2400)
    # equal ratings: each half
    even = [replace(g, white_elo=2500.0, black_elo=2500.0) for g in games]
    table = knockout_table(knockout_boards(even, names, (2, 1)), KO_RULES, priors={})
    assert table is not None
    assert sorted(higher_rated_forecast(table, "folded").values()) == [0.5, 0.5]
