"""The bracket (livegain.core.bracket): each player's chance of winning a
knockout, against 4- and 8-player cases worked by hand."""

from __future__ import annotations

import pytest

from livegain.core.bracket import Tie, bracket

# "p beats q" in a match not yet paired, from a table (4 players) or from
# strengths (8 players: p beats q with s(p) / (s(p) + s(q))).
TABLE = {("A", "C"): 0.6, ("A", "D"): 0.5, ("B", "C"): 0.3, ("B", "D"): 0.45}


def table_beat(p: str, q: str, rnd: int) -> float:
    assert rnd == 2  # the final is round 2
    return TABLE[(p, q)] if (p, q) in TABLE else 1.0 - TABLE[(q, p)]


def test_four_players_semi_finals_live() -> None:
    # A beats B with 0.7, C beats D with 0.4; the final from the table.
    b = bracket([[Tie("A", "B", 0.7), Tie("C", "D", 0.4)]], table_beat)
    got = {r.player: r.win for r in b.rows}
    assert got["A"] == pytest.approx(0.7 * (0.4 * 0.6 + 0.6 * 0.5))  # 0.378
    assert got["B"] == pytest.approx(0.3 * (0.4 * 0.3 + 0.6 * 0.45))  # 0.117
    assert got["C"] == pytest.approx(0.4 * (0.7 * 0.4 + 0.3 * 0.7))  # 0.196
    assert got["D"] == pytest.approx(0.6 * (0.7 * 0.5 + 0.3 * 0.55))  # 0.309
    assert sum(got.values()) == pytest.approx(1.0)
    assert [r.player for r in b.rows] == ["A", "D", "C", "B"]  # by chance of winning
    a = next(r for r in b.rows if r.player == "A")
    assert (a.round, a.reach[0]) == (1, (2, pytest.approx(0.7)))
    assert b.rounds == (1, 2)


def test_a_decided_semi_final_leaves_its_loser_out() -> None:
    b = bracket([[Tie("A", "B", 1.0), Tie("C", "D", 0.4)]], table_beat)
    assert {r.player for r in b.rows} == {"A", "C", "D"}
    assert b.win("B") == 0.0
    assert b.win("A") == pytest.approx(0.4 * 0.6 + 0.6 * 0.5)
    a = next(r for r in b.rows if r.player == "A")
    assert a.round == 2  # through: he waits for the final


STRENGTH = {"P1": 3.0, "P3": 1.0, "P4": 1.0, "P6": 2.0, "P7": 1.0, "P8": 1.0}


def bt(p: str, q: str, rnd: int) -> float:
    return STRENGTH[p] / (STRENGTH[p] + STRENGTH[q])


QUARTERS = [
    Tie("P1", "P2", 1.0),  # decided: P1
    Tie("P3", "P4", 0.5),
    Tie("P5", "P6", 0.0),  # decided: P6
    Tie("P7", "P8", 0.8),
]


def test_eight_players_adjacent_order() -> None:
    # semi-finals: W(1) v W(2), W(3) v W(4)
    b = bracket([QUARTERS], bt, order="adjacent")
    semi1 = {"P1": 0.5 * 3 / 4 + 0.5 * 3 / 4, "P3": 0.5 * 1 / 4, "P4": 0.5 * 1 / 4}
    semi2 = {"P6": 0.8 * 2 / 3 + 0.2 * 2 / 3, "P7": 0.8 * 1 / 3, "P8": 0.2 * 1 / 3}
    p1 = semi1["P1"] * sum(y * 3 / (3 + STRENGTH[q]) for q, y in semi2.items())
    assert p1 == pytest.approx(0.4875)  # 0.75 x (0.4 + 0.2 + 0.05)
    assert b.win("P1") == pytest.approx(p1)
    p6 = semi2["P6"] * sum(x * 2 / (2 + STRENGTH[p]) for p, x in semi1.items())
    assert b.win("P6") == pytest.approx(p6)
    p8 = semi2["P8"] * sum(x * 1 / (1 + STRENGTH[p]) for p, x in semi1.items())
    assert b.win("P8") == pytest.approx(p8)
    assert sum(r.win for r in b.rows) == pytest.approx(1.0)
    assert {r.player for r in b.rows} == set(STRENGTH)
    assert b.rounds == (1, 2, 3)
    row = next(r for r in b.rows if r.player == "P3")
    assert row.reach == ((2, pytest.approx(0.5)), (3, pytest.approx(semi1["P3"])))


def test_eight_players_folded_order_is_read_from_the_next_round() -> None:
    # folded: W(1) v W(4), W(2) v W(3). Round 2 already shows P1 v P7, which
    # only the folded order pairs; the other semi-final follows it.
    semis = [Tie("P1", "P7", 0.6)]
    quarters = [QUARTERS[0], QUARTERS[1], QUARTERS[2], Tie("P7", "P8", 1.0)]
    b = bracket([quarters, semis], bt)
    assert b.order == "folded" and "already paired" in b.why
    semi2 = {"P3": 0.5 * 1 / 3, "P4": 0.5 * 1 / 3, "P6": 2 / 3}  # W(2) v W(3)
    p1 = 0.6 * sum(y * 3 / (3 + STRENGTH[q]) for q, y in semi2.items())
    assert b.win("P1") == pytest.approx(p1)
    assert b.win("P7") == pytest.approx(0.4 * sum(y / (1 + STRENGTH[q]) for q, y in semi2.items()))
    assert b.win("P8") == 0.0 and "P8" not in {r.player for r in b.rows}
    assert sum(r.win for r in b.rows) == pytest.approx(1.0)
    # without round 2 and without an order given: the default, adjacent
    assert bracket([quarters], bt).order == "adjacent"


def test_a_place_match_is_left_out_of_the_bracket() -> None:
    semis = [Tie("A", "B", 1.0), Tie("C", "D", 0.0)]
    final = [Tie("A", "D", 0.25), Tie("B", "C", 0.5)]  # B v C: third place
    b = bracket([semis, final], table_beat)
    assert b.place_matches == ((2, "B", "C"),)
    assert {r.player: r.win for r in b.rows} == {"A": 0.25, "D": 0.75}


def test_bad_matches_are_refused_with_their_players() -> None:
    with pytest.raises(ValueError, match=r"A - B: chance 1\.5"):
        Tie("A", "B", 1.5)
    with pytest.raises(ValueError, match="first round"):
        bracket([], table_beat)
