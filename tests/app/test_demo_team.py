"""The demo's team event (livegain/data/demo-team.pgn, made by
bench/make_demo_games.py --team): a round robin of four teams of four, served
by `livegain demo` as a Lichess broadcast and followed as the demo follows it
(the same relay, the same look-up, the real service with Stockfish). Its
standings message has a team table: after rounds 1-2 the team standings are
the crosstable the file gives, and round 3's matches are shown board by board
with their chances while they are played."""

from __future__ import annotations

import asyncio
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from websockets.asyncio.client import ClientConnection, connect

from livegain.app.service import Service
from livegain.cli.demo import (
    DEMO_TEAM_EVENT,
    DEMO_TEAM_FILE,
    DEMO_TEAM_LIVE_ROUND,
    data_path,
    follow,
    team_relay,
)
from livegain.core.scoring import outcome
from livegain.core.team_standings import TeamGame, TeamStandings, team_matches
from livegain.engine.pool import EnginePool

from .conftest import running, settings_for, toy_model, ws_url

Headers = dict[str, str]


def demo_team_games() -> list[Headers]:
    """The tags of every game of the demo Team Cup, in the file's order."""
    stream = io.StringIO(data_path(DEMO_TEAM_FILE).read_text(encoding="utf-8"))
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(dict(game.headers))
    return games


def round_of(h: Headers) -> int:
    return int(h["Round"].split(".")[0])


def crosstable(games: list[Headers], last: int) -> dict[str, dict[str, Any]]:
    """Each team's match points (2 a match won, 1 drawn), game points and record
    over the matches of rounds 1..last, counted from the games' tags; each
    team's rank and tie-breaks (the Olympiad's order) from those matches."""
    scores: dict[tuple[int, frozenset[str]], Counter[str]] = {}
    for h in games:
        if round_of(h) <= last:
            w, b, _ = outcome(h["Result"])
            match = scores.setdefault(
                (round_of(h), frozenset((h["WhiteTeam"], h["BlackTeam"]))), Counter()
            )
            match[h["WhiteTeam"]] += w
            match[h["BlackTeam"]] += b
    table: dict[str, dict[str, Any]] = {}
    for (_, teams), match in scores.items():
        for team in teams:
            own = match[team]
            other = sum(match.values()) - own
            row = table.setdefault(
                team, {"match_points": 0.0, "game_points": 0.0, "won": 0, "drawn": 0, "lost": 0}
            )
            row["match_points"] += 2.0 if own > other else 1.0 if own == other else 0.0
            row["game_points"] += own
            row["won" if own > other else "drawn" if own == other else "lost"] += 1
    standings = TeamStandings.from_matches(
        team_matches(
            TeamGame(round_of(h), h["WhiteTeam"], h["BlackTeam"], h["Result"])
            for h in games
            if round_of(h) <= last
        )
    )
    for r in standings.rows:
        table[r.team]["rank"] = r.rank
        table[r.team]["tiebreaks"] = dict(zip(standings.tiebreaks, r.tiebreaks, strict=True))
    return table


def shown_rows(msg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    keys = ("match_points", "game_points", "won", "drawn", "lost", "rank", "tiebreaks")
    return {r["team"]: {k: r[k] for k in keys} for r in msg["teams"]["rows"]}


def test_the_demo_team_cup_is_a_round_robin_of_four_teams_of_four() -> None:
    games = demo_team_games()
    assert {h["Event"] for h in games} == {DEMO_TEAM_EVENT}
    players: dict[str, set[str]] = {}
    for h in games:
        for side in ("White", "Black"):
            players.setdefault(h[f"{side}Team"], set()).add(h[side])
            assert 1600 <= int(h[f"{side}Elo"]) <= 2150
        assert h["Result"] in ("1-0", "0-1", "1/2-1/2")
    assert len(players) == 4 and all(len(p) == 4 for p in players.values())
    assert len(set().union(*players.values())) == 16
    met = Counter(frozenset((h["WhiteTeam"], h["BlackTeam"])) for h in games)
    assert len(met) == 6 and set(met.values()) == {4}  # each pair of teams: one match
    for rnd in (1, 2, 3):
        boards = [h for h in games if round_of(h) == rnd]
        assert [int(h["Board"]) for h in boards] == list(range(1, 9))
        assert [h["Round"] for h in boards] == [f"{rnd}.{h['Board']}" for h in boards]
        for first in (0, 4):  # a match's first team White on its boards 1 and 3
            team_a = boards[first]["WhiteTeam"]
            assert [h["WhiteTeam"] == team_a for h in boards[first : first + 4]] == [
                True,
                False,
                True,
                False,
            ]


@pytest.mark.engine
async def test_the_demo_team_cup_followed_live(tmp_path: Path, pool: EnginePool) -> None:
    games = demo_team_games()
    live = [h for h in games if round_of(h) == DEMO_TEAM_LIVE_ROUND]
    relay = team_relay(speed=1.0)
    async with relay:
        # As the demo starts it: the rounds before the live one over.
        for rnd in range(1, DEMO_TEAM_LIVE_ROUND):
            relay.begin(rnd)
            await relay.advance(rnd)
            relay.finish(rnd)
        found, feed = await follow(relay, interval=0.3)
        assert found.event == DEMO_TEAM_EVENT and found.standings is not None
        # fewer simulations of the players' table than the demo's: the team table has none
        events = [{**found.standings, "sims": 2000}]
        settings = settings_for(tmp_path, feeds=[feed], events=events)
        service = Service(settings, evaluator=pool, perceived_model=toy_model())
        async with running(service), connect(ws_url(service)) as ws:
            assert json.loads(await ws.recv())["type"] == "hello"
            await ws.send(json.dumps({"type": "subscribe_standings", "events": "*"}))

            # Rounds 1-2 over, round 3 paired: the team standings of rounds 1-2.
            msg = await standings(ws, lambda m: m["finished"] == 16)
            teams = msg["teams"]
            assert teams["tiebreaks"] == ["OSB", "GP", "BH-C1"]
            assert shown_rows(msg) == crosstable(games, 2)
            assert [r["rank"] for r in teams["rows"]] == sorted(r["rank"] for r in teams["rows"])

            # Round 3 live: its two matches, board by board, with their chances.
            relay.begin(DEMO_TEAM_LIVE_ROUND)
            await relay.advance(DEMO_TEAM_LIVE_ROUND, 80)  # about 10 plies a board
            msg = await standings(
                ws,
                lambda m: all(b["live"] for x in m["teams"]["matches"] for b in x["boards"]),
            )
            teams = msg["teams"]
            assert teams["round"] == DEMO_TEAM_LIVE_ROUND
            assert shown_rows(msg) == crosstable(games, 2)
            assert len(teams["matches"]) == 2
            for match, first in zip(teams["matches"], (0, 4), strict=True):
                boards = live[first : first + 4]
                assert (match["a"], match["b"]) == (boards[0]["WhiteTeam"], boards[0]["BlackTeam"])
                assert [(b["board"], b["white"], b["black"]) for b in match["boards"]] == [
                    (int(h["Board"]), h["White"], h["Black"]) for h in boards
                ]
                assert [b["a_white"] for b in match["boards"]] == [True, False, True, False]
                assert (match["score_a"], match["score_b"], match["boards_left"]) == (0, 0, 4)
                for b in match["boards"]:
                    assert b["result"] == "*" and sum(b["wdl"]) == pytest.approx(1000, abs=0.5)
                assert match["win"] + match["draw"] + match["loss"] == pytest.approx(1, abs=1e-3)
                assert 0 < match["expected_a"] < 4
            # the source says "4-team round robin": each team's chances of winning the
            # cup, the last round simulated from the boards
            assert found.standings["format"] == "round-robin"
            assert (teams["sims"], teams["rounds"], teams["top_k"], teams["note"]) == (
                2000,
                3,
                3,
                None,
            )
            assert sum(r["win"] for r in teams["rows"]) == pytest.approx(1.0)
            assert sum(r["top"] for r in teams["rows"]) == pytest.approx(3.0)
            assert all(0 <= r["win"] <= r["top"] <= 1 for r in teams["rows"])
            assert msg["note"] is not None and "team event" in msg["note"]
            assert all(r["win"] is None for r in msg["rows"])  # no player odds

            # Round 3 over: the standings of the whole event.
            await relay.advance(DEMO_TEAM_LIVE_ROUND)
            relay.finish(DEMO_TEAM_LIVE_ROUND)
            msg = await standings(ws, lambda m: m["finished"] == len(games))
            assert shown_rows(msg) == crosstable(games, 3)
            for match, first in zip(msg["teams"]["matches"], (0, 4), strict=True):
                a = sum(
                    outcome(h["Result"])[0 if h["WhiteTeam"] == match["a"] else 1]
                    for h in live[first : first + 4]
                )
                assert (match["score_a"], match["score_b"], match["boards_left"]) == (a, 4 - a, 0)
                over = (float(a > 2), float(a == 2), float(a < 2))
                assert (match["win"], match["draw"], match["loss"]) == pytest.approx(over)


async def standings(ws: ClientConnection, check: Any) -> dict[str, Any]:
    """The next standings message of the Team Cup with a team table that passes ``check``."""
    async with asyncio.timeout(45):
        while True:
            msg = json.loads(await ws.recv())
            if (
                msg["type"] == "standings"
                and msg["event"] == DEMO_TEAM_EVENT
                and msg["teams"] is not None
                and check(msg)
            ):
                return msg
