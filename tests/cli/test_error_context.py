"""What an error reaching the command line is about: :func:`about` and the
one line :func:`error_line` makes of it."""

from __future__ import annotations

import pytest

from livegain.cli.errors import CliError, about, error_line
from livegain.core.errors import LivegainError
from livegain.core.ranking import RankingError


def test_the_context_is_said_before_the_message_outermost_first() -> None:
    with pytest.raises(RankingError) as info, about("results.csv"), about("rank"):
        raise RankingError("need at least\n two players")
    assert error_line(info.value) == "results.csv: rank: need at least two players"
    assert str(info.value) == "need at least\n two players"  # the error itself unchanged


def test_only_the_named_types_get_the_context() -> None:
    with pytest.raises(CliError) as info, about("engine", RankingError):
        raise CliError("--depth must be 1 or more")
    assert error_line(info.value) == "--depth must be 1 or more"
    with pytest.raises(ValueError), about("engine"):
        raise ValueError("not livegain's: passes untouched")


def test_without_context_the_line_is_the_message() -> None:
    assert error_line(LivegainError("a  file\tcannot be read")) == "a file cannot be read"
