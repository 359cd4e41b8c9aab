"""The standings widget (``/overlay/static/widget-standings.html``) against a real
``livegain serve`` following a replayed round robin: its rows are those of
``/api/standings``, and when a result arrives the points and the chances of first
place change on the page. Each player's form (with its difference to his rating) and
perceived rating over the event are the message's, the perceived rating's interval
on hover. The index page links the widget for each event."""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import ReplayThread, Serve, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.engine]

EVENT = "Widget Test RR"
EVENTS_TOML = f'[[events]]\nname = "{EVENT}"\nformat = "round-robin"\nsims = 20000\n'


def game(rnd: str, white: str, black: str, moves: str, result: str) -> str:
    return (
        f'[Event "{EVENT}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[WhiteElo "2600"]\n[BlackElo "2600"]\n[WhiteTitle "GM"]\n[WhiteFed "NOR"]\n'
        f'[Result "{result}"]\n\n{moves} {result}\n\n'
    )


# Round 1 of four players: Black resigns a level position (1-0 with the 14th ply);
# the other game goes on (two moves each: too early for a rating). Four pairings are
# on no board yet.
PGN = game(
    "1.1",
    "Alpha, Ann",
    "Beta, Bob",
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6",
    "1-0",
) + game("1.2", "Gamma, Gil", "Delta, Dan", "1. d4 d5 2. c4 e6", "*")
RESIGNED_AT = 14


def chance_text(p: float, se: float) -> str:
    """What the page shows for a chance (standings.js chanceText)."""
    pct = p * 100
    if p in (0.0, 1.0):
        return f"{pct:.0f} %"
    if pct < 0.1:
        text = "<0.1 %"
    elif pct > 99.9:
        text = ">99.9 %"
    else:
        text = f"{pct:.{0 if 10 <= pct <= 90 else 1}f} %"
    return f"{text}±{se * 100:.1f}"


def points_text(x: float) -> str:
    whole, half = int(x), x - int(x) >= 0.5
    return (f"{whole}½" if whole else "½") if half else str(whole)


def tb_text(v: float | None) -> str:
    return "–" if v is None else f"{round(v, 2):g}"


def form_text(form: dict[str, Any] | None, official: int | None) -> str:
    """What the page shows for a form (standings.js formText): "2631(+31)"."""
    if form is None:
        return "–"
    if form["early"]:
        return "too early"
    shown = f"{round(form['rating'])}"
    if official:
        d = round(form["rating"]) - official
        shown += "(0)" if d == 0 else f"({'+' if d > 0 else '−'}{abs(d)})"
    return shown


def perceived_text(p: dict[str, Any] | None) -> tuple[str, str, str]:
    """The perceived rating's number, its title (interval, moves, model) and label."""
    if p is None:
        return "–", "", ""
    if p["early"]:
        moves = f"{p['moves']} move{'' if p['moves'] == 1 else 's'} so far"
        return "too early", f"{moves} · model {p['model']}", ""
    moves = f"{p['moves']} move{'' if p['moves'] == 1 else 's'}"
    title = f"95 % interval {round(p['low'])}–{round(p['high'])} · {moves} · model {p['model']}"
    return f"{round(p['rating'])}", title, p["label"] or ""


def api(serve: Serve) -> dict[str, Any] | None:
    quoted = urllib.parse.quote(EVENT)
    try:
        with urllib.request.urlopen(f"{serve.url}/api/standings/{quoted}", timeout=2) as r:
            data: dict[str, Any] = json.loads(r.read())
            return data
    except urllib.error.HTTPError:
        return None


def page_rows(page: Any) -> list[dict[str, Any]]:
    return list(
        page.eval_on_selector_all(
            '[data-testid="standings-row"]',
            """rows => rows.map(r => ({
                key: r.dataset.key,
                live: r.dataset.live === "true",
                rank: r.querySelector('[data-testid="row-rank"]').textContent,
                name: r.querySelector('[data-testid="row-player"]').textContent,
                points: r.querySelector('[data-testid="row-points"]').textContent,
                tbs: [...r.querySelectorAll('[data-testid="row-tb"]')]
                    .map(t => [t.dataset.tb, t.textContent]),
                chance: r.querySelector('[data-testid="row-win"]').textContent,
                p: Number(r.querySelector('[data-testid="row-win"]').dataset.p),
                dot: r.querySelector('[data-testid="row-live"]') !== null,
                form: r.querySelector('[data-testid="row-form"]').textContent,
                perceived: r.querySelector('[data-testid="row-perceived-value"]').textContent,
                perceived_title: r.querySelector('[data-testid="row-perceived"]').title,
                label: r.querySelector('[data-testid="row-perceived-label"]')?.textContent ?? "",
            }))""",
        )
    )


def expected_rows(msg: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "key": r["key"],
            "live": r["live"],
            "rank": str(r["rank"]),
            "name": r["name"],
            "points": points_text(r["points"]),
            "tbs": [[tb, tb_text(r["tiebreaks"][tb])] for tb in msg["tiebreaks"]],
            "chance": chance_text(r["win"], r["win_se"]),
            "p": r["win"],
            "dot": r["live"],
            "form": form_text(r["form"], r["rating"]),
            "perceived": perceived_text(r["perceived"])[0],
            "perceived_title": perceived_text(r["perceived"])[1],
            "label": perceived_text(r["perceived"])[2],
        }
        for r in msg["rows"]
    ]


@pytest.fixture(scope="module")
def standings_round(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[tuple[Serve, ReplayThread]]:
    tmp = tmp_path_factory.mktemp("standings-round")
    replay = ReplayThread(PGN)
    serve = Serve(tmp, replay.url, engine_path, matches=EVENTS_TOML)
    try:
        serve.start()
        yield serve, replay
    finally:
        serve.stop()
        replay.close()


def test_the_widget_shows_the_standings_and_follows_a_result(
    standings_round: tuple[Serve, ReplayThread], page_factory: Callable[..., Any]
) -> None:
    serve, replay = standings_round
    timeline = replay.replay.timeline
    last = next(k for k, (_, i, ply) in enumerate(timeline) if (i, ply) == (0, RESIGNED_AT))
    replay.advance(last)

    def rated(m: dict[str, Any]) -> bool:
        """Alpha's and Beta's moves so far evaluated into their form and perceived rating."""
        rows = [r for r in m["rows"] if r["name"] in ("Alpha, Ann", "Beta, Bob")]
        return all(r["form"] and r["perceived"] and not r["perceived"]["early"] for r in rows)

    before = wait_until(
        lambda: (m := api(serve)) and m["live"] == 2 and m["plies"] == last and rated(m) and m,
        90,
        "standings with both games in progress, Alpha and Beta rated",
    )
    page = page_factory(1280, 720)
    page.goto(f"{serve.url}/overlay/static/widget-standings.html?event={urllib.parse.quote(EVENT)}")
    widget = page.get_by_test_id("widget")
    expect(widget).to_have_attribute("data-fresh", "true", timeout=15_000)

    def shown_as(msg: dict[str, Any]) -> bool:
        return bool(page_rows(page) == expected_rows(msg))

    wait_until(lambda: shown_as(api(serve) or {}), 20, "the page's rows to be the API's")
    head = page.get_by_test_id("head-tb")
    expect(head).to_have_text(["DE", "SB", "WIN"])
    expect(page.get_by_test_id("standings-event")).to_have_text(EVENT)
    expect(page.get_by_test_id("head-win")).to_have_text("1st place")
    assert all(r["dot"] and r["points"] == "0" for r in page_rows(page))
    expect(page.get_by_test_id("head-form")).to_have_text("Form")
    expect(page.get_by_test_id("head-perceived")).to_have_text("Perceived")
    # the form and perceived rating of the message, against the official rating 2600
    shown = {r["name"]: r for r in page_rows(page)}
    for m in before["rows"]:
        row = shown[m["name"]]
        if m["name"] in ("Alpha, Ann", "Beta, Bob"):
            form = round(m["form"]["rating"])
            assert row["form"].startswith(str(form)) and row["form"] != str(form)
            assert row["perceived"] == str(round(m["perceived"]["rating"]))
            low, high = round(m["perceived"]["low"]), round(m["perceived"]["high"])
            assert f"95 % interval {low}–{high}" in row["perceived_title"]
            assert low <= round(m["perceived"]["rating"]) <= high
        else:  # two moves each
            assert row["perceived"] == "too early"
    note = page.get_by_test_id("standings-note")
    expect(note).to_contain_text("0 finished, 2 in progress, 4 to play")
    alpha_before = next(r["win"] for r in before["rows"] if r["name"] == "Alpha, Ann")

    # Black resigns: 1-0 arrives with the last move
    replay.advance(1)
    after = wait_until(
        lambda: (m := api(serve)) and m["finished"] == 1 and m, 60, "the result in the standings"
    )
    wait_until(
        lambda: (m := api(serve)) and rated(m) and shown_as(m), 20, "the page to show the result"
    )
    rows = {r["name"]: r for r in page_rows(page)}
    alpha, beta = rows["Alpha, Ann"], rows["Beta, Bob"]
    assert (alpha["rank"], alpha["points"], alpha["dot"]) == ("1", "1", False)
    assert (beta["points"], beta["dot"]) == ("0", False)
    assert rows["Gamma, Gil"]["dot"] and rows["Delta, Dan"]["dot"]
    # a win from a level position: Alpha's chance of first place goes up clearly
    alpha_after = next(r["win"] for r in after["rows"] if r["name"] == "Alpha, Ann")
    assert alpha["p"] == alpha_after
    assert alpha_after > alpha_before + 0.1
    se = next(r["win_se"] for r in after["rows"] if r["name"] == "Alpha, Ann")
    assert alpha["chance"] == chance_text(alpha_after, se) and "±" in alpha["chance"]
    expect(note).to_contain_text("1 finished, 1 in progress, 4 to play")
    assert math.isclose(sum(r["p"] for r in rows.values()), 1.0, abs_tol=0.01)


def test_the_index_links_each_events_standings(
    standings_round: tuple[Serve, ReplayThread], page_factory: Callable[..., Any]
) -> None:
    serve, _ = standings_round
    page = page_factory()
    page.goto(f"{serve.url}/")
    url = page.get_by_test_id("standings-url").first
    expect(url).to_have_value(
        f"{serve.url}/overlay/static/widget-standings.html?event=Widget+Test+RR&bg=solid",
        timeout=15_000,
    )
    page.get_by_test_id("pick-transparent").check()
    expect(url).to_have_value(
        f"{serve.url}/overlay/static/widget-standings.html?event=Widget+Test+RR&bg=transparent"
    )
