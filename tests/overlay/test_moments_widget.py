"""The key moments widget (``/overlay/static/widget-moments.html``) against a real
``livegain serve`` following a replayed game in which Black blunders into mate:
the blunder appears with the engine's preferred move, then the game's end; a widget
opened afterwards lists them too (the server keeps the latest moments)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import ReplayThread, Serve, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.engine]

# 3...Nf6?? allows 4.Qxf7#.
PGN = (
    '[Event "Moments Test"]\n[Round "1"]\n[Board "4"]\n[White "Early, Queen"]\n'
    '[Black "Quiet, Knight"]\n[WhiteElo "1800"]\n[BlackElo "1800"]\n[Result "1-0"]\n\n'
    "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n"
)


@pytest.fixture(scope="module")
def blunder_game(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[tuple[Serve, ReplayThread]]:
    tmp = tmp_path_factory.mktemp("moments")
    replay = ReplayThread(PGN)
    serve = Serve(tmp, replay.url, engine_path)
    try:
        serve.start()
        yield serve, replay
    finally:
        serve.stop()
        replay.close()


def shown(page: Any) -> list[dict[str, str]]:
    return list(
        page.eval_on_selector_all(
            '[data-testid="moment"]',
            """rows => rows.map(r => ({
                kind: r.dataset.kind,
                ply: r.dataset.ply,
                label: r.querySelector('[data-testid="moment-kind"]').textContent,
                move: r.querySelector('[data-testid="moment-move"]').textContent,
                best: r.querySelector('[data-testid="moment-best"]')?.textContent ?? "",
                swing: r.querySelector('[data-testid="moment-swing"]').textContent,
                players: r.querySelector('[data-testid="moment-players"]').textContent,
            }))""",
        )
    )


def test_the_widget_lists_a_blunder_then_the_end(
    blunder_game: tuple[Serve, ReplayThread], page_factory: Callable[..., Any]
) -> None:
    serve, replay = blunder_game
    page = page_factory(800, 600)
    page.goto(f"{serve.url}/overlay/static/widget-moments.html?rows=5")
    widget = page.get_by_test_id("widget")
    expect(widget).to_have_attribute("data-fresh", "true", timeout=15_000)
    expect(page.get_by_test_id("waiting")).to_be_visible()
    replay.advance(6)  # up to 3...Nf6??
    rows = wait_until(lambda: shown(page), 60, "the blunder on the page")
    assert len(rows) == 1
    blunder = rows[0]
    assert blunder["kind"] in ("blunder", "turnaround"), blunder
    assert (blunder["ply"], blunder["move"]) == ("6", "3…Nf6")
    assert blunder["best"].startswith("best ") and blunder["best"] != "best Nf6"
    # White's shown chances (the human W/D/L model's) rise by at least the threshold
    before, after = (int(x.strip(" %")) for x in blunder["swing"].split("→"))
    assert after - before >= 15, blunder
    assert blunder["players"] == "Bd 4 · Early, Queen – Quiet, Knight"
    expect(page.get_by_test_id("waiting")).to_be_hidden()

    replay.advance(1)  # 4.Qxf7# 1-0
    rows = wait_until(
        lambda: (r := shown(page)) and len(r) == 2 and r, 60, "the game's end on the page"
    )
    end = rows[0]  # newest first
    assert (end["kind"], end["label"], end["move"]) == ("game-end", "Game over 1-0", "4.Qxf7#")
    assert rows[1]["move"] == "3…Nf6"
    expect(widget).to_have_attribute("data-count", "2")
    # a widget opened afterwards (a new OBS scene, a reload) lists the same moments
    late = page_factory(800, 600)
    late.goto(f"{serve.url}/overlay/static/widget-moments.html?rows=5")
    expect(late.get_by_test_id("widget")).to_have_attribute("data-count", "2", timeout=15_000)
    assert shown(late) == rows
    expect(late.get_by_test_id("waiting")).to_be_hidden()
