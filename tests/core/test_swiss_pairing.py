"""Pairing one Swiss round (livegain.core.swiss_pairing): Dutch-like rules."""

from __future__ import annotations

import pytest

from livegain.core.swiss_pairing import (
    ABSOLUTE,
    BLACK,
    MILD,
    NONE,
    STRONG,
    WHITE,
    Entrant,
    pair_round,
    preference,
)


def test_preference_from_colour_history() -> None:
    assert preference("") == (0, NONE)
    assert preference("--") == (0, NONE)
    assert preference("W") == (BLACK, STRONG)
    assert preference("B") == (WHITE, STRONG)
    assert preference("WB") == (WHITE, MILD)
    assert preference("BW") == (BLACK, MILD)
    assert preference("WW") == (BLACK, ABSOLUTE)
    assert preference("BWB") == (WHITE, STRONG)
    assert preference("WBB") == (WHITE, ABSOLUTE)  # same colour twice in a row
    assert preference("W-W") == (BLACK, ABSOLUTE)  # rounds without a game skipped
    assert preference("BWBWB-B") == (WHITE, ABSOLUTE)  # colour difference -2


def test_first_round_top_half_against_bottom_half_colours_alternate() -> None:
    players = [Entrant(k, 0.0) for k in "ABCDEFGH"]
    p = pair_round(players)
    assert p.games == (("A", "E"), ("F", "B"), ("C", "G"), ("H", "D"))
    assert p.bye is None


def test_bye_to_lowest_ranked_without_one() -> None:
    players = [Entrant(k, 0.0) for k in "ABCDE"]
    assert pair_round(players).bye == "E"
    players = [
        Entrant("A", 1.0, "W"),
        Entrant("B", 1.0, "-", had_bye=True),
        Entrant("C", 0.0, "B"),
        Entrant("D", 0.0, "W"),
        Entrant("E", 0.0, "B"),
    ]
    # E is ranked last: he gets it; once E has had one, D (next from the bottom)
    assert pair_round(players).bye == "E"
    players[4] = Entrant("E", 0.0, "-", had_bye=True)
    players[1] = Entrant("B", 1.0, "B")
    assert pair_round(players).bye == "D"


def test_no_rematch_transposes_the_bottom_half() -> None:
    # four players on the same points: A-C was played, so A gets D and B gets C
    players = [
        Entrant("A", 1.0, "-W"),
        Entrant("B", 1.0, "-W"),
        Entrant("C", 1.0, "-B"),
        Entrant("D", 1.0, "-B"),
    ]
    p = pair_round(players, met=[("C", "A")])
    pairs = {frozenset(g) for g in p.games}
    assert pairs == {frozenset("AD"), frozenset("BC")}
    # no pair repeats a game already played
    for a, b in p.games:
        assert {a, b} != {"A", "C"}


def test_colours_follow_preferences() -> None:
    players = [
        Entrant("A", 2.0, "WW"),  # absolute Black
        Entrant("B", 2.0, "BW"),  # mild Black
        Entrant("C", 1.0, "BB"),  # absolute White
        Entrant("D", 1.0, "WB"),  # mild White
    ]
    p = pair_round(players, met=[("A", "B"), ("C", "D")])
    # A-C: A's absolute Black and C's absolute White both granted; B-D likewise
    assert p.games == (("C", "A"), ("D", "B"))


def test_same_absolute_preference_never_meets() -> None:
    players = [
        Entrant("A", 1.0, "WW"),
        Entrant("B", 1.0, "WW"),
        Entrant("C", 1.0, "BB"),
        Entrant("D", 1.0, "BB"),
    ]
    p = pair_round(players)
    for w, b in p.games:
        assert {w, b} & {"A", "B"} and {w, b} & {"C", "D"}
        assert w in "CD" and b in "AB"


def test_stronger_preference_wins_then_rank() -> None:
    # A (strong White) and B (mild White) both prefer White: A gets it
    players = [Entrant("A", 1.0, "B-"), Entrant("B", 1.0, "WB")]
    assert pair_round(players).games == (("A", "B"),)
    # equal strength, different histories: alternate from the latest round
    # where they differed (round 2: A White, B Black -> A Black now)
    players = [Entrant("A", 1.0, "WBW"), Entrant("B", 1.0, "BWW")]
    # A: cd +1, strong Black; B: White twice in a row, absolute Black: B gets it
    assert pair_round(players).games == (("A", "B"),)
    # equal strength (both mild White): alternate from the latest round where
    # they had different colours (round 2: A White, B Black), so A gets Black
    players = [Entrant("A", 1.0, "BWWB"), Entrant("B", 1.0, "WBWB")]
    assert pair_round(players).games == (("B", "A"),)


def test_odd_group_floats_its_lowest_player_down() -> None:
    players = [
        Entrant("A", 1.0, "W"),
        Entrant("B", 1.0, "B"),
        Entrant("C", 1.0, "W"),
        Entrant("D", 0.0, "B"),
        Entrant("E", 0.0, "W"),
        Entrant("F", 0.0, "B"),
    ]
    met = [("A", "D"), ("B", "E"), ("C", "F")]
    p = pair_round(players, met)
    pairs = {frozenset(g) for g in p.games}
    # A-B in the top group, C floats down to the top of the 0-point group: C-D
    assert frozenset("AB") in pairs
    assert frozenset("CD") in pairs
    assert frozenset("EF") in pairs


def test_unpairable_group_floats_and_last_groups_merge() -> None:
    # A and B already met: both float into the group below
    players = [
        Entrant("A", 2.0, "WB"),
        Entrant("B", 2.0, "BW"),
        Entrant("C", 1.0, "BW"),
        Entrant("D", 1.0, "WB"),
    ]
    p = pair_round(players, met=[("A", "B"), ("C", "D")])
    pairs = {frozenset(g) for g in p.games}
    assert pairs == {frozenset("AC"), frozenset("BD")}
    # the colour criterion comes before the order: with C and D's colours the
    # other way round, A-C and B-D would both give two players the same colour
    players[2:] = [Entrant("C", 1.0, "WB"), Entrant("D", 1.0, "BW")]
    pairs = {frozenset(g) for g in pair_round(players, [("A", "B"), ("C", "D")]).games}
    assert pairs == {frozenset("AD"), frozenset("BC")}


def test_rematch_only_as_a_last_resort() -> None:
    players = [Entrant("A", 1.0, "W"), Entrant("B", 0.0, "B")]
    p = pair_round(players, met=[("A", "B")])
    assert {frozenset(g) for g in p.games} == {frozenset("AB")}


def test_deterministic_and_checks() -> None:
    players = [Entrant(f"P{k}", float(k % 3), "WB"[k % 2]) for k in range(21)]
    assert pair_round(players) == pair_round(players)
    with pytest.raises(ValueError, match="twice"):
        pair_round([Entrant("A", 0.0), Entrant("A", 0.0)])
    with pytest.raises(ValueError, match="colours"):
        pair_round([Entrant("A", 0.0, "X"), Entrant("B", 0.0)])


def test_every_player_once_and_no_rematch_in_a_larger_round() -> None:
    players = [
        Entrant(f"P{k:02d}", float(k % 4) / 2, "WB"[k % 2] + "BW"[k % 3 % 2]) for k in range(31)
    ]
    met = [(f"P{k:02d}", f"P{(k + 1) % 31:02d}") for k in range(31)]
    p = pair_round(players, met)
    seen = [x for g in p.games for x in g] + [p.bye]
    assert sorted(seen) == sorted(e.key for e in players)
    metset = {frozenset(m) for m in met}
    assert not any(frozenset(g) in metset for g in p.games)
