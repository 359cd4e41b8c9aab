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

    def shown() -> list[dict[str, Any]]:
        """Each row's team, its chances as the page holds and prints them, and its bar."""
        return page.eval_on_selector_all(  # type: ignore[no-any-return]
            '[data-testid="team-row"]',
            """rows => rows.map(r => {
                const win = r.querySelector('[data-testid="team-win"]');
                const top = r.querySelector('[data-testid="team-top"]');
                const bar = win.querySelector(".tm-chance-bar");
                return {team: r.dataset.team, p: Number(win.dataset.p), win: win.innerText,
                        top: top.innerText, bar: bar ? bar.getBoundingClientRect().width : 0};
            })""",
        )

    latest: list[dict[str, Any]] = []

    def same() -> bool:
        m = settled(league)
        if m is None:
            return False
        latest[:] = m["teams"]["rows"]
        return [(r["team"], r["p"]) for r in shown()] == [(r["team"], r["win"]) for r in latest]

    wait_until(same, 20, "the page to show the message's chances")
    # each chance printed as the players' standings print theirs: "9.4 % ±0.6"
    for cell, row in zip(shown(), latest, strict=True):
        for text, p, se in (
            (cell["win"], row["win"], row["win_se"]),
            (cell["top"], row["top"], row["top_se"]),
        ):
            assert_chance(text, p, se)
    # a bar beside each team's chance of first place, the leader's the longest
    widths = {c["team"]: c["bar"] for c in shown()}
    leader = max(latest, key=lambda r: r["win"])["team"]
    assert widths[leader] == max(widths.values()) > 0
    assert all(widths[r["team"]] == 0 for r in latest if r["win"] == 0)
    expect(page.get_by_test_id("teams-round")).to_have_text("round 2 of 3")
    save_artifact(
        page.get_by_test_id("team-standings"), "widget-team-standings.png", omit_background=True
    )


def assert_chance(text: str, p: float, se: float) -> None:
    """``text`` is the chance ``p`` in percent with its error ``se`` in percentage
    points, each to the precision shown ("87 % ±0.7", "9.4 % ±0.6", "0 %")."""
    number, _, err = text.replace("\n", " ").partition("%")
    number = number.strip()
    if number.startswith(("<", ">")):  # "<0.1 %", ">99.9 %"
        bound = float(number[1:])
        assert (100 * p < bound) if number[0] == "<" else (100 * p > bound), (text, p)
    else:
        digits = len(number.partition(".")[2])
        assert abs(float(number) - 100 * p) <= 0.5 * 10**-digits + 1e-9, (text, p)
    if p in (0.0, 1.0):
        assert err.strip() == "", text
    else:
        assert abs(float(err.strip().lstrip("±")) - 100 * se) <= 0.05 + 1e-9, (text, se)
