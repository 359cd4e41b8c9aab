"""The team widgets (``widget-team-standings.html``, ``widget-team-match.html``)
against a real ``livegain serve`` following a replayed team match: the match's
score, its chances and each board's result or chances are the standings
message's ``teams`` part, and the team standings its rows. Screenshots land in
artifacts/overlays/."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from team_games import team_game

from ._live import Serve, save_artifact, serving_played, standings_api, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.engine]

EVENT = "Team Widget League"
EVENTS_TOML = f'[[events]]\nname = "{EVENT}"\nformat = "swiss"\nrounds = 3\nsims = 2000\n'
MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
OPEN = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7"


def game(rnd: str, white: str, wt: str, black: str, bt: str, moves: str, result: str) -> str:
    return team_game(EVENT, rnd, white, wt, black, bt, moves, result)


# Round 1 finished (the Rooks 1.5-0.5 over the Knights; the Bishops 1-1 the
# Queens); round 2, the Rooks against the Bishops: board 1 mated, board 2 going on.
PGN = (
    game("1.1", "Rook, Ann", "Rooks", "Knight, Bob", "Knights", MATE, "1-0")
    + game("1.2", "Knight, Cy", "Knights", "Rook, Dee", "Rooks", OPEN, "1/2-1/2")
    + game("1.1", "Bishop, Eve", "Bishops", "Queen, Fay", "Queens", OPEN, "1-0")
    + game("1.2", "Queen, Gus", "Queens", "Bishop, Hal", "Bishops", OPEN, "1-0")
    + game("2.1", "Rook, Ann", "Rooks", "Bishop, Eve", "Bishops", MATE, "1-0")
    + game("2.2", "Bishop, Hal", "Bishops", "Rook, Dee", "Rooks", OPEN, "*")
)


def api(serve: Serve) -> dict[str, Any] | None:
    return standings_api(serve, EVENT)


@pytest.fixture(scope="module")
def league(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[Serve]:
    tmp = tmp_path_factory.mktemp("team-league")
    with serving_played(tmp, PGN, engine_path, EVENTS_TOML) as serve:
        yield serve


def settled(serve: Serve) -> dict[str, Any] | None:
    m = api(serve)
    if not m or not m.get("teams") or m["finished"] != 5:
        return None
    boards = m["teams"]["matches"][0]["boards"]
    return m if boards[1]["live"] and boards[1]["wdl"] is not None else None


def test_the_team_match_widget_shows_each_board_and_the_match_s_chances(
    league: Serve, page_factory: Callable[..., Any]
) -> None:
    msg = wait_until(lambda: settled(league), 90, "round 2's match with a board in progress")
    match = msg["teams"]["matches"][0]
    assert (match["a"], match["b"], match["score_a"], match["score_b"]) == (
        "Rooks",
        "Bishops",
        1.0,
        0.0,
    )
    page = page_factory(1280, 720)
    page.goto(
        f"{league.url}/overlay/static/widget-team-match.html?event={urllib.parse.quote(EVENT)}"
        "&team=Bishops"
    )
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true", timeout=15_000)

    def pct(p: float) -> str:
        return f"{round(p * 100)} %"

    def shown() -> bool:
        m = settled(league)
        if m is None:
            return False
        latest = m["teams"]["matches"][0]
        texts = [
            page.get_by_test_id(t).inner_text() for t in ("match-win", "match-draw", "match-loss")
        ]
        return texts == [pct(latest["win"]), pct(latest["draw"]), pct(latest["loss"])]

    wait_until(shown, 20, "the page's chances to be the API's")
    expect(page.get_by_test_id("match-a")).to_have_text("Rooks")
    expect(page.get_by_test_id("match-b")).to_have_text("Bishops")
    expect(page.get_by_test_id("match-score")).to_have_text("1 – 0")
    expect(page.get_by_test_id("board-result")).to_have_text("1-0")
    expect(page.get_by_test_id("board-live")).to_have_count(1)
    expect(page.get_by_test_id("board-bar")).to_have_count(1)
    # the Rooks' players are marked on their boards: White on 1, Black on 2
    rows = page.get_by_test_id("match-board")
    expect(rows.nth(0).get_by_test_id("board-white")).to_have_class("tm-player tm-a")
    expect(rows.nth(1).get_by_test_id("board-black")).to_have_class("tm-player tm-a")
    save_artifact(page.get_by_test_id("team-match"), "widget-team-match.png", omit_background=True)


def test_the_team_standings_widget_ranks_the_finished_matches(
    league: Serve, page_factory: Callable[..., Any]
) -> None:
    msg = wait_until(lambda: settled(league), 90, "the finished round 1")
    rows = {r["team"]: r for r in msg["teams"]["rows"]}
    assert (rows["Rooks"]["match_points"], rows["Rooks"]["game_points"]) == (2.0, 1.5)
    assert (rows["Bishops"]["match_points"], rows["Queens"]["match_points"]) == (1.0, 1.0)
    page = page_factory(1280, 720)
    page.goto(
        f"{league.url}/overlay/static/widget-team-standings.html?event={urllib.parse.quote(EVENT)}"
    )
    expect(page.get_by_test_id("widget")).to_have_attribute("data-fresh", "true", timeout=15_000)
    names = page.get_by_test_id("team-name")
    expect(names).to_have_count(4)
    expect(names.first).to_have_text("Rooks")
    expect(page.get_by_test_id("team-mp").first).to_have_text("2")
    expect(page.get_by_test_id("team-gp").first).to_have_text("1½")
    expect(page.get_by_test_id("team-record").first).to_have_text("1-0-0")
    # a Swiss of teams of 3 rounds: every match left simulated, each team's chances
    teams = msg["teams"]
    assert (teams["sims"], teams["top_k"], teams["rounds"]) == (2000, 3, 3)
    assert abs(sum(r["win"] for r in teams["rows"]) - 1.0) < 1e-9
    expect(page.get_by_test_id("teams-head-win")).to_have_text("1st")
    expect(page.get_by_test_id("teams-head-top")).to_have_text("Top 3")

    def shown() -> list[tuple[str, float]]:
        cells = page.eval_on_selector_all(
            '[data-testid="team-row"]',
            "rows => rows.map(r => [r.dataset.team, "
            "r.querySelector('[data-testid=\"team-win\"]').dataset.p])",
        )
        return [(team, float(p)) for team, p in cells]

    wait_until(
        lambda: (
            (m := settled(league)) is not None
            and shown() == [(r["team"], r["win"]) for r in m["teams"]["rows"]]
        ),
        20,
        "the page to show the message's chances",
    )
    save_artifact(
        page.get_by_test_id("team-standings"), "widget-team-standings.png", omit_background=True
    )
