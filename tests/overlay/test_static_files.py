"""The overlay files themselves: self-contained (nothing fetched from the
internet), no HTML sinks for feed data, hooks for every page the server maps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "livegain" / "overlay" / "static"
FILES = sorted(p for p in STATIC.iterdir() if p.suffix in (".html", ".js", ".css"))
SVG_NS = "http://www.w3.org/2000/svg"


def test_every_page_the_server_maps_exists() -> None:
    from livegain.publish.server import PAGES

    for page in set(PAGES.values()):
        assert (STATIC / page).is_file(), page


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_nothing_is_fetched_from_the_internet(path: Path) -> None:
    text = path.read_text(encoding="utf-8").replace(SVG_NS, "")
    remote = re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[/\w.-]*", text, re.IGNORECASE)
    assert remote == [], f"{path.name} refers to {remote}"
    assert "@import" not in text


@pytest.mark.parametrize(
    "path", [p for p in FILES if p.suffix in (".js", ".html")], ids=lambda p: p.name
)
def test_no_html_sinks(path: Path) -> None:
    code = re.sub(r"^\s*//.*$", "", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in code, f"{path.name} uses {sink}"


def test_board_page_has_a_hook_for_every_value() -> None:
    html = (STATIC / "board.html").read_text(encoding="utf-8")
    hooks = set(re.findall(r'data-testid="([a-z0-9-]+)"', html))
    for color in ("white", "black"):
        for what in (
            "name",
            "title",
            "fed",
            "rating",
            "clock",
            "headline",
            "headline-label",
            "headline-low",
            "headline-high",
            "headline-diff",
            "headline-moves",
            "headline-note",
            "headline-bound",
            "headline-interval",
            "moves-alone",
            "perceived",
            "perceived-low",
            "perceived-high",
            "perceived-box",
            "accuracy",
            "accuracy-box",
        ):
            assert f"{color}-{what}" in hooks
    for hook in (
        "eval-cp",
        "eval-bar",
        "wdl-win",
        "wdl-draw",
        "wdl-loss",
        "engine-wdl",
        "engine-wdl-win",
        "engine-wdl-draw",
        "engine-wdl-loss",
        "h2h",
        "h2h-white",
        "h2h-black",
        "h2h-diff",
        "last-move",
        "last-move-gain",
        "last-move-mark",
        "moves",
        "odds",
        "odds-a",
        "odds-draw",
        "odds-b",
        "status",
        "trace-plot",
        "trace-title",
        "trace-note",
        "engine",
        "result",
        "event",
        "round",
    ):
        assert hook in hooks, hook
