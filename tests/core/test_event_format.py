"""The format a source's description names (livegain.core.event_format.format_from_text)."""

from __future__ import annotations

import pytest

from livegain.core.event_format import format_from_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10-player round robin", ("round-robin", 1, False)),
        ("6-player double round robin", ("round-robin", 2, False)),
        ("9-round Swiss", ("swiss", 1, False)),
        ("4-team round robin", ("round-robin", 1, True)),  # the teams play all-play-all
        ("Olympiad, 11-round Swiss", ("swiss", 1, True)),
        ("Olympiad", ("swiss", 1, True)),
        ("Teams, double round robin", ("round-robin", 2, True)),
        ("128-player knockout", ("knockout", 1, False)),
    ],
)
def test_a_description_names_its_format(text: str, expected: tuple[str, int, bool]) -> None:
    fmt = format_from_text(text)
    assert fmt is not None and (fmt.format, fmt.cycles, fmt.teams) == expected
    assert text in fmt.why


@pytest.mark.parametrize("text", [None, "", "Classical, 90+30"])
def test_a_description_without_a_format_names_none(text: str | None) -> None:
    assert format_from_text(text) is None
