"""`livegain fit` and `livegain validate` end to end on a generated sample of
rated games whose truth is known: each player's moves lose centipawns at a
rate set by his rating, so a sound estimator must recover the ratings and an
honest 95 % interval must hold them about 95 % of the time."""

from __future__ import annotations

import json
import random
from pathlib import Path

import chess
import chess.pgn
import pytest

from livegain.batch.validity import split_part
from livegain.cli import main
from livegain.models.perceived import find_perceived_model, load_perceived_models


def rated_game(rng: random.Random, number: int) -> str:
    """A legal random game between two rated players with [%eval] comments:
    each move loses Exp(mean) centipawns (mean halving every 350 points of
    rating) with probability 0.6, else nothing."""
    elos = [int(rng.gauss(1500, 300)), int(rng.gauss(1500, 300))]
    game = chess.pgn.Game()
    game.headers["Event"] = "Generated rated sample"
    game.headers["Site"] = f"https://example.org/game/{number}"
    game.headers["White"] = f"W{number}"
    game.headers["Black"] = f"B{number}"
    game.headers["WhiteElo"] = str(elos[0])
    game.headers["BlackElo"] = str(elos[1])
    score = 20
    game.comment = f"[%eval {score / 100:.2f}]"
    node: chess.pgn.GameNode = game
    board = chess.Board()
    for ply in range(rng.randint(30, 90)):
        moves = list(board.legal_moves)
        if not moves:
            break
        move = rng.choice(moves)
        board.push(move)
        node = node.add_main_variation(move)
        if board.is_game_over():
            break
        mover = ply % 2
        mean = 60.0 * 2.0 ** (-(elos[mover] - 1500) / 350.0)
        loss = int(rng.expovariate(1.0 / mean)) if rng.random() < 0.6 else 0
        score += -loss if mover == 0 else loss
        score = max(-600, min(600, score))
        node.comment = f"[%eval {score / 100:.2f}]"
    # the result follows the last evaluation: White wins with the win%-curve's
    # chance of the last score, a quarter of the games are drawn
    if rng.random() < 0.25:
        game.headers["Result"] = "1/2-1/2"
    else:
        white_wins = rng.random() < 1.0 / (1.0 + 10.0 ** (-score / 160.0))
        game.headers["Result"] = "1-0" if white_wins else "0-1"
    return str(game)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(2026)
    path = tmp_path_factory.mktemp("rated") / "sample.pgn"
    path.write_text("\n\n".join(rated_game(rng, k) for k in range(900)) + "\n")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def model_file(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("model") / "perceived.toml"
    code = main(["fit", str(sample), "--output", str(target), "--name", "sample"])
    assert code == 0
    return target


def test_split_is_stable_and_about_30_percent(sample: Path) -> None:
    from livegain.batch.pgnio import read_pgn_games

    parts = [split_part(dict(g.headers)) for g in read_pgn_games(sample)]
    held = parts.count("held-out") / len(parts)
    assert 0.25 < held < 0.35
    assert split_part({"Site": "https://example.org/game/1"}) == split_part(
        {"Site": "https://example.org/game/1", "White": "someone else"}
    )


def test_a_player_game_has_one_key_whoever_reads_it() -> None:
    """Two readers of a file (a bench writing a figure per player-game,
    another reading it) meet on the key: the same game and side give the
    same key; the other side, another game of the same event, or another
    round of the same pairing give another."""
    from livegain.batch.validity import player_game_key

    game = {"Event": "Open", "Site": "Town", "White": "A", "Black": "B", "Round": "3"}
    assert player_game_key(game, True) == player_game_key(dict(game), True)
    others = [
        player_game_key(game, False),
        player_game_key({**game, "White": "C"}, True),
        player_game_key({**game, "Round": "4"}, True),
    ]
    assert player_game_key(game, True) not in others
    assert len(set(others)) == 3


def test_fit_writes_a_model_with_provenance(model_file: Path) -> None:
    [model] = load_perceived_models(model_file)
    assert model.name == "sample"
    p = model.provenance
    assert p["evals"] == "pgn" and p["part"] == "calibration" and p["source"] == "sample.pgn"
    assert p["command"].startswith("livegain fit ")
    assert int(p["games"]) > 500
    # the model for PGN evaluations is found by its source
    found, why = find_perceived_model("pgn", path=model_file)
    assert found == model and "sample" in why
    # an engine without its own model falls back to it, and says so
    found, why = find_perceived_model("engine", "Stockfish 15.1", "depth 10", model_file)
    assert found == model and "not validated" in why


def test_validate_recovers_known_ratings(
    sample: Path, model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plots = tmp_path / "plots"
    code, out, err = run(
        ["validate", str(sample), "--models", str(model_file), "--json", "--plots", str(plots)],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    cal = data["overall"]["perceived"]
    form = data["overall"]["form"]
    a4 = data["overall"]["algorithm4"]
    assert cal["count"] == data["player_games"] > 400
    # held-out player-games: the truth is recovered and the interval is honest
    assert 0.90 <= cal["coverage"] <= 0.99
    assert abs(cal["bias"]) < 60
    assert cal["spearman"] > 0.5
    assert cal["mae_ratio"] < 0.85
    # Algorithm 4 against a 2860 engine: far off, and its interval rarely holds the rating
    assert a4["bias"] > 300 and a4["coverage"] < 0.5
    # form: the rating updated by the moves stays near the rating, in every bin
    # (here the moves say more than the rating's prior spread allows for, so
    # form follows them closely, curvature of the truth included)
    assert form["count"] == cal["count"] and abs(form["bias"]) < 40
    for band in data["by_rating"]:
        if band["form"]["count"] >= 50:
            assert abs(band["form"]["bias"]) < 60, band
            # the confidence belt holds the rating at every level, not only overall
            assert band["perceived"]["coverage"] >= 0.85, band
    assert {b["from"] for b in data["by_rating"]} >= {1200, 1400, 1600}
    assert [b["from"] for b in data["by_moves"]][:2] == [10, 15]  # games of 15+ moves
    # live: after each checkpoint's first n moves the interval is as honest
    live = {row["after"]: row["perceived"] for row in data["live"]}
    assert set(live) >= {1, 5, 10, 20}
    for n in (1, 5, 10, 20):
        assert 0.88 <= live[n]["coverage"] <= 1.0
    assert live[20]["spearman"] > live[5]["spearman"] > live[1]["spearman"]
    assert sorted(Path(p).name for p in data["plots"]) == [
        "coverage-by-rating.png",
        "estimate-vs-rating.png",
        "width-vs-moves.png",
    ]
    for p in data["plots"]:
        assert Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validate_tables_and_by_player(
    sample: Path, model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["validate", str(sample), "--models", str(model_file), "--games", "60"]
    argv += ["--by-player", "--min-games", "1"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "60 games (held-out part" in out
    assert "Perceived (moves alone)" in out and "Form (rating + moves)" in out
    assert "Algorithm 4 (paper)" in out
    assert "by rating bin" in out and "Each player over his games of an event" in out
    assert "Events of mean rating" in out
    # the same split in JSON: each player-event in the part its event's mean
    # rating falls in, every one counted once, each part's figures its own
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    events = json.loads(out)["by_player_event"]
    players, parts = events["players"], events["by_event_rating"]
    assert sum(part["player_events"] for part in parts) == len(players)
    for part in parts:
        low, high = part["event_rating"]
        inside = [
            p for p in players if low <= p["event_rating"] < (high if high is not None else 1e9)
        ]
        assert len(inside) == part["player_events"]
        mae = sum(abs(p["rating"] - p["performance"]) for p in inside) / len(inside)
        assert part["mae_rating_vs_performance"] == pytest.approx(mae, abs=0.2)
    # players with 7 games in one event: none in this sample, said in one line
    code, _, err = run(
        ["validate", str(sample), "--models", str(model_file), "--by-player"], capsys
    )
    assert code == 2 and "7 or more rated games in one event" in err


def test_games_option_is_a_fixed_sample(
    sample: Path, model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = []
    for _ in range(2):
        code, out, _ = run(
            ["validate", str(sample), "--models", str(model_file), "--games", "50", "--json"],
            capsys,
        )
        assert code == 0
        data = json.loads(out)
        assert data["games"] == 50
        counts.append(data["overall"]["perceived"])
    assert counts[0] == counts[1]


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["validate", str(tmp_path / "missing.pgn")], capsys)
    assert code == 2 and "no such file" in err and "Traceback" not in err
    code, _, err = run(["fit", str(tmp_path / "missing.pgn"), "--games", "0"], capsys)
    assert code == 2 and err.count("\n") == 1


def test_fit_refuses_too_few_games(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["fit", str(sample), "--games", "10"], capsys)
    assert code == 2 and "at least 50" in err


def test_shipped_models_are_picked_by_evaluation_source_and_scale() -> None:
    """The shipped models: lichess's PGN evaluations and Stockfish 15.1 at
    depth 10 on the lichess scale, Stockfish 15.1 at depth 10 on the FIDE
    scale (both depth-10 models also validated at depth 12, the service's
    default, docs/validity.md); other limits get the nearest one of the
    scale, labelled as not validated."""
    pgn, why = find_perceived_model("pgn", scale="lichess")
    assert pgn is not None and pgn.provenance["evals"] == "pgn" and "not validated" not in why
    fide, why = find_perceived_model("engine", "Stockfish 15.1", "depth 10", scale="fide")
    assert fide is not None and fide.scale == "fide" and why == f"model {fide.name}"
    d12, why = find_perceived_model("engine", "Stockfish 15.1", "depth 12", scale="fide")
    assert d12 == fide and "validated at depth 12" in why
    d20, why = find_perceived_model("engine", "Stockfish 15.1", "depth 20", scale="fide")
    assert d20 == fide and "not validated" in why
    online, why = find_perceived_model("engine", "Stockfish 15.1", "depth 10", scale="lichess")
    assert online is not None and online.scale == "lichess" and why == f"model {online.name}"
    online12, why = find_perceived_model("engine", "Stockfish 15.1", "depth 12", scale="lichess")
    assert online12 == online and "validated at depth 12" in why and "not" not in why
    # lichess's evaluations on the FIDE scale: no such model, the lichess one, said so
    other, why = find_perceived_model("pgn", scale="fide")
    assert other == pgn and "no fide-scale model" in why
    for m in (pgn, online):
        assert m.rating_low is not None and m.rating_high is not None
        assert 700 < m.rating_low < 1000 < 2200 < m.rating_high < 2600
        assert m.forward and m.provenance["command"].startswith("livegain fit ")
    assert fide.rating_low is not None and fide.rating_high is not None
    assert 2000 <= fide.rating_low < 2100 and 2700 < fide.rating_high < 2850
    assert fide.forward and fide.below_label == "not validated on FIDE games"


@pytest.fixture(scope="module")
def wdl_file(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("wdl") / "wdl.toml"
    code = main(["fit", str(sample), "--wdl", "--output", str(target), "--name", "sample-wdl"])
    assert code == 0
    return target


def test_fit_wdl_writes_prior_and_model_with_provenance(wdl_file: Path) -> None:
    from livegain.models.wdl import find_wdl_model, load_wdl_file

    [prior], [model] = load_wdl_file(wdl_file)
    # the sample's Site is a URL: online games, the rapid kind
    assert prior.kind == model.kind == "online-rapid"
    assert model.name == "sample-wdl" and model.provenance["evals"] == "pgn"
    assert model.provenance["command"].startswith("livegain fit ")
    assert prior.provenance["part"] == "calibration" and int(prior.provenance["games"]) > 500
    # a quarter of the sample is drawn
    assert 0.18 < prior.draw_rate < 0.32
    found, why = find_wdl_model("pgn", "online-rapid", path=wdl_file)
    assert found == model and why == "model sample-wdl"
    # no model of the classical kind: the rapid one is taken, and it says so
    found, why = find_wdl_model("pgn", "classical-otb", path=wdl_file)
    assert found == model and "fitted on online-rapid games, no classical-otb model" in why


def test_validate_wdl_beats_ratings_and_the_curve(
    sample: Path, wdl_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample's results follow its last evaluation: the fitted chances
    must predict them better than the ratings alone (which say little here)
    and than the win%-curve with its fitted draw share, and be calibrated."""
    plots = tmp_path / "plots"
    code, out, err = run(
        [
            "validate",
            str(sample),
            "--wdl",
            "--wdl-models",
            str(wdl_file),
            "--json",
            "--plots",
            str(plots),
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    rated = {row["ply"]: row for row in data["by_ply"] if row["ratings_known"] == "both"}
    assert set(rated) >= {20, 40}
    for ply in (20, 40):
        row = rated[ply]
        assert row["shown"]["count"] > 100
        assert row["shown"]["log_loss"] < row["ratings"]["log_loss"]
        assert row["shown"]["log_loss"] < row["curve"]["log_loss"]
        assert row["shown"]["calibration_error"] < 0.1
        assert row["engine"] is None  # PGN evaluations carry no engine W/D/L
    unknown = [row for row in data["by_ply"] if row["ratings_known"] == "unknown"]
    assert unknown and all(r["shown"]["log_loss"] < r["curve"]["log_loss"] for r in unknown[:2])
    [plot] = data["plots"]
    assert Path(plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = run(["validate", str(sample), "--wdl", "--wdl-models", str(wdl_file)], capsys)
    assert code == 0 and "Human (shown)" in out and "Win%-curve" in out
