"""Norway Chess scoring: 3 / 1 / 0 classical games and an Armageddon after a
draw (livegain.core.scoring.Armageddon), in the standings (the Armageddon part
of its classical pairing), the odds (a drawn classical game settled by a
simulated Armageddon; a live Armageddon from its W/D/L) and an event's table
from its boards (which boards are Armageddons)."""

from __future__ import annotations

import math
from pathlib import Path

import chess.pgn
import pytest

from livegain.core.event_table import EventRules, GameEntry, event_table
from livegain.core.scoring import PRESETS, Armageddon, Scoring, SidePoints
from livegain.core.snapshot import PlayerInfo
from livegain.core.standings import (
    Result,
    Standings,
    attach_armageddons,
    names_armageddon,
    result_points,
)
from livegain.core.tournament_odds import (
    ARMAGEDDON_DRAW_RATE,
    ARMAGEDDON_WHITE_EDGE,
    armageddon_wdl,
    contenders,
    exact_win_odds,
    win_odds,
)

NORWAY = Path(__file__).resolve().parents[3] / "shared" / "data" / "events" / "norway"
OFFICIAL_2024 = {
    "Carlsen, Magnus": 17.5,
    "Nakamura, Hikaru": 15.5,
    "Praggnanandhaa, Rameshbabu": 14.5,
    "Firouzja, Alireza": 13.5,
    "Caruana, Fabiano": 11.5,
    "Ding, Liren": 7.0,
}


# --- the scoring ------------------------------------------------------------


def test_norway_preset_is_the_configured_table() -> None:
    doc = {
        "white": {"win": 3, "draw": 1},
        "black": {"win": 3, "draw": 1, "loss": 0},
        "armageddon": {"win": 1.5, "loss": 1, "draw": "black"},
    }
    norway = Scoring.norway()
    assert Scoring.from_config("norway") == Scoring.from_config(" Norway ") == norway
    assert Scoring.from_config(doc) == norway
    assert Scoring.from_lichess(norway.as_dict()) == norway
    assert Scoring.from_config("standard") == PRESETS["standard"] == Scoring.standard()
    assert not norway.is_standard and norway.exact
    assert norway.label() == "3/1/0, Armageddon 1.5/1 (drawn: Black wins)"
    with pytest.raises(ValueError, match="unknown preset 'fide'"):
        Scoring.from_config("fide")


def test_armageddon_points_go_to_its_winner_a_draw_to_the_rule_colour() -> None:
    norway = Scoring.norway()
    assert norway.armageddon_points(1.0) == (1.5, 1.0)
    assert norway.armageddon_points(0.0) == (1.0, 1.5)
    assert norway.armageddon_points(0.5) == (1.0, 1.5)  # Black's draw odds
    white_odds = Scoring(norway.white, norway.black, Armageddon(1.5, 1.0, "white"))
    assert white_odds.armageddon_points(0.5) == (1.5, 1.0)
    with pytest.raises(ValueError, match="no Armageddon rule"):
        Scoring.symmetric(3, 1).armageddon_points(1.0)
    with pytest.raises(ValueError, match="loss < win"):
        Armageddon(1.0, 1.0)


def test_lichess_armageddon_round_scoring_gives_the_rule() -> None:
    classical = Scoring.symmetric(3, 1)
    round_doc = {"white": {"win": 0.5, "draw": 0}, "black": {"win": 0.5, "draw": 0.5}}
    assert classical.with_lichess_armageddon(round_doc) == Scoring.norway()
    both = {"white": {"win": 0.5, "draw": 0.5}, "black": {"win": 0.5, "draw": 0.5}}
    with pytest.raises(ValueError, match="one colour only"):
        classical.with_lichess_armageddon(both)
    uneven = Scoring(SidePoints(3, 1), SidePoints(3, 1.5))
    with pytest.raises(ValueError, match="same classical draw"):
        uneven.with_lichess_armageddon(round_doc)


# --- the standings ----------------------------------------------------------


def read_norway(path: Path) -> tuple[list[Result], list[Result], dict[str, int]]:
    """(classical games, Armageddons, ratings) by the GameType tag."""
    classical: list[Result] = []
    armageddons: list[Result] = []
    ratings: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        while (h := chess.pgn.read_headers(handle)) is not None:
            r = Result.game(h["White"], h["Black"], h["Result"], int(h["Round"].split(".")[0]))
            (armageddons if names_armageddon(h.get("GameType")) else classical).append(r)
            for side in ("White", "Black"):
                if h.get(f"{side}Elo", "").isdigit():
                    ratings[h[side]] = int(h[f"{side}Elo"])
    return classical, armageddons, ratings


def test_norway_chess_2024_final_standings_are_the_official_totals() -> None:
    path = NORWAY / "norway-chess-2024.pgn"
    if not path.exists():
        pytest.skip(f"{path} not present (the shared data beside the checkout)")
    classical, armageddons, _ = read_norway(path)
    assert (len(classical), len(armageddons)) == (30, 21)
    st = Standings.from_results(
        attach_armageddons(classical, armageddons), ("DE", "SB", "WIN"), scoring=Scoring.norway()
    )
    assert {r.player: r.points for r in st.rows} == OFFICIAL_2024
    assert st.leaders() == ["Carlsen, Magnus"]
    assert {r.rounds for r in st.rows} == {10}  # an Armageddon is no round of its own


def test_armageddon_is_part_of_its_classical_pairing_in_the_tie_breaks() -> None:
    """A-B drawn, B won the Armageddon; A beat C, B and C drew (C won that
    Armageddon). Points: A 3 + 1 = 4, B 1.5 + 1 = 2.5, C 0 + 1.5 = 1.5."""
    results = [
        Result.game("A", "B", "1/2-1/2", 1).with_armageddon("A", "0-1"),
        Result.game("A", "C", "1-0", 2),
        Result.game("B", "C", "1/2-1/2", 3).with_armageddon("B", "1/2-1/2"),
    ]
    st = Standings.from_results(results, ("SB", "WIN", "WON", "BH"), scoring=Scoring.norway())
    assert {r.player: r.points for r in st.rows} == {"A": 4.0, "B": 2.5, "C": 1.5}
    assert {r.player: r.rounds for r in st.rows} == {"A": 2, "B": 2, "C": 2}
    # SB: the classical game points (a draw: half the opponent's points)
    assert st.value("B", "SB") == 0.5 * 4.0 + 0.5 * 1.5
    assert st.value("B", "WIN") == st.value("B", "WON") == 0.0  # Armageddon wins are no wins
    assert st.value("A", "BH") == 2.5 + 1.5  # each opponent once
    assert result_points(results[0], Scoring.norway()) == (1.0, 1.5)


def test_direct_encounter_counts_the_armageddon() -> None:
    """A and B level on points; their pairing's Armageddon went to B."""
    results = [
        Result.game("A", "B", "1/2-1/2", 1).with_armageddon("A", "0-1"),
        Result.game("A", "C", "1-0", 2),
        Result.game("C", "B", "1/2-1/2", 2).with_armageddon("C", "1-0"),
        Result.game("A", "D", "1/2-1/2", 3).with_armageddon("A", "1-0"),
        Result.game("B", "D", "1-0", 3),
    ]
    st = Standings.from_results(results, ("DE",), scoring=Scoring.norway())
    assert st.row("A").points == st.row("B").points == 5.5
    assert st.leaders() == ["B"]
    assert (st.value("A", "DE"), st.value("B", "DE")) == (1.0, 1.5)


def test_an_armageddon_needs_a_rule_and_a_classical_draw() -> None:
    with pytest.raises(ValueError, match="follows a classical draw"):
        Result.game("A", "B", "1-0").with_armageddon("A", "1-0")
    with pytest.raises(ValueError, match="no classical draw between them"):
        attach_armageddons([Result.game("A", "B", "1-0", 1)], [Result.game("A", "B", "1-0", 1)])
    with pytest.raises(ValueError, match="no Armageddon rule"):
        Standings.from_results([Result.game("A", "B", "1/2-1/2").with_armageddon("A", "1-0")])


def test_standard_scoring_is_unchanged_by_the_armageddon_code() -> None:
    """The same results read with the standard scoring keep their values."""
    results = [
        Result.game("A", "B", "1/2-1/2", 1),
        Result.game("A", "C", "1-0", 2),
        Result.game("B", "C", "1/2-1/2", 3),
    ]
    st = Standings.from_results(results, ("DE", "SB", "WIN", "BH"))
    assert [(r.player, r.points, r.tiebreaks) for r in st.rows] == [
        ("A", 1.5, (None, 0.5 * 1.0 + 1.0 * 0.5, 1.0, 1.5)),
        ("B", 1.0, (None, 0.5 * 1.5 + 0.5 * 0.5, 0.0, 2.0)),
        ("C", 0.5, (None, 0.5 * 1.0, 0.0, 2.5)),
    ]


# --- the odds ---------------------------------------------------------------


def hand_case() -> tuple[list[Result], float]:
    """A-C drawn, A won its Armageddon; A-B drawn, their Armageddon in progress
    (A White, W/D/L 0.5 / 0.2 / 0.3: A wins it with 0.5, a draw going to
    Black); B-C not started (equal ratings, draw rate 0.5: 1/4, 1/2, 1/4), an
    Armageddon after a draw, B White: B wins it with ``pa``. Returns (the
    finished results, ``pa`` worked from the Elo curve by hand)."""
    finished = [
        Result.game("A", "C", "1/2-1/2", 1).with_armageddon("A", "1-0"),
        Result.game("A", "B", "1/2-1/2", 2),
    ]
    expected = 1.0 / (1.0 + 10.0 ** (-ARMAGEDDON_WHITE_EDGE / 400.0))
    return finished, expected - ARMAGEDDON_DRAW_RATE / 2.0


def hand_odds(pa: float) -> dict[str, float]:
    """A: 1.5 + (1.5 or 1); B: (1 or 1.5) + B-C; C: 1 + B-C.
    A wins the A-B Armageddon (1/2): A 3; B first if he beats C (1/4), C if
    he beats B (1/4), A otherwise. B wins it (1/2): A 2.5; B first if he beats
    C or draws and wins the Armageddon; C if he beats B; a draw that C's
    Armageddon settles leaves all three on 2.5, level on every tie-break (all
    games drawn): a third each."""
    tie = 0.5 * 0.5 * (1.0 - pa) / 3.0
    return {
        "A": 0.5 * 0.5 + tie,
        "B": 0.5 * 0.25 + 0.5 * (0.25 + 0.5 * pa) + tie,
        "C": 0.5 * 0.25 + 0.5 * 0.25 + tie,
    }


def test_odds_with_armageddon_exact_and_simulated_match_the_hand_figures() -> None:
    finished, pa = hand_case()
    ratings = {"A": 2700.0, "B": 2700.0, "C": 2700.0}
    w, _, _ = armageddon_wdl(2700.0, 2700.0)
    assert w == pytest.approx(pa)
    want = hand_odds(pa)
    args = (["A", "B", "C"], ratings, finished, (), [("B", "C")])
    kwargs = {
        "tiebreaks": ("DE", "SB", "WIN"),
        "scoring": Scoring.norway(),
        "armageddons": [("A", "B", (0.5, 0.2, 0.3))],
    }
    exact = exact_win_odds(*args, **kwargs)  # type: ignore[arg-type]
    assert exact == pytest.approx(want, abs=1e-12)
    sims = 200_000
    sim = win_odds(*args, sims=sims, seed=5, **kwargs)  # type: ignore[arg-type]
    for player, q in want.items():
        assert abs(sim[player].p - q) <= 4 * sim[player].stderr, player


def test_a_classical_game_left_drawn_is_settled_by_an_armageddon() -> None:
    """Two players, one game left: a classical draw leaves them level unless
    the Armageddon is played; with it the draw's half goes to its winner."""
    ratings = {"A": 2750.0, "B": 2700.0}
    args = (["A", "B"], ratings, (), (), [("A", "B")])
    exact = exact_win_odds(*args, scoring=Scoring.norway())
    plain = exact_win_odds(*args, scoring=Scoring.symmetric(3, 1))
    from livegain.core.odds import game_probabilities

    g = game_probabilities(50.0, 0.5)
    arm = armageddon_wdl(2750.0, 2700.0)
    assert plain["A"] == pytest.approx(g.win + g.draw / 2)
    assert exact["A"] == pytest.approx(g.win + g.draw * arm[0])
    sim = win_odds(*args, sims=100_000, seed=1, scoring=Scoring.norway())
    assert abs(sim["A"].p - exact["A"]) <= 4 * sim["A"].stderr


def test_odds_with_armageddon_need_the_rule_and_the_draw() -> None:
    ratings = {"A": 2700.0, "B": 2700.0}
    draw = [Result.game("A", "B", "1/2-1/2")]
    with pytest.raises(ValueError, match="no Armageddon rule"):
        win_odds(["A", "B"], ratings, draw, sims=100, armageddons=[("A", "B", None)])
    with pytest.raises(ValueError, match="no classical draw between them"):
        win_odds(
            ["A", "B"],
            ratings,
            [Result.game("A", "B", "1-0")],
            sims=100,
            scoring=Scoring.norway(),
            armageddons=[("A", "B", None)],
        )


def test_contenders_count_the_armageddon_points() -> None:
    finished = [Result.game("A", "B", "1/2-1/2").with_armageddon("A", "1-0")]
    assert contenders(["A", "B"], finished, (), Scoring.norway()) == ["A"]


# --- an event's table from its boards ---------------------------------------


def entry(
    white: str,
    black: str,
    result: str,
    rnd: str,
    *,
    armageddon: bool = False,
    plies: int = 40,
    wdl: tuple[float, float, float] | None = None,
) -> GameEntry:
    return GameEntry(
        f"{white}-{black}-{rnd}-{armageddon}",
        PlayerInfo(white, rating=2700),
        PlayerInfo(black, rating=2700),
        rnd,
        result,
        plies,
        wdl,
        armageddon=armageddon,
    )


def test_event_table_reads_armageddon_boards_tagged_or_not() -> None:
    tagged = [
        entry("Alpha", "Beta", "1/2-1/2", "1"),
        entry("Alpha", "Beta", "0-1", "1", armageddon=True),
        entry("Gamma", "Alpha", "1-0", "2"),
    ]
    untagged = [*tagged[:1], entry("Alpha", "Beta", "0-1", "1"), tagged[2]]
    rules = EventRules(format="round-robin", scoring=Scoring.norway(), sims=1_000)
    for boards in (tagged, untagged):
        t = event_table("Norway", boards, rules)
        assert {r.name: (r.points, r.games) for r in t.rows} == {
            "Alpha": (1.0, 2),
            "Beta": (1.5, 1),
            "Gamma": (3.0, 1),
        }
        assert (t.finished, t.live, t.upcoming) == (3, 0, 1)  # Beta - Gamma to come
    # without the rule the second board is a game of its own
    plain = event_table("Norway", untagged, EventRules(format="round-robin", sims=1_000))
    assert {r.name: r.games for r in plain.rows}["Alpha"] == 3


def test_event_table_simulates_a_live_armageddon_and_one_to_come() -> None:
    """Alpha-Beta drawn, their Armageddon on a board with Alpha winning it
    (W/D/L 1000/0/0): Alpha is first for sure. Without the board the
    Armageddon is still to come, from the ratings."""
    rules = EventRules(format="round-robin", scoring=Scoring.norway(), sims=20_000)
    draw = entry("Alpha", "Beta", "1/2-1/2", "1")
    live = entry("Alpha", "Beta", "*", "1", armageddon=True, wdl=(1000, 0, 0))
    t = event_table("Norway", [draw, live], rules)
    assert (t.finished, t.live, t.upcoming) == (1, 1, 0)
    assert {r.name: r.win for r in t.rows} == {"Alpha": 1.0, "Beta": 0.0}
    to_come = event_table("Norway", [draw], rules)
    row = {r.name: r for r in to_come.rows}["Alpha"]
    assert row.win is not None and row.win_se is not None
    assert abs(row.win - armageddon_wdl(2700, 2700)[0]) <= 4 * row.win_se


def test_norway_women_2025_winner_from_the_file() -> None:
    path = NORWAY / "norway-chess-women-2025.pgn"
    if not path.exists():
        pytest.skip(f"{path} not present (the shared data beside the checkout)")
    classical, armageddons, _ = read_norway(path)
    st = Standings.from_results(
        attach_armageddons(classical, armageddons), scoring=Scoring.norway()
    )
    assert st.leaders() == ["Muzychuk, Anna"]
    assert math.isclose(st.row("Muzychuk, Anna").points, 16.5)
