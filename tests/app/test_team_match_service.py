"""A team event through the whole service: boards whose WhiteTeam/BlackTeam
name teams give the event's standings message a team table (team standings
and the latest round's match board by board, with its odds), live; with the
event's format, each team's chances of winning the event, the same numbers
as team_win_odds gives on the same boards."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from team_games import team_game

from livegain.app.live_standings import StandingsJob, compute_standings
from livegain.config import EventConfig
from livegain.core.event_format import format_from_text
from livegain.core.event_table import SWISS_SIMS, GameEntry
from livegain.core.snapshot import PlayerInfo, player_key
from livegain.core.standings import Result
from livegain.core.swiss_odds import MIN_PRECISE
from livegain.core.team_odds import team_win_odds
from livegain.engine.pool import EnginePool
from livegain.feeds.resolve import standings_entry

from .conftest import relayed_event

EVENT = "Team Test League"
MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
SLOW = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7"


def game(rnd: str, white: str, wt: str, black: str, bt: str, moves: str, result: str) -> str:
    return team_game(EVENT, rnd, white, wt, black, bt, moves, result)


# Round 1 between the Rooks and the Knights, 4 boards (colours alternating):
# board 1 the Rooks mate, board 2 a game going on, boards 3-4 no move yet.
PGN = (
    game("1.1", "Rook, Ann", "Rooks", "Knight, Bob", "Knights", MATE, "1-0")
    + game("1.2", "Knight, Cy", "Knights", "Rook, Dee", "Rooks", SLOW, "*")
    + game("1.3", "Rook, Eve", "Rooks", "Knight, Fay", "Knights", "", "*")
    + game("1.4", "Knight, Gus", "Knights", "Rook, Hal", "Rooks", "", "*")
)


@pytest.mark.engine
async def test_a_team_match_board_by_board_with_its_odds(tmp_path: Path, pool: EnginePool) -> None:
    events = [{"name": EVENT, "format": "swiss", "sims": 2000}]
    async with relayed_event(tmp_path, pool, PGN, events) as (replay, _service, ws):
        await replay.advance_all()

        async def latest(check: Any) -> dict[str, Any]:
            async with asyncio.timeout(60):
                while True:
                    msg = json.loads(await ws.recv())
                    if msg["type"] == "standings" and check(msg):
                        return msg

        msg = await latest(
            lambda m: (
                m["teams"] is not None
                and m["finished"] == 1
                and m["teams"]["matches"][0]["boards"][1]["live"]
            )
        )
        teams = msg["teams"]
        assert teams["round"] == 1 and teams["tiebreaks"] == ["OSB", "GP", "BH-C1"]
        (match,) = teams["matches"]
        assert (match["a"], match["b"], match["score_a"], match["score_b"]) == (
            "Rooks",
            "Knights",
            1.0,
            0.0,
        )
        assert match["boards_left"] == 3
        boards = match["boards"]
        assert [b["board"] for b in boards] == [1, 2, 3, 4]
        assert [b["a_white"] for b in boards] == [True, False, True, False]
        assert boards[0]["result"] == "1-0" and boards[0]["wdl"] is None
        assert [b["live"] for b in boards] == [False, True, False, False]
        assert all(sum(b["wdl"]) == pytest.approx(1000, abs=0.5) for b in boards[1:])
        # the Rooks, a board up with three to play, are the favourites
        assert match["win"] > match["loss"]
        assert match["win"] + match["draw"] + match["loss"] == pytest.approx(1, abs=1e-3)
        # no match finished yet: both teams on 0
        assert {r["team"]: r["match_points"] for r in teams["rows"]} == {
            "Rooks": 0.0,
            "Knights": 0.0,
        }


# A 4-team round robin of 2 boards a match: round 1 between the Rooks and the
# Knights (over: 1½-½) and the Bishops and the Queens (board 1 over, board 2
# going on); rounds 2-3 still to pair.
LEAGUE = (
    game("1.1", "Rook, Ann", "Rooks", "Knight, Bob", "Knights", MATE, "1-0")
    + game("1.2", "Knight, Cy", "Knights", "Rook, Dee", "Rooks", SLOW, "1/2-1/2")
    + game("1.3", "Bishop, Eve", "Bishops", "Queen, Fay", "Queens", MATE, "1-0")
    + game("1.4", "Queen, Gus", "Queens", "Bishop, Hal", "Bishops", SLOW, "*")
)


@pytest.mark.engine
async def test_a_team_round_robin_s_odds_are_those_of_every_match_left(
    tmp_path: Path, pool: EnginePool
) -> None:
    events = [{"name": EVENT, "format": "round-robin", "sims": 2000, "top": 2}]
    async with relayed_event(tmp_path, pool, LEAGUE, events) as (replay, service, ws):
        await replay.advance_all()
        # Each message against team_win_odds on the boards as the service reads
        # them now (the board in progress: the W/D/L it shows): once the engine
        # has evaluated every position, the message is the same computation.
        latest: dict[str, Any] | None = None
        direct: dict[str, tuple[float, float, float, float]] = {}
        deadline = asyncio.get_running_loop().time() + 90
        while asyncio.get_running_loop().time() < deadline:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    msg = json.loads(await ws.recv())
                    if msg["type"] == "standings" and msg["teams"] is not None:
                        latest = msg
            if latest is not None and latest["finished"] == 3:
                direct = league_odds(service.standings.games_of(EVENT))
                if direct and chances(latest) == direct:
                    break
        assert latest is not None and direct, "no message with round 1's board in progress"
        assert chances(latest) == direct
        teams = latest["teams"]
        assert (teams["sims"], teams["top_k"], teams["rounds"]) == (2000, 2, 3)
        assert teams["note"] is None
        assert sum(r["win"] for r in teams["rows"]) == pytest.approx(1.0)
        assert sum(r["top"] for r in teams["rows"]) == pytest.approx(2.0)
        assert all(r["win_se"] > 0 for r in teams["rows"] if 0 < r["win"] < 1)
        # the players' own odds are not computed in a team event
        assert all(r["win"] is None for r in latest["rows"])
        assert latest["note"] is not None and "team event" in latest["note"]


def chances(msg: dict[str, Any]) -> dict[str, tuple[float, float, float, float]]:
    return {r["team"]: (r["win"], r["win_se"], r["top"], r["top_se"]) for r in msg["teams"]["rows"]}


def league_odds(games: list[GameEntry]) -> dict[str, tuple[float, float, float, float]]:
    """team_win_odds called directly on LEAGUE as it stands: round 1's finished
    boards, the board in progress with its shown W/D/L (none shown yet: no odds
    to compare), the pairs of teams not met as rounds 2 and 3, the Olympiad's
    tie-breaks, the event's simulations and top, seed 0, the boards' ratings-only
    model for what is not played."""
    key = {p.name: player_key(p) for g in games for p in (g.white, g.black)}
    live = [g for g in games if g.result == "*"]
    if len(live) != 1 or live[0].wdl is None:
        return {}
    team_of = {key[name]: team for team, names in TEAMS.items() for name in names}
    odds = team_win_odds(
        team_of,
        dict.fromkeys(team_of, 2400.0),
        [
            Result.game(key["Rook, Ann"], key["Knight, Bob"], "1-0", 1),
            Result.game(key["Knight, Cy"], key["Rook, Dee"], "1/2-1/2", 1),
            Result.game(key["Bishop, Eve"], key["Queen, Fay"], "1-0", 1),
        ],
        [(key["Queen, Gus"], key["Bishop, Hal"], live[0].wdl)],
        round=1,
        rounds_total=3,
        # the pairs not met, each in the first round where neither team plays yet
        schedule=[
            [("Bishops", "Knights"), ("Queens", "Rooks")],
            [("Bishops", "Rooks"), ("Knights", "Queens")],
        ],
        boards=2,
        tiebreaks=("OSB", "GP", "BH-C1"),
        sims=2000,
        seed=0,
        top_k=2,
        prior=next((g.prior for g in games if g.prior is not None), None),
    )
    return {t: (c.p_first, c.se_first, c.p_top, c.se_top) for t, c in odds.items()}


TEAMS = {
    "Rooks": ("Rook, Ann", "Rook, Dee"),
    "Knights": ("Knight, Bob", "Knight, Cy"),
    "Bishops": ("Bishop, Eve", "Bishop, Hal"),
    "Queens": ("Queen, Fay", "Queen, Gus"),
}


def test_a_source_s_team_event_gets_team_odds_from_the_entry_watch_writes() -> None:
    """``livegain watch``'s ``[[events]]`` entry for a team event: a team round
    robin's pairs of teams, a team Swiss's rounds (the source's): either way
    the service's computation has the teams' chances."""
    games = [
        GameEntry(
            board_id=f"b{board}",
            white=PlayerInfo(f"{white} {board}", rating=2400 + 10 * board),
            black=PlayerInfo(f"{black} {board}", rating=2400),
            round=f"1.{board}",
            result="1-0" if board == 1 else "*",
            plies=0 if board > 1 else 40,
            board=board,
            white_team=white,
            black_team=black,
        )
        for board, white, black in ((1, "A", "B"), (2, "B", "A"), (3, "C", "D"), (4, "D", "C"))
    ]
    for said, rounds, fmt in (
        ("4-team round robin", 3, "round-robin"),
        ("Olympiad", 11, "swiss"),
        ("Team Swiss", 5, "swiss"),
    ):
        entry = standings_entry(EVENT, format_from_text(said), None, rounds)
        assert entry is not None and entry["format"] == fmt
        job = StandingsJob("test", EVENT, EventConfig(**entry).rules(), {}, None, 1, games)
        data = compute_standings(job)
        assert data is not None
        teams = json.loads(data)["teams"]
        assert (teams["rounds"], teams["note"]) == (rounds, None)
        # simulated until every chance of first place is known to 0.005, at most SWISS_SIMS
        assert MIN_PRECISE <= teams["sims"] <= SWISS_SIMS
        assert max(r["win_se"] for r in teams["rows"]) <= 0.005
        assert sum(r["win"] for r in teams["rows"]) == pytest.approx(1.0)
        assert sum(r["top"] for r in teams["rows"]) == pytest.approx(3.0)
