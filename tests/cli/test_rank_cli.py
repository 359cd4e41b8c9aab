"""`livegain rank RESULTS` through livegain.cli.main: CSV, PGN, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from livegain.cli import main
from livegain.core.ranking import PairResult, fit_ranking

ROWS = [
    ("Ann", "Bob", 5, 10, 3),
    ("Ann", "Cid", 6, 8, 2),
    ("Bob", "Cid", 4, 9, 4),
    ("Cid", "Dee", 3, 7, 5),
    ("Dee", "Ann", 1, 6, 7),
]


def write_csv(path: Path, rows: list[tuple[str, str, int, int, int]]) -> Path:
    lines = ["player_a,player_b,wins_a,draws,wins_b"]
    lines += [",".join(str(x) for x in r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code != 0
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    assert lines[0].startswith("livegain rank: error:")
    return lines[0]


def test_csv_json_matches_core_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(tmp_path / "results.csv", ROWS)
    assert main(["rank", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    fit = fit_ranking([PairResult(*r) for r in ROWS])
    assert data["alpha"] == pytest.approx(fit.alpha)
    assert data["log_likelihood"] == pytest.approx(fit.log_likelihood)
    assert [p["name"] for p in data["players"]] == [p.name for p in fit.players]
    assert [p["rank"] for p in data["players"]] == [1, 2, 3, 4]
    assert data["players"][0]["name"] == "Ann"
    for p, q in zip(data["players"], fit.players, strict=True):
        assert p["gamma"] == pytest.approx(q.gamma)
        assert p["se"] == pytest.approx(q.se)
    assert data["max_hessian_eigenvalue"] < 0


def test_csv_table_for_people(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(tmp_path / "results.csv", ROWS)
    assert main(["rank", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Ann" in out and "alpha =" in out and "log-likelihood" in out


def test_csv_columns_in_any_order_with_comments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.csv"
    body = ["# head-to-head", "draws,wins_b,wins_a,player_b,player_a,event"]
    body += [f"{d},{b},{a},{pb},{pa},x" for pa, pb, a, d, b in ROWS]
    path.write_text("\n".join(body) + "\n\n", encoding="utf-8")
    assert main(["rank", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["alpha"] == pytest.approx(fit_ranking([PairResult(*r) for r in ROWS]).alpha)


def test_fix_alpha(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(tmp_path / "results.csv", ROWS)
    assert main(["rank", str(path), "--json", "--fix-alpha", "-0.5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["alpha"] == -0.5 and data["alpha_fixed"] is True


PGN = """[Event "t"]
[White "Ann"]
[Black "Bob"]
[Result "1-0"]

1. e4 e5 1-0

[Event "t"]
[White "Bob"]
[Black "Ann"]
[Result "1/2-1/2"]

1. d4 d5 1/2-1/2

[Event "t"]
[White "Cid"]
[Black "Bob"]
[Result "0-1"]

1. c4 c5 0-1

[Event "t"]
[White "Ann"]
[Black "Cid"]
[Result "1/2-1/2"]

1. Nf3 Nf6 1/2-1/2

[Event "t"]
[White "Cid"]
[Black "Ann"]
[Result "1-0"]

1. g3 g6 1-0

[Event "t"]
[White "Bob"]
[Black "Cid"]
[Result "1/2-1/2"]

1. b3 b6 1/2-1/2

[Event "t"]
[White "Ann"]
[Black "Bob"]
[Result "*"]

1. e4 *
"""


def test_pgn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(PGN, encoding="utf-8")
    assert main(["rank", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["skipped_games"] == 1
    tallies = {p["name"]: (p["wins"], p["draws"], p["losses"]) for p in data["players"]}
    assert tallies == {"Ann": (1, 2, 1), "Bob": (1, 2, 1), "Cid": (1, 2, 1)}
    # Equal results give equal strengths and a shared rank.
    assert [p["rank"] for p in data["players"]] == [1, 1, 1]
    assert all(abs(p["gamma"]) < 1e-6 for p in data["players"])


def test_tata_steel_pgn(tata_steel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rank", str(tata_steel), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["players"]) == 14
    assert data["players"][0]["name"].startswith("Carlsen")
    assert sum(p["games"] for p in data["players"]) == 14 * 13


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "empty results table (no header"),
        ("player_a,player_b,wins_a,draws,wins_b\n", "a header but no rows"),
        ("a,b,c\nx,y,z\n", ":1: header lacks column(s) player_a, player_b, wins_a, draws, wins_b"),
        (
            "player_a,player_b,wins_a,draws,wins_b\nA,B,1,2,3\nA,C,1,2\n",
            "r.csv:3: expected 5 fields, found 4",
        ),
        (
            "player_a,player_b,wins_a,draws,wins_b\nA,B,1,x,3\n",
            "r.csv:2: draws 'x' is not a whole number",
        ),
        ("player_a,player_b,wins_a,draws,wins_b\nA,B,1,-2,3\n", "r.csv:2: draws -2 is negative"),
        ("player_a,player_b,wins_a,draws,wins_b\nA,A,1,2,3\n", "r.csv:2: 'A' cannot play themself"),
        ("player_a,player_b,wins_a,draws,wins_b\nA,,1,2,3\n", "r.csv:2: empty player name"),
        ("player_a,player_b,wins_a,draws,wins_b\nA,B,1,2,3\nC,D,1,2,3\n", "split into groups"),
        ("player_a,player_b,wins_a,draws,wins_b\nA,B,3,0,0\n", "won every game"),
        ("player_a,player_b,wins_a,draws,wins_b\nA,B,3,0,2\n", "no drawn games"),
    ],
)
def test_bad_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    path = tmp_path / "r.csv"
    path.write_text(content, encoding="utf-8")
    assert needle in run_error(capsys, "rank", str(path))


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(capsys, "rank", str(tmp_path / "nope.csv"))
    assert "nope.csv: no such file" in line


def test_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(b"player_a,player_b,wins_a,draws,wins_b\n\xff\xfe,B,1,1,1\n")
    assert "not UTF-8" in run_error(capsys, "rank", str(path))


def test_pgn_without_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.pgn"
    path.write_text("\n", encoding="utf-8")
    assert "no PGN games found" in run_error(capsys, "rank", str(path))
    path.write_text('[White "A"]\n[Black "B"]\n[Result "*"]\n\n*\n', encoding="utf-8")
    assert "no finished games" in run_error(capsys, "rank", str(path))


def test_a_fit_refused_is_said_about_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_csv(tmp_path / "r.csv", [("A", "B", 3, 0, 0)])
    line = run_error(capsys, "rank", str(path))
    assert line.startswith(f"livegain rank: error: {path}: ")
    assert line.count(str(path)) == 1
