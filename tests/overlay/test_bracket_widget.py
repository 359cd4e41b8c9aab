"""The knockout widget (``widget-bracket.html``) against a real ``livegain
serve`` following a replayed knockout semi-final round: each match's players,
stage, stage scores and chances of going through, and the players' chances
of winning the event, are the standings message's ``knockout`` part.
Screenshot in artifacts/overlays/."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import Serve, save_artifact, serving_played, standings_api, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.engine]

EVENT = "Bracket Widget Cup"
EVENTS_TOML = (
    f'[[events]]\nname = "{EVENT}"\nformat = "knockout"\n'
    'stages = [{ name = "classical", games = 2 }, { name = "rapid", games = 2 }, '
    '{ name = "Armageddon", games = 1, armageddon = true }]\n'
)
MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
DRAWN = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7"
SLOW = "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6"
RATING = {
    "Aronian, Levon": 2813,
    "Dominguez, Leinier": 2703,
    "Nakamura, Hikaru": 2772,
    "So, Wesley": 2744,
}


def game(rnd: str, white: str, black: str, moves: str, result: str) -> str:
    return (
        f'[Event "{EVENT}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[GameId "{rnd}-{white}"]\n[WhiteElo "{RATING[white]}"]\n[BlackElo "{RATING[black]}"]\n'
        f'[Result "{result}"]\n\n{moves} {result}\n\n'
    )


A, D, N, S = "Aronian, Levon", "Dominguez, Leinier", "Nakamura, Hikaru", "So, Wesley"
# Semi-final 1 decided in the classical games; semi-final 2 level after them,
# its first rapid game going on.
PGN = (
    game("1.1", A, D, MATE, "1-0")
    + game("1.2", D, A, DRAWN, "1/2-1/2")
    + game("1.1", N, S, DRAWN, "1/2-1/2")
    + game("1.2", S, N, DRAWN, "1/2-1/2")
    + game("1.3", N, S, SLOW, "*")
)


def api(serve: Serve) -> dict[str, Any] | None:
    return standings_api(serve, EVENT)


@pytest.fixture(scope="module")
def cup(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[Serve]:
    tmp = tmp_path_factory.mktemp("knockout-cup")
    with serving_played(tmp, PGN, engine_path, EVENTS_TOML) as serve:
        yield serve


def settled(serve: Serve) -> dict[str, Any] | None:
    m = api(serve)
    if not m or not m.get("knockout") or m["finished"] != 4:
        return None
    live = [g for g in m["knockout"]["matches"][1]["games"] if g["live"]]
    return m if live and live[0]["wdl"] is not None else None


def test_the_bracket_widget_shows_the_matches_and_the_chances_of_winning(
    cup: Serve, page_factory: Callable[..., Any]
) -> None:
    msg = wait_until(lambda: settled(cup), 90, "the semi-final with a rapid game in progress")
    ko = msg["knockout"]
    assert [m["winner"] for m in ko["matches"]] == [A, None]
    page = page_factory(1000, 520)
    page.goto(f"{cup.url}/overlay/static/widget-bracket.html?event={urllib.parse.quote(EVENT)}")
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true", timeout=15_000)

    def pct(p: float) -> str:
        return f"{round(p * 100)} %"

    def shown() -> bool:
        m = settled(cup)
        if m is None:
            return False
        k = m["knockout"]
        second = k["matches"][1]
        texts = [
            page.get_by_test_id("bk-a-pct").nth(1).inner_text(),
            page.get_by_test_id("bk-b-pct").nth(1).inner_text(),
            page.get_by_test_id("bk-win").first.inner_text(),
        ]
        return texts == [
            pct(second["through_a"]),
            pct(second["through_b"]),
            pct(k["bracket"][0]["win"]),
        ]

    wait_until(shown, 20, "the page's chances to be the API's")
    cards = page.get_by_test_id("bk-match")
    expect(cards).to_have_count(2)
    expect(cards.nth(0).get_by_test_id("bk-stage")).to_have_text("decided: classical")
    expect(cards.nth(0).get_by_test_id("bk-a-pct")).to_have_text("100 %")
    expect(cards.nth(1).get_by_test_id("bk-stage")).to_have_text("rapid")
    expect(cards.nth(1).get_by_test_id("bk-score")).to_have_text("classical 1–1 · rapid 0–0")
    expect(cards.nth(1).get_by_test_id("bk-live")).to_have_count(1)
    # three players left (Dominguez is out), by chance of winning the event
    names = page.get_by_test_id("bk-player")
    expect(names).to_have_count(3)
    assert [r["name"] for r in ko["bracket"]] == names.all_inner_texts()
    assert D not in names.all_inner_texts()
    expect(page.locator(".bk-winbar span")).to_have_count(3)
    save_artifact(page.get_by_test_id("bracket"), "widget-bracket.png", omit_background=True)
