"""`livegain analyze` end to end: outputs, multi-game files, bad input."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import livegain
from livegain.batch.pgn_evals import annotated_games_from_pgn
from livegain.batch.pgnio import read_pgn_text
from livegain.cli import main

GOTC_PATH = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"

GOTC = str(GOTC_PATH)


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def random_game(
    rng: random.Random, white: str, black: str, elos: tuple[int, int], plies: int
) -> str:
    """A legal random game with [%eval] comments (a random walk of scores)."""
    game = chess.pgn.Game()
    game.headers["Event"] = "Test Open"
    game.headers["White"] = white
    game.headers["Black"] = black
    game.headers["WhiteElo"] = str(elos[0])
    game.headers["BlackElo"] = str(elos[1])
    score = rng.randint(-30, 30)
    game.comment = f"[%eval {score / 100:.2f}]"
    node: chess.pgn.GameNode = game
    board = chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves or board.is_game_over():
            break
        move = rng.choice(moves)
        board.push(move)
        node = node.add_main_variation(move)
        if board.is_checkmate():
            break  # no eval: the checkmate rule fills it in
        score += rng.choice([0, 0, 0, -rng.randint(1, 80), rng.randint(1, 20)])
        score = max(-3900, min(3900, score))
        node.comment = f"[%eval {score / 100:.2f}]"
    game.headers["Result"] = "*"
    return str(game)


@pytest.fixture
def tournament_pgn(tmp_path: Path) -> Path:
    rng = random.Random(7)
    players = {"Alpha": 2700, "Bravo": 2600, "Charlie": 2500, "Delta": 2400}
    names = list(players)
    games = []
    for _round in range(2):
        for i in range(4):
            for j in range(i + 1, 4):
                w, b = (names[i], names[j]) if _round == 0 else (names[j], names[i])
                games.append(random_game(rng, w, b, (players[w], players[b]), 40))
    path = tmp_path / "event.pgn"
    path.write_text("\n\n".join(games) + "\n")
    return path


def test_json_game_of_the_century(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["analyze", GOTC, "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert set(data) >= {"engine", "calibration", "games", "players", "tournament", "skipped"}
    assert data["engine"]["rating"] == 2860.0
    game = data["games"][0]
    assert game["start_score"] == 13
    first = dict(game["plies"][0])
    wdl = first.pop("wdl")
    assert first == {
        "ply": 1,
        "move": "1.Nf3",
        "mover": "white",
        "score": 12,
        "gain": -1,
        "engine_wdl": None,  # [%eval] comments carry no engine W/D/L
    }
    assert set(wdl) == {"win", "draw", "loss"} and sum(wdl.values()) == 1000
    assert game["plies"][-1]["move"] == "41...Rc2#"
    names = [p["name"] for p in data["players"]]
    assert names == ["Fischer, Robert James", "Byrne, Donald"]
    # one game, no Elo tags: Algorithm 2 gives relative values only
    t = data["tournament"]
    assert t["ratings"]["Byrne, Donald"]["estimated"] is None
    assert t["engine_by_elo"] is None


def test_engine_rating_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        ["analyze", GOTC, "--evals", "pgn", "--json", "--engine-rating", "3000"], capsys
    )
    assert code == 0
    game = json.loads(out)["games"][0]
    assert round(game["black"]["algorithm4"]["rating"]) == 3000 - 43


def test_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["analyze", GOTC, "--evals", "pgn", "--trace"], capsys)
    assert code == 0
    assert "Algorithm 1" in out and "0.655" in out
    assert "11...Na4" in out and "2060*" in out


def test_csv(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["analyze", GOTC, "--evals", "pgn", "--csv"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["player"] for r in rows] == ["Fischer, Robert James", "Byrne, Donald"]
    assert rows[1]["difference"] == "-185.4" and rows[1]["moves"] == "41"
    a4 = [float(rows[0][k]) for k in ("algorithm4_low", "algorithm4", "algorithm4_high")]
    assert a4[0] < a4[1] < a4[2]
    assert float(rows[0]["low"]) < float(rows[0]["perceived"]) < float(rows[0]["high"])


def test_output_pgn_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_pgn = tmp_path / "annotated.pgn"
    code, first, _ = run_cli(
        ["analyze", GOTC, "--evals", "pgn", "--json", "--output-pgn", str(out_pgn)], capsys
    )
    assert code == 0
    text = out_pgn.read_text()
    assert "{ [%eval 0.13] }" in text
    assert "11. Bg5 { [%eval -1.09] gain -1.37 }" in text
    code, second, _ = run_cli(["analyze", str(out_pgn), "--evals", "pgn", "--json"], capsys)
    assert code == 0
    assert json.loads(first)["games"] == json.loads(second)["games"]


def test_tournament_file(tournament_pgn: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["analyze", str(tournament_pgn), "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert len(data["games"]) == 12
    players = {p["name"]: p for p in data["players"]}
    assert set(players) == {"Alpha", "Bravo", "Charlie", "Delta"}
    for p in players.values():
        assert p["games"] == 6
        assert p["interval_method"] == "games-cluster"
        for key in ("perceived", "algorithm4"):
            pr = p[key]
            assert pr["low"] <= pr["rating"] <= pr["high"]
    t = data["tournament"]
    assert t["pairing"] == "aggregate" and len(t["pairs"]) == 6 and t["converged"]
    estimated = [t["ratings"][n]["estimated"] for n in players]
    assert sum(estimated) / 4 == pytest.approx(2550, abs=0.2)  # mean of actual Elo
    assert data["players"][0]["tournament"] is not None
    e = t["engine_by_elo"]
    assert e["players"] == 4 and e["low"] < e["rating"] < e["high"]
    # Algorithm 3 by hand from the players' Elo and d_i
    by_hand = sum(p["elo"] - p["algorithm4"]["difference"] for p in players.values()) / 4
    assert e["rating"] == pytest.approx(by_hand, abs=0.2)
    # the pair method gives other d_ij but the same normalisation
    code, out, _ = run_cli(
        ["analyze", str(tournament_pgn), "--evals", "pgn", "--json", "--pairing", "pair"], capsys
    )
    pair = json.loads(out)["tournament"]
    assert pair["pairing"] == "pair"
    assert sum(pair["ratings"][n]["estimated"] for n in players) / 4 == pytest.approx(2550, abs=0.2)
    # readable output for many games: one row per game
    code, out, _ = run_cli(["analyze", str(tournament_pgn), "--evals", "pgn"], capsys)
    assert code == 0 and "Algorithm 3" in out and "White Alg. 4" in out


def test_bootstrap_is_reproducible(
    tournament_pgn: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for seed in ("0", "0", "5"):
        _, out, _ = run_cli(
            [
                *("analyze", str(tournament_pgn), "--evals", "pgn", "--json"),
                *("--seed", seed, "--interval", "bootstrap"),
            ],
            capsys,
        )
        players = json.loads(out)["players"]
        assert {p["interval_method"] for p in players} == {"bootstrap-games"}
        runs.append([p["algorithm4"] for p in players])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_missing_start_eval_skips_first_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nostart.pgn"
    path.write_text(
        '[White "A"]\n[Black "B"]\n\n1. e4 { [%eval 0.30] } e5 { [%eval 0.25] } '
        "2. Qh5 { [%eval -0.50] } Nc6 { [%eval -0.40] } 3. Bc4 { [%eval -0.45] } "
        "Nf6 { [%eval 5.00] } 4. Qxf7# 1-0\n"
    )
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    game = json.loads(out)["games"][0]
    assert game["start_score"] is None
    assert game["plies"][0]["gain"] is None
    # white: Qh5 (-75), Bc4 (-5), Qxf7# (checkmate, no eval -> +39.00: +3400)
    assert [t["gain"] for t in game["white"]["trace"]] == [-75, -5, 3400]
    assert [t["gain"] for t in game["black"]["trace"]] == [5, -10, -545]
    assert game["white"]["trace"][0]["ply"] == 3


def test_skips_games_without_evals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mixed.pgn"
    path.write_text(Path(GOTC).read_text() + '\n[White "X"]\n[Black "Y"]\n\n1. e4 e5 *\n')
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn", "--json"], capsys)
    assert code == 0
    assert "skipped game 2 (X - Y): no [%eval] annotations" in err
    assert json.loads(out)["skipped"] == ["game 2 (X - Y): no [%eval] annotations"]


BAD_INPUTS = {
    "missing": (None, "no such file"),
    "empty": ("", "no games found"),
    "garbage": ("this is not a chess game at all\n", "no games found"),
    "illegal": (
        '[White "A"]\n[Black "B"]\n\n1. e4 e5 *\n\n[White "C"]\n[Black "D"]\n\n'
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 Ke7 4. Qxf7 *\n",
        "game 2 (C - D): illegal move 4.Qxf7",
    ),
    "noevals": ('[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Nf3 *\n', "no [%eval] annotations"),
    "gap": (
        '[White "A"]\n[Black "B"]\n\n{ [%eval 0.2] } 1. e4 { [%eval 0.3] } e5 2. Nf3 '
        "{ [%eval 0.2] } *\n",
        "game 1 (A - B): no [%eval] after 1...e5 (ply 2)",
    ),
    "badeval": (
        '[White "A"]\n[Black "B"]\n\n1. e4 { [%eval 0.2] } e5 { [%eval abc] } *\n',
        "game 1 (A - B): unreadable [%eval] after 1...e5 (ply 2)",
    ),
    "badfen": (
        '[White "A"]\n[Black "B"]\n[SetUp "1"]\n[FEN "garbage fen"]\n\n1. e4 *\n',
        "game 1 (A - B): invalid FEN 'garbage fen'",
    ),
    "wrongside": (
        '[White "A"]\n[Black "B"]\n\n1. e4 { [%eval 0.2] } Nf3 { [%eval 0.1] } *\n',
        "game 1 (A - B): illegal move 1...Nf3",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_INPUTS[case]
    path = tmp_path / f"{case}.pgn"
    if text is not None:
        path.write_text(text)
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn"], capsys)
    assert code != 0
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("livegain analyze: error: ")
    assert message in lines[0]
    assert "Traceback" not in err


def test_directory_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["analyze", str(tmp_path), "--evals", "pgn"], capsys)
    assert code != 0 and "is a directory" in err
    code, _, err = run_cli(["analyze", GOTC, "--depth", "0"], capsys)
    assert code != 0 and "--depth must be at least 1" in err


def test_subprocess_error_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "livegain.cli",
            "analyze",
            str(tmp_path / "nope.pgn"),
            "--evals",
            "pgn",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0 and "no such file" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_engine_mode_bad_engine(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_cli(
        ["analyze", GOTC, "--engine", str(tmp_path / "no-engine"), "--depth", "6"], capsys
    )
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.engine
def test_engine_mode(stockfish: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = tmp_path / "short.pgn"
    game = chess.pgn.read_game(io.StringIO(Path(GOTC).read_text()))
    assert game is not None
    node: Any = game
    for _ in range(12):
        node = node.variation(0)
    node.variations = []
    short.write_text(str(game))
    argv = [
        "analyze",
        str(short),
        "--engine",
        stockfish,
        "--depth",
        "6",
        "--workers",
        "1",
        "--json",
    ]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    data = json.loads(out)
    g = data["games"][0]
    assert len(g["plies"]) == 12
    assert g["white"]["perceived"]["moves"] == 6 == g["black"]["perceived"]["moves"]
    assert all(abs(p["score"]) < 300 for p in g["plies"])  # a quiet opening, engine's own scores
    # the engine's own W/D/L (UCI_ShowWDL) beside the one shown
    for p in g["plies"]:
        assert sum(p["engine_wdl"].values()) == 1000 == sum(p["wdl"].values())
    # r_e: the calibration entry of the engine that ran, at this limit (as
    # ``serve`` picks it), not the first entry at the limit.
    cal = tmp_path / "cal.toml"
    cal.write_text(
        '[[engine]]\nname = "Other 1.0"\nlimit = "depth 6"\nrating = 2500.0\n\n'
        '[[engine]]\nname = "Stockfish 15.1"\nlimit = "depth 6"\nrating = 2777.0\n'
    )
    engine_name = data["engine"]["name"]
    assert engine_name.startswith("Stockfish")
    cal.write_text(cal.read_text().replace("Stockfish 15.1", engine_name))
    os.environ["LIVEGAIN_CALIBRATION"] = str(cal)
    try:
        code, out, err = run_cli(argv, capsys)
    finally:
        del os.environ["LIVEGAIN_CALIBRATION"]
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"]["rating"] == 2777.0
    assert data["engine"]["source"] == f"calibration: {engine_name} depth 6"


def test_fen_start_black_to_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 30"
    path = tmp_path / "fen.pgn"
    path.write_text(
        f'[White "W"]\n[Black "B"]\n[SetUp "1"]\n[FEN "{fen}"]\n\n'
        "{ [%eval 1.00] } 30... Kd7 { [%eval 1.20] } 31. e4 { [%eval 1.10] } "
        "Ke6 { [%eval 1.10] } *\n"
    )
    out_pgn = tmp_path / "out.pgn"
    code, out, err = run_cli(
        ["analyze", str(path), "--evals", "pgn", "--json", "--output-pgn", str(out_pgn)], capsys
    )
    assert code == 0, err
    game = json.loads(out)["games"][0]
    assert [p["move"] for p in game["plies"]] == ["30...Kd7", "31.e4", "31...Ke6"]
    assert [p["mover"] for p in game["plies"]] == ["black", "white", "black"]
    assert [p["gain"] for p in game["plies"]] == [-20, -10, 0]
    assert game["black"]["perceived"]["moves"] == 2
    text = out_pgn.read_text()
    assert f'[FEN "{fen}"]' in text and "30... Kd7 { [%eval 1.20] gain -0.20 }" in text
    code, again, _ = run_cli(["analyze", str(out_pgn), "--evals", "pgn", "--json"], capsys)
    assert json.loads(again)["games"] == json.loads(out)["games"]


def test_forfeit_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "forfeit.pgn"
    path.write_text(
        Path(GOTC).read_text() + '\n[White "X"]\n[Black "Byrne, Donald"]\n[Result "1-0"]\n\n1-0\n'
    )
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn", "--json"], capsys)
    assert code == 0
    assert "skipped game 2 (X - Byrne, Donald): no moves" in err
    assert len(json.loads(out)["games"]) == 1


def test_analysis_of_a_game_without_moves() -> None:
    from livegain.batch.analysis import AnnotatedGame, analyze

    empty = AnnotatedGame({"White": "X", "Black": "Y", "WhiteElo": "2500"}, [], [], [20])
    normal = AnnotatedGame(
        {"White": "X", "Black": "Z", "WhiteElo": "2500", "BlackElo": "2400"},
        ["e4", "e5"],
        ["e2e4", "e7e5"],
        [20, 30, 35],
    )
    report = analyze([empty, normal], 2860)
    assert [p.name for p in report.players][-1] == "Y"
    y = report.player("Y")
    assert y.perceived.moves == 0 and y.perceived.low == 2060 and y.interval_method == "none"
    x = report.player("X")
    assert x.games == 2 and x.perceived.moves == 1 and x.perceived.expected == 1.0
    assert report.tournament is not None
    assert [(p.a, p.b) for p in report.tournament.pairs] == [("X", "Z")]
    assert report.tournament.fit.ratings["Y"].estimated is None
    json.dumps(report.to_json())


def test_engine_rating_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    from types import SimpleNamespace

    import livegain.models.engine
    from livegain.batch.eval_source import default_engine_rating as default_rating
    from livegain.cli.analyze import eval_source_of

    def args(**kw: Any) -> argparse.Namespace:
        base = {"engine_rating": None, "evals": "engine", "depth": 8, "nodes": None}
        return argparse.Namespace(**{**base, **kw})

    def default_engine_rating(a: argparse.Namespace, engine: str | None = None) -> Any:
        return default_rating(eval_source_of(a, engine, {}), a.engine_rating)

    assert default_engine_rating(args(engine_rating=2999)) == (2999.0, "--engine-rating")
    assert default_engine_rating(args(evals="pgn"))[0] == 2860.0
    seen: list[Any] = []

    def fake_find(name: str | None, limit: Any, path: Any = None) -> Any:
        seen.append((name, limit))
        return SimpleNamespace(rating=3123.0, name="Stockfish 15.1", limit="depth 8")

    monkeypatch.setattr(livegain.models.engine, "find_calibration", fake_find)
    rating, source = default_engine_rating(args())
    assert rating == 3123.0 and source == "calibration: Stockfish 15.1 depth 8"
    assert seen[0][0] is None
    default_engine_rating(args(), "Stockfish 15.1")
    assert seen[1][0] == "Stockfish 15.1"


PGN_TOKENS = [
    '[White "A"]', '[Black "B"]', '[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]', '[SetUp "1"]', "\n",
    "1.", "2.", "1...", "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O", "Qxf7#", "Kxe8", "e8=Q",
    "{ [%eval 0.3] }", "{ [%eval #-2] }", "{ [%eval x] }", "{", "}", "(", ")", "*", "1-0",
    "$1", ";c", "%", "[", "]", '"',
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PGN_TOKENS), max_size=40))
def test_malformed_pgn_gives_clear_errors_only(tokens: list[str]) -> None:
    """Whatever the text, reading and annotating either works or raises a ValueError
    (what the command turns into one line), never anything else."""
    text = " ".join(tokens)
    try:
        games = read_pgn_text(text)
        annotated_games_from_pgn(games)
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize("pairing", ["aggregate", "pair"])
def test_algorithm2_jackknife_matches_leave_one_game_out(
    tournament_pgn: Path, pairing: Literal["aggregate", "pair"]
) -> None:
    """The Algorithm 2 interval is the delete-one-game jackknife of the whole pipeline:
    recompute it here by analysing the file without each game in turn."""
    import math

    from scipy.special import stdtrit

    from livegain.batch.analysis import analyze

    games, _ = annotated_games_from_pgn(read_pgn_text(tournament_pgn.read_text()))
    full = analyze(games, 2860, pairing=pairing)
    k = len(games)
    for player in full.players:
        reps = []
        for drop in range(k):
            part = analyze(games[:drop] + games[drop + 1 :], 2860, pairing=pairing)
            est = part.player(player.name).tournament
            assert est is not None
            reps.append(est)
        mean = sum(reps) / k
        se = math.sqrt((k - 1) / k * sum((r - mean) ** 2 for r in reps))
        half = float(stdtrit(k - 1, 0.975)) * se
        assert player.tournament is not None and player.tournament_low is not None
        assert player.tournament_low == pytest.approx(player.tournament - half, abs=1e-6)
        assert player.tournament_high == pytest.approx(player.tournament + half, abs=1e-6)
        assert player.tournament_low < player.tournament < player.tournament_high  # type: ignore[operator]


def test_calibrated_perceived_beside_algorithm4(capsys: pytest.CaptureFixture[str]) -> None:
    """Every player-game carries the calibrated estimate of the shipped model for
    PGN evaluations, recomputed here by hand from its parameters and its
    opening table, beside Algorithm 4's exact values."""
    import chess.pgn

    from livegain.core.perceived import MoveClasses
    from livegain.models.perceived import find_perceived_model

    model, _ = find_perceived_model("pgn")
    assert model is not None and model.provenance["evals"] == "pgn"
    code, out, err = run_cli(["analyze", GOTC, "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["calibration"]["model"] == model.name
    assert data["calibration"]["command"].startswith("livegain fit ")
    assert data["calibration"]["opening"]["file"] == "opening-lichess.json.gz"
    assert data["calibration"]["opening"]["command"].startswith("livegain fit-opening ")
    game = data["games"][0]
    scores = [13] + [p["score"] for p in game["plies"]]
    classes = MoveClasses()
    with open(GOTC, encoding="utf-8") as f:
        read = chess.pgn.read_game(f)
    assert read is not None
    ucis = [m.uci() for m in read.mainline_moves()]
    assert model.opening is not None  # the lichess-scale model reads the opening
    for color, first in (("white", 1), ("black", 2)):
        sign = 1 if color == "white" else -1
        moves = [
            classes.of(ply, sign * scores[ply - 1], sign * scores[ply])
            for ply in range(first, len(scores), 2)
        ]
        s = sum(model.move_scores[c] for c in moves) / len(moves)
        line = model.bin_for(len(moves))
        pr = game[color]["perceived"]
        assert pr["moves"] == 41 and not pr["early"]
        opening = model.opening.prior(color == "white", True, ucis)
        assert opening.plies >= 4  # the Gruenfeld's first moves are in the table
        est = model.estimate(len(moves), sum(model.centi_score(c) for c in moves), opening)
        if not model.forward:  # the line and its residual quantiles
            assert pr["rating"] == pytest.approx(line.intercept + line.slope * s, abs=0.06)
            assert pr["low"] == pytest.approx(pr["rating"] + line.q_low, abs=0.1)
            assert pr["high"] == pytest.approx(pr["rating"] + line.q_high, abs=0.1)
        assert (pr["rating"], pr["low"], pr["high"]) == pytest.approx(
            (est.rating, est.low, est.high), abs=0.06
        )
        assert pr["scale"] == model.scale
        trace = game[color]["trace"]
        assert [t["perceived"]["early"] for t in trace[:6]] == [True] * 4 + [False] * 2
        assert trace[-1]["perceived"] == {
            k: v for k, v in pr.items() if k not in ("label", "scale")
        }
    # Fischer, who won brilliantly, reads above Byrne; Algorithm 4 keeps the paper's -185/-43
    assert game["black"]["perceived"]["rating"] > game["white"]["perceived"]["rating"]
    assert round(game["white"]["algorithm4"]["difference"]) == -185
    assert round(game["black"]["algorithm4"]["difference"]) == -43


# ---------------------------------------------------------------------------
# W/D/L, perceived rating and form, evaluations named by an Annotator tag

ANNOTATOR = "Stockfish 15.1 depth 10"


def _perceived_model(name: str, evals: str, limit: str | None = None) -> Any:
    """A perceived-rating model with forward lines on the FIDE scale: a move
    losing more centipawns scores lower (the mean move score reads as a
    rating), validated from 2000 to 2400."""
    from livegain.core.perceived import ForwardBin, MoveBin, MoveClasses, PerceivedModel

    classes = MoveClasses()
    provenance = {"evals": evals}
    if limit is not None:
        provenance.update({"engine": "Stockfish 15.1", "limit": limit})
    return PerceivedModel(
        name=name,
        classes=classes,
        move_scores=tuple(2700.0 - 60.0 * (c % 8) for c in range(classes.count)),
        bins=(MoveBin(1, 0.0, 1.0, -300.0, 300.0),),
        prior=2300.0,
        prior_low=2000.0,
        prior_high=2600.0,
        rating_low=2000.0,
        rating_high=2400.0,
        provenance=provenance,
        forward=(
            ForwardBin(1, 2400.0, 1.0, 0.0, 2400.0, 2000.0, 2800.0, 400.0, 0.0, -1.96, 1.96),
            ForwardBin(10, 2400.0, 1.0, 0.0, 2400.0, 2000.0, 2800.0, 150.0, 0.0, -1.96, 1.96),
        ),
        scale="fide",
        pop_mean=2300.0,
        pop_sd=200.0,
        below_label="not validated on FIDE games",
    )


def _wdl_model(name: str, kind: str, evals: str, limit: str | None = None, b: float = 1.5) -> Any:
    from livegain.core.human_wdl import IDENTITY_KNOT, HumanWdlModel, Knot, RatingsPrior

    prior = RatingsPrior(kind, 30.0, 400.0, 0.2, 0.3, -0.5, 0.5)
    knots = (
        IDENTITY_KNOT,
        Knot(20, 1.0, b, 1.0, 1.0, 0.0, 0.3, 0.3, 0.05),
        Knot(80, 0.8, b + 0.5, 1.5, 1.0, -0.2, 0.5, 0.5, 0.1),
    )
    provenance = {"evals": evals}
    if limit is not None:
        provenance.update({"engine": "Stockfish 15.1", "limit": limit})
    return HumanWdlModel(name, evals, prior, knots, knots, provenance)


@pytest.fixture
def model_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Model files of their own (the shipped ones are not assumed): perceived
    and W/D/L models for lichess's evaluations and for Stockfish 15.1 at depths
    10 and 12, and engine ratings at both depths."""
    from livegain.models.perceived import store_perceived_model
    from livegain.models.wdl import store_wdl

    perceived = tmp_path / "perceived.toml"
    models = {
        "pgn": _perceived_model("test/pgn", "pgn"),
        "d10": _perceived_model("test/sf-d10", "engine", "depth 10"),
        "d12": _perceived_model("test/sf-d12", "engine", "depth 12"),
    }
    for m in models.values():
        store_perceived_model(m, perceived)
    wdl = tmp_path / "wdl.toml"
    wdls = {
        "pgn": _wdl_model("wdl/pgn", "classical-otb", "pgn", b=1.0),
        "d10": _wdl_model("wdl/sf-d10", "classical-otb", "engine", "depth 10", b=2.0),
        "d12": _wdl_model("wdl/sf-d12", "classical-otb", "engine", "depth 12", b=3.0),
        "rapid": _wdl_model("wdl/pgn-rapid", "online-rapid", "pgn", b=0.5),
    }
    for w in wdls.values():
        store_wdl(w.prior, w, wdl)
    cal = tmp_path / "cal.toml"
    cal.write_text(
        '[[engine]]\nname = "Stockfish 15.1"\nlimit = "depth 12"\nrating = 2999.0\n\n'
        '[[engine]]\nname = "Stockfish 15.1"\nlimit = "depth 10"\nrating = 2777.0\n'
    )
    monkeypatch.setenv("LIVEGAIN_PERCEIVED_MODELS", str(perceived))
    monkeypatch.setenv("LIVEGAIN_WDL_MODELS", str(wdl))
    monkeypatch.setenv("LIVEGAIN_CALIBRATION", str(cal))
    return {"perceived": models, "wdl": wdls}


def _annotated_pgn(path: Path, annotator: str | None) -> Path:
    """Two games of A (2450) and B (2350) with [%eval] comments, each colour
    once, and an Annotator tag when given."""
    rng = random.Random(11)
    games = [
        random_game(rng, "A", "B", (2450, 2350), 40),
        random_game(rng, "B", "A", (2350, 2450), 40),
    ]
    if annotator is not None:
        tag = f'[Event "Test Open"]\n[Annotator "{annotator}"]'
        games = [g.replace('[Event "Test Open"]', tag) for g in games]
    path.write_text("\n\n".join(games) + "\n")
    return path


def _side_moves(game: dict[str, Any], color: str, model: Any) -> tuple[int, int]:
    """(moves, sum of move scores in hundredths) of one side, from the plies."""
    scores = [game["start_score"]] + [p["score"] for p in game["plies"]]
    sign = 1 if color == "white" else -1
    classes = [
        model.classes.of(p["ply"], sign * scores[p["ply"] - 1], sign * scores[p["ply"]])
        for p in game["plies"]
        if p["mover"] == color
    ]
    return len(classes), sum(model.centi_score(c) for c in classes)


def test_annotator_engine() -> None:
    from livegain.batch.annotated import annotator_engine

    assert annotator_engine({"Annotator": "Stockfish 15.1 depth 10"}) == (
        "Stockfish 15.1",
        "depth 10",
    )
    assert annotator_engine({"Annotator": " Stockfish  16  Depth 12 nodes 5000 "}) == (
        "Stockfish 16",
        "depth 12 nodes 5000",
    )
    assert annotator_engine({"Annotator": "Komodo 14 nodes 100000"}) == (
        "Komodo 14",
        "nodes 100000",
    )
    for other in ("arbiter", "lichess.org", "depth 10", "Stockfish 15.1", ""):
        assert annotator_engine({"Annotator": other}) is None
    assert annotator_engine({}) is None


def test_default_scale() -> None:
    from livegain.batch.eval_source import default_scale

    assert default_scale({"Site": "https://lichess.org/AbCdEf12"})[0] == "lichess"
    assert default_scale({"Site": "Wijk aan Zee NED"})[0] == "fide"
    assert default_scale({})[0] == "fide"


def test_pgn_evals_named_by_the_annotator(
    tmp_path: Path, model_files: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A file annotated by "Stockfish 15.1 depth 10" is read by that engine's
    models at that limit (perceived rating, W/D/L and Algorithm 4's r_e), not
    by those of lichess's evaluations nor of another depth; every ply carries
    the human W/D/L of that model, and no engine W/D/L (the file has none)."""
    from livegain.core.evaluation import Evaluation

    path = _annotated_pgn(tmp_path / "annotated.pgn", ANNOTATOR)
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"]["rating"] == 2777.0
    assert data["engine"]["name"] == "Stockfish 15.1" and data["engine"]["limit"] == "depth 10"
    assert "Annotator" in data["engine"]["source"]
    assert data["calibration"]["model"] == "test/sf-d10"
    assert data["calibration"]["scale"] == "fide" and data["scale"]["wanted"] == "fide"
    assert [w["model"] for w in data["wdl"]] == ["wdl/sf-d10"]
    wdl = model_files["wdl"]["d10"]
    for game in data["games"]:
        assert game["kind"] == "classical-otb" and game["wdl_model"] == "wdl/sf-d10"
        white, black = game["white"]["elo"], game["black"]["elo"]
        for p in game["plies"]:
            ev = Evaluation(cp=p["score"])
            w, d, lo = wdl.wdl(ev, p["ply"], white, black, white_to_move=p["mover"] == "black")
            assert p["wdl"] == {"win": w, "draw": d, "loss": lo}
            assert sum(p["wdl"].values()) == 1000
            assert p["engine_wdl"] is None

    # Without the tag, the same evaluations are lichess's: the PGN models and the paper's r_e.
    plain = _annotated_pgn(tmp_path / "plain.pgn", None)
    code, out, err = run_cli(["analyze", str(plain), "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"]["rating"] == 2860.0 and data["engine"]["name"] is None
    assert data["calibration"]["model"] == "test/pgn"
    assert [w["model"] for w in data["wdl"]] == ["wdl/pgn"]


def test_perceived_form_and_algorithm4_per_game_and_player(
    tmp_path: Path, model_files: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Each player-game and player row carries perceived, form and algorithm4
    (rating, low, high), perceived and form with the model's range label and
    scale: one game's are the model's estimate and form of that game's moves,
    a player's combine all his games (PerceivedModel.perceived and .form)."""
    model = model_files["perceived"]["d10"]
    path = _annotated_pgn(tmp_path / "annotated.pgn", ANNOTATOR)
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    per_player: dict[str, list[tuple[int, int]]] = {"A": [], "B": []}
    for game in data["games"]:
        for color in ("white", "black"):
            pg = game[color]
            moves, centi = _side_moves(game, color, model)
            per_player[pg["name"]].append((moves, centi))
            est = model.estimate(moves, centi)
            form = model.form([(moves, centi)], pg["elo"])
            assert pg["perceived"]["rating"] == pytest.approx(est.rating, abs=0.051)
            assert pg["perceived"]["low"] == pytest.approx(est.low, abs=0.051)
            assert pg["perceived"]["high"] == pytest.approx(est.high, abs=0.051)
            assert pg["form"]["rating"] == pytest.approx(form.rating, abs=0.051)
            assert pg["form"]["low"] < pg["form"]["rating"] < pg["form"]["high"]
            assert pg["perceived"]["scale"] == pg["form"]["scale"] == "fide"
            assert pg["algorithm4"]["low"] < pg["algorithm4"]["rating"] < pg["algorithm4"]["high"]
            # A (2450) is above the range the model was fitted on (2000-2400), B is inside it
            assert pg["form"]["label"] == ("extrapolated" if pg["name"] == "A" else None)
    rows = {p["name"]: p for p in data["players"]}
    for name, games in per_player.items():
        assert len(games) == 2
        pooled = model.perceived(games)
        form = model.form(games, rows[name]["elo"])
        assert rows[name]["perceived"]["rating"] == pytest.approx(pooled.rating, abs=0.051)
        assert rows[name]["perceived"]["high"] == pytest.approx(pooled.high, abs=0.051)
        assert rows[name]["form"]["rating"] == pytest.approx(form.rating, abs=0.051)
        assert rows[name]["form"]["low"] == pytest.approx(form.low, abs=0.051)
        assert set(rows[name]["algorithm4"]) >= {"rating", "low", "high"}
        label = model.range_label(pooled.rating)
        assert rows[name]["perceived"]["label"] == label
    # two games say more than one: the pooled interval is narrower than each game's
    a_games = [g[c]["perceived"] for g in data["games"] for c in ("white", "black")]
    a_widths = [p["high"] - p["low"] for p in a_games]
    assert rows["A"]["perceived"]["high"] - rows["A"]["perceived"]["low"] < min(a_widths)

    # without a rating there is no form; the CSV has the same numbers
    code, out, err = run_cli(["analyze", GOTC, "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    gotc = json.loads(out)
    assert gotc["games"][0]["white"]["form"] is None and gotc["players"][0]["form"] is None
    code, out, _ = run_cli(["analyze", str(path), "--evals", "pgn", "--csv"], capsys)
    csv_rows = {r["player"]: r for r in csv.DictReader(io.StringIO(out))}
    assert float(csv_rows["A"]["form"]) == pytest.approx(rows["A"]["form"]["rating"], abs=0.051)
    assert csv_rows["A"]["form_label"] == "extrapolated" and csv_rows["A"]["scale"] == "fide"


def test_wdl_of_every_ply(
    tmp_path: Path,
    model_files: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kind of game picks the human model (--kind, else TimeControl, else
    classical over the board); with no model file the W/D/L is today's: the
    win-chance curve of the evaluation, decisive at a mate."""
    from livegain.core.evaluation import Evaluation
    from livegain.core.wdl import position_wdl

    code, out, err = run_cli(["analyze", GOTC, "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["wdl"] == [
        {"kind": "classical-otb", "model": "wdl/pgn", "choice": "model wdl/pgn", "games": 1}
    ]
    first = data["games"][0]["plies"][0]
    w, d, lo = model_files["wdl"]["pgn"].wdl(Evaluation(cp=12), 1, None, None, False)
    assert first["wdl"] == {"win": w, "draw": d, "loss": lo}

    code, out, err = run_cli(
        ["analyze", GOTC, "--evals", "pgn", "--json", "--kind", "online-rapid"], capsys
    )
    assert code == 0, err
    assert json.loads(out)["wdl"][0]["model"] == "wdl/pgn-rapid"

    rapid = tmp_path / "rapid.pgn"
    rapid.write_text(GOTC_PATH.read_text().replace('[Round "8"]', '[TimeControl "600+5"]'))
    code, out, err = run_cli(["analyze", str(rapid), "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["games"][0]["kind"] == "online-rapid"

    monkeypatch.setenv("LIVEGAIN_WDL_MODELS", str(tmp_path / "none.toml"))
    code, out, err = run_cli(["analyze", GOTC, "--evals", "pgn", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["wdl"][0]["model"] is None
    plies = data["games"][0]["plies"]
    for p in plies:
        if abs(p["score"]) < 3900:
            w, d, lo = position_wdl(Evaluation(cp=p["score"]))
            assert p["wdl"] == {"win": w, "draw": d, "loss": lo}
        else:  # a mate ([%eval #-3]) is decisive, as an engine's mate score
            assert p["wdl"] == {"win": 0, "draw": 0, "loss": 1000}
    assert plies[-1]["move"] == "41...Rc2#" and plies[-1]["wdl"]["loss"] == 1000


def test_readable_output_labels_wdl_and_form(
    tmp_path: Path, model_files: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = _annotated_pgn(tmp_path / "annotated.pgn", ANNOTATOR)
    code, out, err = run_cli(["analyze", str(path), "--evals", "pgn", "--trace"], capsys)
    assert code == 0, err
    assert "calibration: Stockfish 15.1 depth 10 (the file's Annotator tag)" in out
    assert "human model wdl/sf-d10" in out and "human W/D/L %" in out
    assert "Form" in out and "Form 95%" in out
    assert "^ extrapolated" in out  # A's form: his Elo is above the model's range
