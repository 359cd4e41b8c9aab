"""The player table widget (``/overlay/static/widget-players.html``) against a real
``livegain serve`` following a replayed round: each player's points, performance,
rating change by FIDE's rules (with the K his configured facts give), perceived rating
and accuracy over the event are the standings message's, and the numbers are the
hand-computed ones where they can be."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import ReplayThread, Serve, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.engine]

EVENT = "Players Test Open"
# Beta is new to the list (12 rated games: K = 40); Alpha is rated 2600 (K = 10).
# Alpha carries 2 points from two rounds no board shows: his performance is over
# the one game the boards show, and the table says so ("1g").
EVENTS_TOML = (
    f'[[events]]\nname = "{EVENT}"\nformat = "swiss"\nsims = 2000\n'
    f'points_before = {{ "Alpha, Ann" = 2.0 }}\n\n'
    f'[events.players."Beta"]\ngames = 12\n'
)


def game(rnd: str, white: str, black: str, elo: int, moves: str, result: str) -> str:
    return (
        f'[Event "{EVENT}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[WhiteElo "{elo}"]\n[BlackElo "{elo}"]\n[Result "{result}"]\n\n{moves} {result}\n\n'
    )


# Alpha mates Beta on ply 7; Gamma and Delta play on.
PGN = game(
    "1.1", "Alpha, Ann", "Beta, Bob", 2600, "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#", "1-0"
) + game("1.2", "Gamma, Gil", "Delta, Dan", 2000, "1. d4 d5 2. c4 e6 3. Nc3 Nf6", "*")

# Hand-computed: equal ratings, E = 1/2; a win is +K/2, a loss -K/2; a 100 % score
# performs at Ra + 800, 0 % at Ra - 800.
EXPECTED = {
    "Alpha, Ann": {
        "points": "3/3",
        "performance": "3400",
        "perf_games": "1g",
        "change": "+5.0",
        "k": "K10",
    },
    "Beta, Bob": {
        "points": "0/1",
        "performance": "1800",
        "perf_games": "",
        "change": "−20.0",
        "k": "K40",
    },
    "Gamma, Gil": {"points": "0/0", "performance": "–", "perf_games": "", "change": "–", "k": ""},
    "Delta, Dan": {"points": "0/0", "performance": "–", "perf_games": "", "change": "–", "k": ""},
}


def api(serve: Serve) -> dict[str, Any] | None:
    quoted = urllib.parse.quote(EVENT)
    try:
        with urllib.request.urlopen(f"{serve.url}/api/standings/{quoted}", timeout=2) as r:
            data: dict[str, Any] = json.loads(r.read())
            return data
    except urllib.error.HTTPError:
        return None


def page_rows(page: Any) -> dict[str, dict[str, str]]:
    rows = page.eval_on_selector_all(
        '[data-testid="player-row"]',
        """rows => rows.map(r => {
            const t = (id) => r.querySelector(`[data-testid="${id}"]`)?.textContent ?? "";
            return {
                name: t("player-player"),
                points: t("player-points"),
                performance: t("player-performance-value"),
                perf_games: t("player-performance-games"),
                change: t("player-change-value"),
                k: t("player-k"),
                perceived: t("player-perceived"),
                accuracy: t("player-accuracy"),
                accuracy_title: r.querySelector('[data-testid="player-accuracy"]').title,
            };
        })""",
    )
    return {r.pop("name"): r for r in rows}


def accuracy_text(a: dict[str, Any] | None) -> str:
    return "–" if a is None or a["overall"] is None else f"{a['overall']:.1f}"


@pytest.fixture(scope="module")
def players_round(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[tuple[Serve, ReplayThread]]:
    tmp = tmp_path_factory.mktemp("players-round")
    replay = ReplayThread(PGN)
    serve = Serve(tmp, replay.url, engine_path, matches=EVENTS_TOML)
    try:
        serve.start()
        yield serve, replay
    finally:
        serve.stop()
        replay.close()


def test_the_player_table_shows_performance_rating_change_and_accuracy(
    players_round: tuple[Serve, ReplayThread], page_factory: Callable[..., Any]
) -> None:
    serve, replay = players_round
    replay.advance(len(replay.replay.timeline))

    def done(m: dict[str, Any] | None) -> dict[str, Any] | None:
        """The mate counted, and every player's moves evaluated into his accuracy."""
        if not m or m["finished"] != 1:
            return None
        rows = {r["name"]: r for r in m["rows"]}
        ok = all((rows[n]["accuracy"] or {}).get("moves", 0) >= 3 for n in EXPECTED)
        return m if ok else None

    msg = wait_until(lambda: done(api(serve)), 90, "the mate and every move's accuracy")
    rows = {r["name"]: r for r in msg["rows"]}
    alpha, beta = rows["Alpha, Ann"], rows["Beta, Bob"]
    assert (alpha["performance"], alpha["rating_change"], alpha["k"]) == (3400.0, 5.0, 10)
    assert (beta["performance"], beta["rating_change"], beta["k"]) == (1800.0, -20.0, 40)
    assert (alpha["rated_games"], rows["Gamma, Gil"]["rated_games"]) == (1, 0)
    # a mate in four: Alpha played well, Beta did not (3...Nf6?? allowed it)
    assert alpha["accuracy"]["overall"] > beta["accuracy"]["overall"]

    page = page_factory(1280, 720)
    page.goto(f"{serve.url}/overlay/static/widget-players.html?event={urllib.parse.quote(EVENT)}")
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true", timeout=15_000)

    def shown_as(m: dict[str, Any]) -> bool:
        shown = page_rows(page)
        for r in m["rows"]:
            want = EXPECTED[r["name"]]
            got = shown.get(r["name"])
            if got is None or any(got[k] != v for k, v in want.items()):
                return False
            if got["accuracy"] != accuracy_text(r["accuracy"]):
                return False
            if got["perceived"] != ("–" if r["perceived"] is None else got["perceived"]):
                return False
        return True

    wait_until(lambda: shown_as(api(serve) or {"rows": []}), 20, "the page's table to be the API's")
    expect(page.get_by_test_id("players-event")).to_have_text(EVENT)
    latest = api(serve)
    assert latest is not None
    shown = page_rows(page)
    assert shown["Alpha, Ann"]["accuracy_title"].endswith(
        f"{latest['rows'][0]['accuracy']['moves']} moves"
    )
    for r in latest["rows"]:
        assert shown[r["name"]]["accuracy"] != "–"


def test_the_index_links_each_events_player_table(
    players_round: tuple[Serve, ReplayThread], page_factory: Callable[..., Any]
) -> None:
    serve, _ = players_round
    page = page_factory()
    page.goto(f"{serve.url}/")
    url = page.get_by_test_id("players-url").first
    expect(url).to_have_value(
        f"{serve.url}/overlay/static/widget-players.html?event=Players+Test+Open&bg=solid",
        timeout=15_000,
    )
