"""`livegain` imports only the sub-command it runs: same help, less start-up."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from livegain.cli import _COMMANDS, build_parser

HEAVY = (
    "scipy",
    "numpy",
    "rich",
    "livegain.engine",
    "livegain.batch.analysis",
    "livegain.app.service",
)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    """Sub-command name -> its one-line help, in listing order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help for a in action._choices_actions}
    raise AssertionError("no sub-commands")


def test_listing_equals_what_the_modules_register() -> None:
    full = subcommands(build_parser())
    assert full == {name: help_text for name, (_module, help_text) in _COMMANDS.items()}
    assert subcommands(build_parser("")) == full


@pytest.mark.parametrize("name", list(_COMMANDS))
def test_each_command_gets_its_complete_parser(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    helps = []
    for parser in (build_parser(name), build_parser()):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args([name, "--help"])
        assert stop.value.code == 0
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1]
    assert f"usage: livegain {name}" in helps[0]


def imported_by(code: str) -> set[str]:
    """Modules imported by ``code`` (run in a fresh interpreter)."""
    out = subprocess.run(
        [sys.executable, "-c", code + "\nprint('MODULES', ' '.join(sys.modules))\n"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return set(out.rpartition("MODULES ")[2].split())


def imported_after(*argv: str) -> set[str]:
    """Modules imported by ``livegain ARGV`` (run in a fresh interpreter)."""
    return imported_by(
        "import sys\n"
        "from livegain.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
    )


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith(HEAVY)}


def test_top_level_help_imports_no_sub_command() -> None:
    modules = imported_after("--help")
    assert not heavy(modules)
    assert not {m for m in modules if m.startswith("livegain.cli.")}


def test_a_command_imports_only_its_own_module() -> None:
    modules = imported_after(
        "odds", "game", "--rating-a", "2800", "--rating-b", "2700", "--draw-rate", "0.5"
    )
    assert "livegain.cli.odds" in modules
    others = {f"livegain.cli.{module}" for module, _help in _COMMANDS.values()} - {
        "livegain.cli.odds"
    }
    assert not modules & others
    assert not {m for m in modules if m.startswith(("livegain.engine", "livegain.app.service"))}


def test_reading_and_evaluating_games_needs_no_numpy_or_scipy() -> None:
    """`livegain analyze` in engine mode reads the games and runs the engines
    before the report's maths is needed (it is loaded in a thread meanwhile):
    what it imports before the engines start holds neither NumPy nor SciPy."""
    modules = imported_by(
        "import sys\nimport livegain.cli.analyze, livegain.batch.engine_analysis,"
        " livegain.batch.pgnio\n"
    )
    assert "livegain.batch.engine_analysis" in modules
    assert not {m for m in modules if m.split(".")[0] in {"numpy", "scipy"}}


def test_analyze_launches_its_engines_before_importing_chess() -> None:
    """`livegain analyze` starts its engine processes first (their start-up then
    overlaps the rest of its imports): its parser and the launcher import
    neither chess nor asyncio, nor anything of the engine pool."""
    modules = imported_by(
        "import sys\n"
        "from livegain.cli import build_parser\n"
        "build_parser('analyze').parse_args(['analyze', 'x.pgn'])\n"
        "import livegain.engine.launch\n"
    )
    assert "livegain.engine.launch" in modules
    assert not {m for m in modules if m.split(".")[0] in {"chess", "asyncio", "numpy"}}
    assert not {
        m for m in modules if m.startswith("livegain.engine.") and m.endswith(("pool", "uci"))
    }


def test_the_report_of_a_small_event_needs_no_scipy() -> None:
    """Intervals use livegain.core.student and the pairing graph's components
    are found with NumPy: a report of an event with at most 16 players in one
    pairing graph imports no SciPy (0.2-0.3 s of start-up)."""
    from pathlib import Path

    import livegain

    pgn = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"
    modules = imported_after("analyze", str(pgn), "--evals", "pgn", "--json")
    assert "livegain.batch.analysis" in modules
    assert not {m for m in modules if m.split(".")[0] == "scipy"}
