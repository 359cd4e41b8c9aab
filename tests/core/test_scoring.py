"""Custom scoring (livegain.core.scoring): points per result and colour, the
Lichess customScoring document, byes, and the scoring carried through an
event's rules and its configuration."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from livegain.config import EventConfig
from livegain.core.event_table import EventRules, GameEntry, event_table
from livegain.core.scoring import STANDARD, Scoring, SidePoints, outcome
from livegain.core.snapshot import PlayerInfo
from livegain.core.standings import Result
from livegain.core.tournament_odds import exact_win_odds

NORWAY = Scoring.symmetric(3, 1)
# a Lichess broadcast's customScoring: Black gets more for a draw
LICHESS_DOC: dict[str, Any] = {"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1.5}}


def test_standard_scoring_is_one_half_zero() -> None:
    s = Scoring.standard()
    assert s == STANDARD == Scoring() == Scoring.symmetric(1, 0.5, 0)
    assert s.is_standard and s.exact
    assert (s.white, s.black) == (SidePoints(1, 0.5, 0), SidePoints(1, 0.5, 0))
    assert [s.points(r) for r in ("1-0", "0-1", "1/2-1/2", "½-½")] == [
        (1.0, 0.0),
        (0.0, 1.0),
        (0.5, 0.5),
        (0.5, 0.5),
    ]
    assert s.label() == "1/0.5/0"
    assert (s.most, s.bye_win) == (1.0, 1.0)


def test_points_per_result_and_colour() -> None:
    assert NORWAY.points("1-0") == (3.0, 0.0)
    assert NORWAY.points("0-1") == (0.0, 3.0)
    assert NORWAY.points("1/2-1/2") == (1.0, 1.0)
    asym = Scoring.from_lichess(LICHESS_DOC)
    assert asym.points("1/2-1/2") == (1.0, 1.5)
    assert asym.points("0-1") == (0.0, 3.0)
    assert asym.label() == "White 3/1/0, Black 3/1.5/0"
    assert not asym.is_standard and asym.exact
    # forfeits score as the result they stand for; a double forfeit is a loss for both
    assert asym.points("+/-") == (3.0, 0.0)
    assert asym.points("-/+") == (0.0, 3.0)
    three_two_one = Scoring.symmetric(3, 2, 1)
    assert three_two_one.points("-/-") == (1.0, 1.0)
    assert three_two_one.points("---") == (1.0, 1.0)
    assert outcome(" +-- ") == (1.0, 0.0, False)
    assert outcome("1/2-1/2") == (0.5, 0.5, True)
    for bad in ("*", "2-0", ""):
        with pytest.raises(ValueError, match="not a finished result"):
            NORWAY.points(bad)
    assert NORWAY.game(0.5, 0.5) == (1.0, 1.0)
    with pytest.raises(ValueError, match=r"0, 0\.5 or 1"):
        NORWAY.white.of(0.25)


def test_byes_stand_for_the_best_result_they_reach() -> None:
    assert [STANDARD.bye_game_points(v) for v in (1.0, 0.5, 0.0)] == [1.0, 0.5, 0.0]
    assert [NORWAY.bye_game_points(v) for v in (3.0, 2.0, 1.0, 0.0)] == [1.0, 0.5, 0.5, 0.0]
    # a bye worth no more than a loss stands for a loss
    assert Scoring.symmetric(3, 2, 1).bye_game_points(1.0) == 0.0
    # colours differ: a win is the smaller win, a draw the smaller draw
    asym = Scoring(SidePoints(2, 1), SidePoints(3, 1.5))
    assert (asym.bye_win, asym.most) == (2.0, 3.0)
    assert [asym.bye_game_points(v) for v in (2.0, 1.0, 0.5)] == [1.0, 0.5, 0.0]


def test_lichess_document() -> None:
    s = Scoring.from_lichess(LICHESS_DOC)
    assert s == Scoring(SidePoints(3, 1, 0), SidePoints(3, 1.5, 0))
    assert Scoring.from_lichess(s.as_dict()) == s
    # the configuration's shape: a loss too
    doc = {"white": {"win": 2, "draw": 1, "loss": 0.5}, "black": {"win": 2, "draw": 1}}
    assert Scoring.from_lichess(doc).white == SidePoints(2, 1, 0.5)
    assert Scoring.from_lichess(
        {"white": {"win": 1, "draw": 0.5}, "black": {"win": 1.0, "draw": 0.5}}
    ).is_standard


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([3, 1], r"scoring: expected a table"),
        ({"white": {"win": 3, "draw": 1}}, r"scoring: no 'black' entry"),
        ({**LICHESS_DOC, "tiebreak": {}}, r"scoring: unknown key 'tiebreak'"),
        ({**LICHESS_DOC, "armageddon": {}}, r"scoring\.armageddon: no 'win'"),
        (
            {**LICHESS_DOC, "armageddon": {"win": 1.5, "loss": 1, "draw": "both"}},
            r"scoring\.armageddon\.draw: expected \"white\" or \"black\", got 'both'",
        ),
        (
            {**LICHESS_DOC, "armageddon": {"win": 1, "loss": 1.5}},
            r"scoring\.armageddon: expected loss < win",
        ),
        (
            {**LICHESS_DOC, "armageddon": {"win": "1.5", "loss": 1}},
            r"scoring\.armageddon\.win: expected a number",
        ),
        ({**LICHESS_DOC, "armageddon": [1.5, 1]}, r"scoring\.armageddon: expected a table"),
        ({**LICHESS_DOC, "black": 3}, r"scoring\.black: expected a table"),
        ({**LICHESS_DOC, "white": {"win": 3}}, r"scoring\.white: no 'draw'"),
        ({**LICHESS_DOC, "white": {"win": 3, "draw": 1, "bonus": 1}}, r"unknown key 'bonus'"),
        (
            {**LICHESS_DOC, "white": {"win": "3", "draw": 1}},
            r"scoring\.white\.win: expected a number",
        ),
        (
            {**LICHESS_DOC, "black": {"win": 3, "draw": True}},
            r"scoring\.black\.draw: expected a number",
        ),
        (
            {**LICHESS_DOC, "black": {"win": 3, "draw": None}},
            r"scoring\.black\.draw: expected a number",
        ),
        (
            {**LICHESS_DOC, "white": {"win": math.nan, "draw": 1}},
            r"scoring\.white: win: nan is not a finite",
        ),
        (
            {**LICHESS_DOC, "white": {"win": math.inf, "draw": 1}},
            r"scoring\.white: win: inf is not a finite",
        ),
        (
            {**LICHESS_DOC, "black": {"win": 3, "draw": -1}},
            r"scoring\.black: draw: -1.0 is negative",
        ),
        (
            {**LICHESS_DOC, "black": {"win": 1e9, "draw": 1}},
            r"scoring\.black: win: .* is more than 100",
        ),
        (
            {**LICHESS_DOC, "white": {"win": 1, "draw": 2}},
            r"scoring\.white: expected loss <= draw <= win",
        ),
        ({**LICHESS_DOC, "white": {"win": 0, "draw": 0}}, r"loss < win"),
        ({**LICHESS_DOC, "white": {"win": 10**400, "draw": 1}}, r"white\.win: .* is more than 100"),
        ("x" * 1000, r"got 'x+\.\.\.$"),
    ],
)
def test_lichess_document_errors(doc: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Scoring.from_lichess(doc)


def test_values_are_checked_when_built_directly() -> None:
    with pytest.raises(ValueError, match="negative"):
        SidePoints(1, 0.5, -0.5)
    with pytest.raises(ValueError, match="expected a number"):
        SidePoints(True, 0.5)
    assert SidePoints(3, 1).loss == 0.0
    assert isinstance(SidePoints(3, 1).win, float)


def test_values_that_do_not_add_up_exactly_are_rounded() -> None:
    tenths = Scoring.symmetric(1, 0.1)
    assert not tenths.exact
    assert tenths.tidy(0.1 + 0.1 + 0.1) == tenths.tidy(0.3) == 0.3
    assert NORWAY.tidy(0.1 + 0.2) == 0.1 + 0.2  # exact scorings leave totals alone


# ---- an event's rules and its configuration ---------------------------------

RATINGS = {"Alpha, Ann": 2700, "Beta, Bob": 2650, "Gamma, Gil": 2600, "Delta, Dan": 2550}


def board(white: str, black: str, result: str, rnd: str) -> GameEntry:
    return GameEntry(
        f"{white}-{black}-{rnd}",
        PlayerInfo(white, rating=RATINGS[white]),
        PlayerInfo(black, rating=RATINGS[black]),
        rnd,
        result,
        60,
    )


def test_event_rules_carry_the_scoring_to_standings_and_odds() -> None:
    # round 1 finished, A-D and B-C left (round robin, every pair not met)
    games = [
        board("Alpha, Ann", "Beta, Bob", "1-0", "1"),
        board("Gamma, Gil", "Delta, Dan", "1/2-1/2", "1"),
        board("Alpha, Ann", "Gamma, Gil", "0-1", "2"),
        board("Beta, Bob", "Delta, Dan", "1/2-1/2", "2"),
    ]
    plain = event_table("RR", games, EventRules(format="round-robin", sims=2_000))
    rules = EventRules(format="round-robin", sims=20_000, scoring=NORWAY)
    t = event_table("RR", games, rules)
    points = {r.name: r.points for r in t.rows}
    assert points == {"Alpha, Ann": 3, "Gamma, Gil": 4, "Beta, Bob": 1, "Delta, Dan": 2}
    assert {r.name: r.points for r in plain.rows} == {
        "Alpha, Ann": 1,
        "Gamma, Gil": 1.5,
        "Beta, Bob": 0.5,
        "Delta, Dan": 1,
    }
    assert t.note is not None and "Scoring 3/1/0 (win/draw/loss)." in t.note
    assert plain.note is None or "Scoring" not in plain.note
    # the odds are those of the scoring: against exact enumeration with it
    key = {r.name: r.key for r in t.rows}
    finished = [Result.game(key[g.white.name], key[g.black.name], g.result) for g in games]
    left = [(key["Alpha, Ann"], key["Delta, Dan"]), (key["Beta, Bob"], key["Gamma, Gil"])]
    ratings = {key[name]: float(r) for name, r in RATINGS.items()}
    exact = exact_win_odds(
        list(key.values()), ratings, finished, (), left, tiebreaks=t.tiebreaks, scoring=NORWAY
    )
    for r in t.rows:
        assert r.win is not None and r.win_se is not None
        q = exact[r.key]
        assert abs(r.win - q) <= 4 * max(r.win_se, math.sqrt(q * (1 - q) / t.sims)), r.name


def test_points_before_are_in_the_events_points() -> None:
    games = [board("Alpha, Ann", "Beta, Bob", "1/2-1/2", "4")]
    # three rounds before: Alpha 7 (two wins and a draw), Beta 3 (a win)
    carried = (("Alpha", 7.0), ("Beta", 3.0))
    t = event_table("Open", games, EventRules(points_before=carried, scoring=NORWAY))
    rows = {r.name: r for r in t.rows}
    assert (rows["Alpha, Ann"].points, rows["Alpha, Ann"].games) == (8.0, 4)
    assert (rows["Beta, Bob"].points, rows["Beta, Bob"].games) == (4.0, 4)
    with pytest.raises(ValueError, match="points_before"):
        EventRules(points_before=(("A", -1.0),), scoring=NORWAY)
    # any value is fine with a custom scoring (1.5 for a Black draw...); 1/2 steps otherwise
    EventRules(points_before=(("A", 4.5),), scoring=Scoring.from_lichess(LICHESS_DOC))
    with pytest.raises(ValueError, match="multiple of 1/2"):
        EventRules(points_before=(("A", 1.25),))


def test_event_config_scoring() -> None:
    toml_shape = {
        "white": {"win": 3, "draw": 1, "loss": 0},
        "black": {"win": 3, "draw": 1, "loss": 0},
    }
    assert EventConfig(name="Norway Chess", scoring=toml_shape).rules().scoring == NORWAY
    lichess = EventConfig(name="Broadcast", scoring=LICHESS_DOC).rules().scoring
    assert lichess == Scoring(SidePoints(3, 1), SidePoints(3, 1.5))
    assert EventConfig(name="Open").rules().scoring == STANDARD
    with pytest.raises(ValueError, match=r"scoring\.white\.win: expected a number"):
        EventConfig(name="Bad", scoring={**LICHESS_DOC, "white": {"win": True, "draw": 1}})
    with pytest.raises(ValueError, match="multiple of 1/2"):
        EventConfig(name="Open", points_before={"A": 1.25})
    EventConfig(name="Open", points_before={"A": 7.0}, scoring=toml_shape)


def test_event_config_scoring_from_a_toml_file(tmp_path: Path) -> None:
    from livegain.config import ConfigError, load_settings

    path = tmp_path / "events.toml"
    path.write_text(
        '[[events]]\nname = "Norway Chess"\n'
        "scoring = { white = { win = 3, draw = 1, loss = 0 }, "
        "black = { win = 3, draw = 1, loss = 0 } }\n"
    )
    (event,) = load_settings(path).events
    assert event.rules().scoring == NORWAY
    path.write_text('[[events]]\nname = "E"\nscoring = { white = { win = 3, draw = 1 } }\n')
    with pytest.raises(ConfigError, match=r"events\.0.*scoring: no 'black' entry"):
        load_settings(path)
