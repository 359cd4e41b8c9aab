"""`livegain elo ...` through livegain.cli.main, output captured."""

from __future__ import annotations

import json

import pytest

from livegain.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def run_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code != 0
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_expected_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "elo", "expected", "--rating-a", "2834.7", "--rating-b", "2832.3")
    assert data["model"] == "logistic"
    assert round(float(data["expected_a"]), 4) == 0.5035  # type: ignore[arg-type]
    assert float(data["expected_a"]) + float(data["expected_b"]) == pytest.approx(1)  # type: ignore[arg-type]


def test_expected_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["elo", "expected", "--rating-a", "2000", "--rating-b", "1800", "--model", "normal"])
        == 0
    )
    out = capsys.readouterr().out
    assert "normal *" in out
    assert "0.7602" in out  # Phi(200/282.8)


def test_diff_fischer_spassky(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "elo", "diff", "--score", "12.5", "--games", "20", "--model", "normal")
    assert data["fraction"] == 0.625
    assert round(float(data["difference"]), 1) == 90.1  # type: ignore[arg-type]
    assert round(float(data["all_models"]["log"]), 1) == 88.7  # type: ignore[index]
    assert main(["elo", "diff", "--score", "0.625"]) == 0
    assert "+88.7" in capsys.readouterr().out


def test_change_seed_003(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys,
        "elo", "change", "--rating", "1613", "--k", "32",
        "--opponents", "1609,1477,1388,1586,1720", "--scores", "0,1/2,1,1,0",
    )  # fmt: skip
    assert round(float(data["expected"]), 3) == 2.867  # type: ignore[arg-type]
    assert round(float(data["new_rating"])) == 1601  # type: ignore[arg-type]
    assert len(data["games"]) == 5  # type: ignore[arg-type]


def test_change_auto_k(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["elo", "change", "--rating", "2150", "--opponents", "2000,2100", "--scores", "1,0"]
    assert run_json(capsys, *base, "--auto-k", "--games-played", "10")["k"] == 40
    assert run_json(capsys, *base, "--auto-k", "--games-played", "100")["k"] == 20
    assert run_json(capsys, *base, "--auto-k", "--games-played", "100", "--age", "16")["k"] == 40
    assert run_json(capsys, *base, "--auto-k", "--games-played", "100", "--under-18")["k"] == 40
    assert run_json(capsys, *base, "--auto-k", "--games-played", "100", "--ever-2400")["k"] == 10
    data = run_json(capsys, *base, "--auto-k", "--games-played", "10", "--period-games", "20")
    assert data["k"] == 35  # 40*20 > 700 -> 35
    assert "700" in str(data["k_rule"])


def test_change_applies_400_point_rule(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["elo", "change", "--k", "10", "--opponents", "1800", "--scores", "1"]
    capped = run_json(capsys, *base, "--rating", "2600")
    assert capped["games"][0]["difference"] == 400  # type: ignore[index]
    elite = run_json(capsys, *base, "--rating", "2700")
    assert elite["games"][0]["difference"] == 900  # type: ignore[index]


def test_performance(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys, "elo", "performance", "--opponents", "2500,2600,2400,2500", "--scores", "1,½,0.5,.5"
    )
    assert data["method"] == "fide"
    assert data["performance"] == 2595
    assert data["all_methods"]["linear"] == 2600  # type: ignore[index]
    assert main(["elo", "performance", "--opponents", "2000", "--scores", "1"]) == 0
    assert "2800.0" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["elo", "diff", "--score", "1"], "strictly between 0 and 1"),
        (["elo", "diff", "--score", "21", "--games", "20"], "not between 0 and --games"),
        (["elo", "diff", "--score", "3", "--games", "0"], "--games must be positive"),
        (
            [
                "elo",
                "change",
                "--rating",
                "2000",
                "--k",
                "20",
                "--opponents",
                "1900,x",
                "--scores",
                "1,0",
            ],
            "item 2 'x' is not a number",
        ),
        (
            [
                "elo",
                "change",
                "--rating",
                "2000",
                "--k",
                "20",
                "--opponents",
                "1900",
                "--scores",
                "2",
            ],
            "not a game score",
        ),
        (
            [
                "elo",
                "change",
                "--rating",
                "2000",
                "--k",
                "20",
                "--opponents",
                "1900,1800",
                "--scores",
                "1",
            ],
            "2 opponents but 1 scores",
        ),
        (
            [
                "elo",
                "change",
                "--rating",
                "2000",
                "--auto-k",
                "--opponents",
                "1900",
                "--scores",
                "1",
            ],
            "needs --games-played",
        ),
        (
            [
                "elo",
                "change",
                "--rating",
                "2000",
                "--k",
                "-5",
                "--opponents",
                "1900",
                "--scores",
                "1",
            ],
            "--k must be positive",
        ),
        (["elo", "performance", "--opponents", "", "--scores", ""], "empty list"),
    ],
)
def test_bad_input_one_line_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    line = run_error(capsys, *argv)
    assert line.startswith("livegain elo: error:")
    assert needle in line
