"""`livegain odds ...` through livegain.cli.main, output captured."""

from __future__ import annotations

import json
from typing import Any

import pytest

from livegain.cli import main
from livegain.core.odds import GameOdds, game_probabilities, match_odds

CC = ["--rating-a", "2834.7", "--rating-b", "2832.3", "--draw-rate", "0.6"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict)
    return data


def test_carlsen_caruana_match(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "odds", "match", *CC, "--games", "12")
    assert [round(100 * float(data[k]), 1) for k in ("a_wins", "draw", "b_wins")] == [  # type: ignore[arg-type]
        42.4,
        18.1,
        39.5,
    ]
    assert data["games_left"] == 12
    assert main(["odds", "match", *CC, "--games", "12"]) == 0
    out = capsys.readouterr().out
    assert "42.4%" in out and "18.1%" in out and "39.5%" in out


def test_match_from_a_score_with_a_game_in_progress(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys, "odds", "match", *CC, "--games", "12", "--score-a", "6", "--score-b", "5",
        "--current", "0.1,0.7,0.2",
    )  # fmt: skip
    assert data["games_played"] == 11
    assert data["games_left"] == 1
    # With one game left and a one-point lead, B can only draw the match by winning it.
    assert data["b_wins"] == 0
    assert float(data["draw"]) == pytest.approx(0.2)  # type: ignore[arg-type]
    g = game_probabilities(2.4, 0.6)
    want = match_odds(g, 1, 6, 5, GameOdds(0.1, 0.7, 0.2))
    assert float(data["a_wins"]) == pytest.approx(want.a_wins)  # type: ignore[arg-type]


def test_game(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "odds", "game", *CC)
    assert round(float(data["win"]), 3) == 0.203  # type: ignore[arg-type]
    assert round(float(data["loss"]), 3) == 0.197  # type: ignore[arg-type]
    assert (
        main(["odds", "game", "--rating-a", "2400", "--rating-b", "2000", "--draw-rate", "0.9"])
        == 0
    )
    assert "draw rate lowered" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--games", "0"], "--games must be positive"),
        (["--games", "12", "--score-a", "6.5", "--score-b", "6"], "impossible"),
        (["--games", "12", "--score-a", "7", "--score-b", "6"], "more than --games 12"),
        (["--games", "12", "--score-a", "0.3"], "multiple of 0.5"),
        (["--games", "12", "--current", "0.5,0.5"], "expected W,D,L"),
        (["--games", "12", "--current", "0.5,0.5,0.5"], "expected 1"),
        (["--games", "12", "--current", "a,b,c"], "not three numbers"),
        (
            ["--games", "2", "--score-a", "1", "--score-b", "1", "--current", "1,0,0"],
            "match is over",
        ),
    ],
)
def test_bad_input_one_line_error(
    capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    code = main(["odds", "match", *CC, *extra])
    captured = capsys.readouterr()
    assert code != 0
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith("livegain odds: error:")
    assert needle in lines[0]


def test_bad_draw_rate(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["odds", "game", "--rating-a", "1", "--rating-b", "2", "--draw-rate", "1.5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "--draw-rate must lie in [0, 1]" in err[0]


@pytest.fixture
def human_prior(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A W/D/L model file of its own: a classical prior with a White advantage
    and a live model for Stockfish 15.1 at depth 10."""
    from livegain.core.human_wdl import IDENTITY_KNOT, HumanWdlModel, Knot, RatingsPrior
    from livegain.models.wdl import store_wdl

    prior = RatingsPrior("classical-otb", 35.0, 450.0, -0.6, 0.6, -1.7, 0.39)
    knots = (IDENTITY_KNOT, Knot(40, 1.0, 2.0, 1.0, 1.0, 0.0, 0.3, 0.3, 0.05))
    live = HumanWdlModel(
        "sf-d10",
        "engine",
        prior,
        knots,
        knots,
        {"evals": "engine", "engine": "Stockfish 15.1", "limit": "depth 10"},
    )
    path = tmp_path / "wdl.toml"
    store_wdl(prior, live, path)
    monkeypatch.setenv("LIVEGAIN_WDL_MODELS", str(path))
    return live


RATINGS = ["--rating-a", "2834.7", "--rating-b", "2832.3"]


def test_human_game_depends_on_colour(capsys: pytest.CaptureFixture[str], human_prior: Any) -> None:
    """One game from the human prior: A's chances as White are B's as Black
    for swapped ratings, and White's advantage shows."""
    white = run_json(capsys, "odds", "game", *RATINGS, "--wdl", "human")
    black = run_json(capsys, "odds", "game", *RATINGS, "--wdl", "human", "--a-colour", "black")
    w, d, lo = human_prior.prior.probabilities(2834.7, 2832.3)
    assert (white["win"], white["draw"], white["loss"]) == pytest.approx((w, d, lo))
    w, d, lo = human_prior.prior.probabilities(2832.3, 2834.7)
    assert (black["win"], black["draw"], black["loss"]) == pytest.approx((lo, d, w))
    assert float(white["expected"]) > 0.5 > float(black["expected"])  # type: ignore[arg-type]


def test_human_match_alternates_colours(
    capsys: pytest.CaptureFixture[str], human_prior: Any
) -> None:
    """A match from the human prior plays each game with its colours (A White
    in odd games by default), and a game in progress from its evaluation goes
    through the live model of the engine named."""
    from livegain.core.evaluation import Evaluation
    from livegain.core.odds import match_odds_games

    prior = human_prior.prior
    as_white = GameOdds(*prior.probabilities(2834.7, 2832.3))
    lo, d, w = prior.probabilities(2832.3, 2834.7)
    as_black = GameOdds(w, d, lo)
    data = run_json(capsys, "odds", "match", *RATINGS, "--games", "4", "--wdl", "human")
    want = match_odds_games([as_white, as_black, as_white, as_black])
    assert (data["a_wins"], data["draw"], data["b_wins"]) == pytest.approx(
        (want.a_wins, want.draw, want.b_wins)
    )
    # after 3 games (A White in game 4 only if he had Black in game 1)
    data = run_json(
        capsys, "odds", "match", *RATINGS, "--games", "4", "--wdl", "human",
        "--a-colour", "black", "--score-a", "1.5", "--score-b", "1.5",
        "--current-eval", "1.2", "--current-ply", "40",
        "--current-engine", "Stockfish 15.1 depth 10",
    )  # fmt: skip
    w, d, lo = human_prior.wdl(Evaluation(cp=120), 40, 2834.7, 2832.3)
    assert data["current"]["win"] == pytest.approx(w / 1000)  # type: ignore[index]
    assert float(data["a_wins"]) == pytest.approx(w / 1000)  # type: ignore[arg-type]
    assert "sf-d10" in str(data["current_model"])


def test_human_needs_a_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIVEGAIN_WDL_MODELS", str(tmp_path / "none.toml"))
    assert main(["odds", "game", *RATINGS, "--wdl", "human"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no human W/D/L prior for classical-otb" in err[0]
    assert main(["odds", "game", *RATINGS]) != 0
    assert "--draw-rate is required" in capsys.readouterr().err
