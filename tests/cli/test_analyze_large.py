"""`livegain analyze` on large files: gzip input, truncated and skipped games
reported, the progress bar on a terminal, compact JSON for big reports, and
the lichess development set (shared data) when it is there."""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import chess.pgn
import pytest
from conftest import need

import livegain
import livegain.batch.report_json as report_json
import livegain.cli.analyze as analyze_cli
from livegain.cli import main

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"
LICHESS = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "lichess-rapid"
    / "lichess-rapid-dev.pgn.gz"
)


def gotc(
    white: str, black: str, *, evals_until: int | None = None, gap_at: int | None = None
) -> str:
    game = chess.pgn.read_game(io.StringIO(GOTC.read_text()))
    assert game is not None
    game.headers["White"], game.headers["Black"] = white, black
    for ply, node in enumerate(game.mainline(), start=1):
        if (evals_until is not None and ply > evals_until) or ply == gap_at:
            node.comment = ""
    return str(game) + "\n\n"


@pytest.fixture
def mixed_gz(tmp_path: Path) -> Path:
    """Five games: fine, truncated, a gap, an illegal move, fine."""
    illegal = gotc("G", "H").replace("41... Rc2#", "41... Rc2# 42. Qxh8")
    text = gotc("A", "B") + gotc("C", "D", evals_until=40) + gotc("E", "F", gap_at=9)
    text += illegal + gotc("I", "J")
    path = tmp_path / "mixed.pgn.gz"
    with gzip.open(path, "wt") as f:
        f.write(text)
    return path


def test_gzip_file_with_truncated_and_bad_games(
    mixed_gz: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(mixed_gz), "--evals", "pgn", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [g["number"] for g in data["games"]] == [1, 2, 5]
    assert data["truncated"] == ["game 2 (C - D): evaluated up to ply 40 of 82"]
    assert data["skipped"] == [
        "game 3 (E - F): no [%eval] after 5.Bf4 (ply 9)",
        "game 4 (G - H): illegal move 42.Qxh8",
    ]
    assert len(data["games"][1]["plies"]) == 40
    err = captured.err.splitlines()
    assert "livegain analyze: skipped game 3 (E - F): no [%eval] after 5.Bf4 (ply 9)" in err
    assert "livegain analyze: truncated game 2 (C - D): evaluated up to ply 40 of 82" in err
    # the same games in engine mode's reader: the illegal one is skipped there too
    names = {p["name"] for p in data["players"]}
    assert names == {"A", "B", "C", "D", "I", "J"}


def test_nothing_to_analyse_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.pgn.gz"
    with gzip.open(path, "wt") as f:
        f.write(gotc("E", "F", gap_at=9))
    assert main(["analyze", str(path), "--evals", "pgn"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"livegain analyze: error: {path}: game 1 (E - F): no [%eval] after 5.Bf4 (ply 9)\n"
    )


def test_progress_bar_only_on_a_terminal(
    mixed_gz: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["analyze", str(mixed_gz), "--evals", "pgn", "--csv"]) == 0
    quiet = capsys.readouterr().err
    assert "reading" not in quiet and "analysing" not in quiet
    monkeypatch.setattr(analyze_cli, "_stderr_is_tty", lambda: True)
    assert main(["analyze", str(mixed_gz), "--evals", "pgn", "--csv"]) == 0
    captured = capsys.readouterr()
    err = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", captured.err)  # no colours
    assert "reading" in err and "analysing" in err and "5 games" in err and "100%" in err
    assert captured.out.startswith("player,")  # stdout untouched


def test_big_reports_are_compact_json(
    mixed_gz: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["analyze", str(mixed_gz), "--evals", "pgn", "--json"]) == 0
    indented = capsys.readouterr().out
    monkeypatch.setattr(report_json, "COMPACT_JSON_GAMES", 2)
    assert main(["analyze", str(mixed_gz), "--evals", "pgn", "--json"]) == 0
    compact = capsys.readouterr().out
    assert compact.count("\n") == 1 and indented.count("\n") > 100
    assert json.loads(compact) == json.loads(indented)
    # streamed game by game, the same text as the whole document encoded at once
    assert compact == json.dumps(json.loads(indented)) + "\n"
    assert indented == json.dumps(json.loads(indented), indent=2) + "\n"


def test_reading_processes_give_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import livegain.batch.pgn_stream as pgn_stream

    text = "".join(gotc(f"W{k % 5}", f"B{k % 3}", evals_until=30 + k) for k in range(30))
    path = tmp_path / "many.pgn"
    path.write_text(text)
    monkeypatch.setattr(pgn_stream, "_BATCH_GAMES", 4)
    outs = []
    for workers in ("1", "2"):
        argv = ["analyze", str(path), "--evals", "pgn", "--json", "--workers", workers]
        assert main(argv) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1]
    assert len(outs[0]["games"]) == 30 and len(outs[0]["truncated"]) == 30


@pytest.mark.slow
def test_lichess_development_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first 1,500 games of the shared lichess set (written to tmp_path,
    gzip) through the whole command: every game read, every player with a
    perceived rating, Algorithm 2 intervals where the jackknife gives them."""
    need(LICHESS.exists(), f"{LICHESS} not present (the shared data beside the checkout)")
    lines: list[str] = []
    games = 0
    with gzip.open(LICHESS, "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("[Event ") and games == 1500:
                break
            games += line.startswith("[Event ")
            lines.append(line)
    part = tmp_path / "part.pgn.gz"
    with gzip.open(part, "wt", encoding="utf-8") as f:
        f.writelines(lines)
    assert main(["analyze", str(part), "--evals", "pgn", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["games"]) + len(data["skipped"]) == 1500
    assert data["skipped"] == []
    t = data["tournament"]
    assert t["converged"] and t["components"] > 1
    with_interval = [p for p in data["players"] if p["tournament_low"] is not None]
    assert with_interval
    for p in with_interval:
        assert p["tournament_low"] <= p["tournament"] <= p["tournament_high"]
