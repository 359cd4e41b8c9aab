"""An event's standings and win odds from its boards (livegain.core.event_table):
which games are finished, live, not started or still to be paired; names in the
rules matched to players; points carried in; the odds against exact enumeration."""

from __future__ import annotations

import dataclasses
import math

import pytest
from toy_human import forward_model, toy_prior, toy_wdl_model

from livegain.core import tournament_odds
from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.event_table import (
    DEFAULT_DRAW_RATE,
    EventRules,
    EventTable,
    GameEntry,
    Pairing,
    TableRow,
    entry_of,
    event_table,
    round_number,
)
from livegain.core.scoring import Scoring
from livegain.core.snapshot import GameSnapshot, PlayerInfo, normalise_name
from livegain.core.standings import Result
from livegain.core.tournament_odds import exact_win_odds

RATINGS = {"Alpha, Ann": 2700, "Beta, Bob": 2650, "Gamma, Gil": 2600, "Delta, Dan": 2550}


def p(name: str, fide: str | None = None, rating: int | None = None) -> PlayerInfo:
    return PlayerInfo(name, rating=RATINGS.get(name) if rating is None else rating, fide_id=fide)


def board(
    white: str,
    black: str,
    result: str = "*",
    *,
    rnd: str | None = "1",
    plies: int = 30,
    wdl: tuple[float, float, float] | None = None,
) -> GameEntry:
    return GameEntry(f"{white}-{black}-{rnd}", p(white), p(black), rnd, result, plies, wdl)


def keyed(table: EventTable) -> dict[str, TableRow]:
    return {r.name: r for r in table.rows}


def win(row: TableRow) -> tuple[float, float]:
    assert row.win is not None and row.win_se is not None
    return row.win, row.win_se


def assert_near_exact(table: EventTable, exact: dict[str, float]) -> None:
    """Each row's chance within 4 standard errors of the exact one (by key)."""
    for r in table.rows:
        q = exact[r.key]
        p_, se = win(r)
        if q in (0.0, 1.0):
            assert (p_, se) == (q, 0.0), r.name
        else:
            assert abs(p_ - q) <= 4 * max(se, math.sqrt(q * (1 - q) / table.sims)), (r.name, q)


def test_round_robin_without_pairings_plays_every_pair_not_yet_met() -> None:
    games = [
        board("Alpha, Ann", "Beta, Bob", "1-0", rnd="1"),
        board("Gamma, Gil", "Delta, Dan", "1/2-1/2", rnd="1"),
        board("Alpha, Ann", "Gamma, Gil", rnd="2", wdl=(100, 300, 600)),  # Gamma is winning
        board("Beta, Bob", "Delta, Dan", rnd="2", plies=0),  # paired, not started
    ]
    rules = EventRules(format="round-robin", sims=40_000, seed=3)
    t = event_table("RR", games, rules)
    assert (t.finished, t.live, t.upcoming) == (2, 1, 3)  # B-D, and A-D, B-C no board shows
    assert (t.round, t.rounds) == (2, 3)
    assert t.tiebreaks == ("DE", "SB", "WIN")
    rows = keyed(t)
    a, b, c, d = (rows[n] for n in RATINGS)
    assert (a.points, a.games, a.rank, a.live) == (1.0, 1, 1, True)
    assert (b.points, b.rank, b.live) == (0.0, 4, False)
    assert c.rank == d.rank == 2
    assert dict(a.tiebreaks) == {"DE": None, "SB": 0.0, "WIN": 1.0}
    # the same games, enumerated exactly: the pairs not met are the games left
    A, B, C, D = (normalise_name(n) for n in RATINGS)
    exact = exact_win_odds(
        [A, B, C, D],
        {normalise_name(n): float(r) for n, r in RATINGS.items()},
        [Result.game(A, B, "1-0"), Result.game(C, D, "1/2-1/2")],
        [(A, C, (100, 300, 600))],
        [(B, D), (A, D), (B, C)],
        tiebreaks=("DE", "SB", "WIN"),
    )
    assert_near_exact(t, exact)
    assert sum(win(r)[0] for r in t.rows) == pytest.approx(1.0)
    # a double round robin has each pair meet twice: 12 games, 10 left
    t2 = event_table("RR", games, EventRules(format="round-robin", cycles=2, sims=1000))
    assert (t2.finished, t2.live, t2.upcoming, t2.rounds) == (2, 1, 9, 6)


def test_the_live_wdl_moves_the_odds_and_without_one_the_ratings_decide() -> None:
    def odds(wdl: tuple[float, float, float] | None) -> dict[str, float]:
        games = [
            board("Alpha, Ann", "Beta, Bob", "1/2-1/2", rnd="1"),
            board("Gamma, Gil", "Delta, Dan", "1/2-1/2", rnd="1"),
            board("Alpha, Ann", "Gamma, Gil", rnd="2", wdl=wdl),
            board("Beta, Bob", "Delta, Dan", "1/2-1/2", rnd="2"),
        ]
        rules = EventRules(format="round-robin", sims=20_000, seed=1)
        return {r.name: win(r)[0] for r in event_table("E", games, rules).rows}

    white_wins, black_wins, unknown = odds((950, 40, 10)), odds((10, 40, 950)), odds(None)
    assert white_wins["Alpha, Ann"] > unknown["Alpha, Ann"] > black_wins["Alpha, Ann"]
    assert white_wins["Gamma, Gil"] < unknown["Gamma, Gil"] < black_wins["Gamma, Gil"]
    # no W/D/L yet: the game is simulated from the ratings, as one not started
    games = [
        board("Alpha, Ann", "Beta, Bob", "1/2-1/2", rnd="1"),
        board("Gamma, Gil", "Delta, Dan", "1/2-1/2", rnd="1"),
        board("Alpha, Ann", "Gamma, Gil", rnd="2", plies=0),
        board("Beta, Bob", "Delta, Dan", "1/2-1/2", rnd="2"),
    ]
    rules = EventRules(format="round-robin", sims=20_000, seed=1)
    assert {r.name: win(r)[0] for r in event_table("E", games, rules).rows} == unknown


def test_swiss_points_carried_in_and_only_the_current_round_simulated() -> None:
    carried = (("Alpha", 3.5), ("Beta, Bob", 3.0), ("Gamma", 2.0), ("Delta, Dan", 2.0))
    games = [
        board("Alpha, Ann", "Gamma, Gil", "0-1", rnd="5"),
        board("Beta, Bob", "Delta, Dan", rnd="5", wdl=(500, 300, 200)),
    ]
    t = event_table("Open", games, EventRules(format="swiss", points_before=carried, sims=20_000))
    rows = keyed(t)
    a, b, c, d = (rows[n] for n in RATINGS)
    # 4 rounds before round 5, carried in; round 5 from the boards
    assert (a.points, a.games) == (3.5, 5)
    assert (c.points, c.games) == (3.0, 5)
    assert (b.points, b.games, b.live) == (3.0, 4, True)
    assert t.tiebreaks == ("BH-C1", "BH", "SB") and t.rounds is None
    assert t.note is not None and t.note.startswith("Swiss: only round 5 is simulated")
    # after round 5: Alpha leads unless Beta wins (then Beta, with 4)
    assert win(b)[0] == pytest.approx(0.5, abs=4 * win(b)[1])
    assert win(a)[0] + win(b)[0] == pytest.approx(1.0)
    assert c.win == d.win == 0.0


def test_pairings_on_boards_are_played_the_others_simulated() -> None:
    games = [
        board("Alpha, Ann", "Beta, Bob", "1-0", rnd="1"),
        board("Gamma, Gil", "Delta, Dan", "0-1", rnd="1"),
    ]
    pairings = (
        Pairing("Alpha", "Beta", 1),  # on a board of round 1: played
        Pairing("Delta", "Alpha", 2),
        Pairing("Beta, Bob", "Gamma, Gil", 2),
    )
    rules = EventRules(format="round-robin", pairings=pairings, sims=20_000, seed=2)
    t = event_table("RR", games, rules)
    assert (t.finished, t.live, t.upcoming) == (2, 0, 2)  # only what the pairings say
    rows = keyed(t)
    # Alpha and Delta meet: one of them (or both, drawing) will lead
    assert rows["Gamma, Gil"].win == 0.0
    assert win(rows["Alpha, Ann"])[0] + win(rows["Delta, Dan"])[0] == pytest.approx(1.0)


def test_players_are_keyed_by_fide_id_and_names_resolved() -> None:
    games = [
        GameEntry(
            "b1",
            p("Praggnanandhaa, R", "25059530", 2690),
            p("Giri, Anish", None, 2760),
            "1",
            "1-0",
            40,
        ),
        GameEntry(
            "b2",
            p("Giri, Anish", None, 2760),
            p("Rameshbabu Praggnanandhaa", "25059530", 2700),
            "2",
            "*",
            10,
            (300, 400, 300),
        ),
    ]
    t = event_table("E", games, EventRules(format="swiss", points_before=(("Giri", 0.5),)))
    assert [r.key for r in t.rows] == ["fide:25059530", "anish giri"]
    prag = t.rows[0]
    # the latest round's name and rating; one player for both spellings
    assert (prag.name, prag.rating, prag.points, prag.live) == (
        "Rameshbabu Praggnanandhaa",
        2700,
        1.0,
        True,
    )
    # "Giri" is "Giri, Anish": the half point carried in is his
    assert (t.rows[1].name, t.rows[1].points) == ("Giri, Anish", 0.5)


def test_an_event_without_rules_gets_standings_without_odds() -> None:
    games = [board("Alpha, Ann", "Beta, Bob", "1-0"), board("Gamma, Gil", "Delta, Dan")]
    t = event_table("E", games, EventRules())
    assert t.sims == 0 and all(r.win is None and r.win_se is None for r in t.rows)
    assert t.note is not None and "no odds" in t.note
    assert t.rows[0].name == "Alpha, Ann"


def test_players_without_rating_get_the_fields_mean_and_a_note() -> None:
    games = [
        GameEntry("b1", p("X", rating=2000), p("Y", rating=0), "1", "*", 0),
        GameEntry("b2", p("Z", rating=2200), p("W", rating=0), "1", "*", 0),
    ]
    t = event_table("E", games, EventRules(format="swiss", sims=1000))
    assert t.note is not None and "2 players without a rating counted at 2100" in t.note


def test_unknown_players_and_bad_rules_are_refused() -> None:
    games = [board("?", "Beta, Bob", "1-0"), board("Gamma, Gil", "Delta, Dan", "1-0")]
    t = event_table("E", games, EventRules())
    assert {r.name for r in t.rows} == {"Gamma, Gil", "Delta, Dan"}
    with pytest.raises(ValueError, match="tie-break"):
        EventRules(tiebreaks=("XX",))
    with pytest.raises(ValueError, match="multiple of 1/2"):
        EventRules(points_before=(("A", 1.25),))


def test_round_numbers() -> None:
    assert [round_number(x) for x in ("5", "5.1", " 12 ", "?", None, "")] == [
        5,
        5,
        12,
        None,
        None,
        None,
    ]
    assert DEFAULT_DRAW_RATE == tournament_odds.DEFAULT_DRAW_RATE


def test_entry_of_a_board_takes_the_last_evaluated_position() -> None:
    t = BoardRegistry(engine_rating=2860.0)
    snap = GameSnapshot(
        source="t",
        white=PlayerInfo("Alpha, Ann", rating=2700),
        black=PlayerInfo("Beta, Bob", rating=2650),
        moves=("e4", "e5", "Nf3"),
        result="*",
        event="Open",
        round="3.1",
    )
    bid = t.apply(snap).board_id
    assert bid is not None
    g = t.board(bid)
    t.record_eval(bid, 2, g.fen_at(2), Evaluation(cp=40, wdl=(200, 700, 100)))
    e = entry_of(g)
    assert (e.round, e.plies, e.result, e.wdl) == ("3", 3, "*", (200.0, 700.0, 100.0))
    t.record_eval(bid, 3, g.fen_at(3), Evaluation(cp=90, wdl=(400, 550, 50)))
    assert entry_of(g).wdl == (400.0, 550.0, 50.0)
    t.apply(GameSnapshot(**{**snap.__dict__, "result": "1-0"}))
    assert entry_of(g).result == "1-0" and entry_of(g).wdl is None


def test_games_not_started_use_the_human_models_ratings_only_layer() -> None:
    """With a human W/D/L model, games not started are simulated from its
    ratings-only layer (White's advantage, its draw rate by level and gap),
    the same model the boards' live chances start from: the odds are the
    exact enumeration's with those W/D/L."""
    prior = toy_prior()
    games = [
        board("Alpha, Ann", "Beta, Bob", "1-0", rnd="1"),
        board("Gamma, Gil", "Delta, Dan", "1/2-1/2", rnd="1"),
        board("Alpha, Ann", "Gamma, Gil", rnd="2", plies=0),
        board("Beta, Bob", "Delta, Dan", rnd="2", plies=0),
    ]
    rules = EventRules(format="round-robin", sims=40_000, seed=5)
    t = event_table("RR", games, rules, prior)
    A, B, C, D = (normalise_name(n) for n in RATINGS)
    ratings = {normalise_name(n): float(r) for n, r in RATINGS.items()}
    left = [(A, C), (B, D), (A, D), (B, C)]
    exact = exact_win_odds(
        [A, B, C, D],
        ratings,
        [Result.game(A, B, "1-0"), Result.game(C, D, "1/2-1/2")],
        [(w, b, prior.probabilities(ratings[w], ratings[b])) for w, b in left],
        tiebreaks=("DE", "SB", "WIN"),
    )
    assert_near_exact(t, exact)
    assert exact == exact_win_odds(
        [A, B, C, D],
        ratings,
        [Result.game(A, B, "1-0"), Result.game(C, D, "1/2-1/2")],
        [],
        left,
        tiebreaks=("DE", "SB", "WIN"),
        prior=prior,
    )
    # the boards' own model is taken when the event names none
    with_board_prior = [dataclasses.replace(g, prior=prior) for g in games]
    again = event_table("RR", with_board_prior, rules)
    assert [win(r) for r in again.rows] == [win(r) for r in t.rows]
    # and it differs from the draw-rate default
    default = event_table("RR", games, rules)
    assert [win(r) for r in default.rows] != [win(r) for r in t.rows]


def test_entry_of_takes_the_chances_the_board_shows() -> None:
    """A board with a human W/D/L model hands the table the model's chances,
    not the engine's, and its ratings-only layer for games not started."""
    human = toy_wdl_model()
    t = BoardRegistry(engine_rating=2860.0, wdl_model=human)
    snap = GameSnapshot(
        source="t",
        white=PlayerInfo("Alpha, Ann", rating=2700),
        black=PlayerInfo("Beta, Bob", rating=2650),
        moves=("e4", "e5", "Nf3"),
        event="Open",
        round="3",
    )
    bid = t.apply(snap).board_id
    assert bid is not None
    g = t.board(bid)
    ev = Evaluation(cp=40, wdl=(200, 700, 100))
    t.record_eval(bid, 2, g.fen_at(2), ev)
    e = entry_of(g)
    want = human.wdl(ev, 2, 2700.0, 2650.0, True)
    assert e.wdl == tuple(float(x) for x in want) != (200.0, 700.0, 100.0)
    assert e.prior is human.prior


def test_rows_carry_perceived_and_form_over_the_players_games() -> None:
    """Each row: the calibrated perceived rating and the form over all the
    player's games of the event, combined by the model; null form without
    a rating; labels of the model's range."""
    model = forward_model()
    alpha, beta = (30, 150_000), (28, 110_000)  # (moves, centi_sum) per game
    games = [
        dataclasses.replace(
            board("Alpha, Ann", "Beta, Bob", "1-0", rnd="1"),
            white_moves=alpha,
            black_moves=beta,
            model=model,
        ),
        dataclasses.replace(
            board("Gamma, Gil", "Alpha, Ann", rnd="2"),
            white_moves=(20, 90_000),
            black_moves=(21, 100_000),
            model=model,
        ),
    ]
    rows = keyed(event_table("E", games, EventRules()))
    a = rows["Alpha, Ann"]
    assert a.perceived == model.perceived([alpha, (21, 100_000)])
    assert a.form == model.form([alpha, (21, 100_000)], 2700.0)
    assert a.form is not None and a.form.moves == 51
    assert rows["Beta, Bob"].form == model.form([beta], 2650.0)
    assert rows["Beta, Bob"].perceived == model.estimate(*beta)
    assert a.label is None and a.model is model
    # an unrated player: a perceived rating, no form
    unrated = [
        dataclasses.replace(
            GameEntry("x", p("Alpha, Ann"), PlayerInfo("New, Ned"), "1", "*", 20),
            white_moves=alpha,
            black_moves=(10, 20_000),
            model=model,
        )
    ]
    ned = keyed(event_table("E", unrated, EventRules()))["New, Ned"]
    assert ned.form is None and ned.perceived == model.estimate(10, 20_000)
    assert ned.label == model.range_label(ned.perceived.rating)


SIX = {f"P{k}, X": 2700 - 50 * k for k in range(6)}


def six(name: str) -> PlayerInfo:
    return PlayerInfo(name, rating=SIX[name])


def test_a_swiss_with_its_rounds_known_is_simulated_to_the_last_round() -> None:
    from livegain.core.swiss_odds import swiss_win_odds

    n = list(SIX)
    games = [
        GameEntry("1a", six(n[0]), six(n[3]), "1", "1-0", 40),
        GameEntry("1b", six(n[4]), six(n[1]), "1", "1/2-1/2", 40),
        GameEntry("1c", six(n[2]), six(n[5]), "1", "0-1", 40),
        GameEntry("2a", six(n[5]), six(n[0]), "2", "*", 30, (200, 500, 300)),
        GameEntry("2b", six(n[1]), six(n[2]), "2", "*", 0),
        GameEntry("2c", six(n[3]), six(n[4]), "2", "1-0", 50),
    ]
    rules = EventRules(format="swiss", rounds=4, top_k=2, sims=4_000, seed=7)
    t = event_table("Open", games, rules)
    assert (t.round, t.rounds, t.top_k, t.sims) == (2, 4, 2, 4_000)
    assert not any("only round" in note for note in t.notes)
    keys = {r.name: r.key for r in t.rows}
    direct = swiss_win_odds(
        sorted(keys.values()),
        {keys[name]: float(r) for name, r in SIX.items()},
        [
            Result.game(keys[n[0]], keys[n[3]], "1-0", 1),
            Result.game(keys[n[4]], keys[n[1]], "1/2-1/2", 1),
            Result.game(keys[n[2]], keys[n[5]], "0-1", 1),
            Result.game(keys[n[3]], keys[n[4]], "1-0", 2),
        ],
        [(keys[n[5]], keys[n[0]], (0.2, 0.5, 0.3))],
        [(keys[n[1]], keys[n[2]])],
        round=2,
        rounds_total=4,
        sims=4_000,
        seed=7,
        top_k=2,
        tiebreaks=("BH-C1", "BH", "SB"),
    )
    for r in t.rows:
        c = direct[r.key]
        assert (r.win, r.win_se, r.top, r.top_se) == (c.p_first, c.se_first, c.p_top, c.se_top)
    assert sum(r.win or 0.0 for r in t.rows) == pytest.approx(1.0)
    assert sum(r.top or 0.0 for r in t.rows) == pytest.approx(2.0)


def test_a_swiss_over_its_last_round_has_a_certain_winner() -> None:
    n = list(SIX)
    games = [
        GameEntry("1a", six(n[0]), six(n[3]), "1", "1-0", 40),
        GameEntry("1b", six(n[4]), six(n[1]), "1", "1/2-1/2", 40),
        GameEntry("1c", six(n[2]), six(n[5]), "1", "0-1", 40),
    ]
    t = event_table("Open", games, EventRules(format="swiss", rounds=1, sims=1_000))
    rows = keyed(t)
    assert (rows[n[0]].win, rows[n[5]].win, rows[n[1]].win) == (0.5, 0.5, 0.0)
    # rounds unknown, or custom scoring: the current round only, and the table says so
    for rules in (
        EventRules(format="swiss", sims=1_000),
        EventRules(
            format="swiss",
            rounds=3,
            sims=1_000,
            scoring=Scoring.from_lichess(
                {"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1}}
            ),
        ),
    ):
        t = event_table("Open", games, rules)
        assert t.top_k is None and all(r.top is None for r in t.rows)
        assert t.notes[0].startswith("Swiss: only round 1 is simulated")


def test_a_swiss_with_points_carried_in_is_simulated_to_its_end_too() -> None:
    carried = (("Alpha", 3.5), ("Beta, Bob", 3.0), ("Gamma", 2.0), ("Delta, Dan", 2.0))
    games = [
        board("Alpha, Ann", "Gamma, Gil", "0-1", rnd="5"),
        board("Beta, Bob", "Delta, Dan", rnd="5", wdl=(500, 300, 200)),
    ]
    rules = EventRules(format="swiss", points_before=carried, rounds=6, top_k=2, sims=2_000)
    t = event_table("Open", games, rules)
    assert (t.round, t.rounds, t.top_k) == (5, 6, 2)
    assert not any("only round" in note for note in t.notes)
    rows = keyed(t)
    assert (rows["Alpha, Ann"].points, rows["Alpha, Ann"].games) == (3.5, 5)
    assert sum(r.top or 0.0 for r in t.rows) == pytest.approx(2.0)
