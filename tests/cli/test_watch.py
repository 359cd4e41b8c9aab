"""`livegain watch SOURCE...`: each kind of source named by its rule, looked up
in local fakes of the Lichess broadcast API and of LiveChess Cloud, and the
real service following them all (Stockfish, a WebSocket client)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from app.mirror import Mirror, evaluated
from broadcast_fakes import FakeLcc, FakeLichess, FakeRound, FakeTour

from livegain.cli import build_parser, main
from livegain.cli.watch import watch_settings
from livegain.feeds.base import (
    FileFeedConfig,
    LccFeedConfig,
    LichessFeedConfig,
    PgnHttpFeedConfig,
    PgnStreamFeedConfig,
)
from livegain.feeds.lichess import BroadcastRound, pick_round, read_rounds
from livegain.feeds.pgn import parse_pgn
from livegain.feeds.resolve import (
    LCC_LOOKUP_URL,
    Endpoints,
    LccRound,
    LccTournament,
    LichessRound,
    LichessTournament,
    PgnPath,
    PgnUrl,
    Resolved,
    ResolveError,
    classify,
    pick_lcc_round,
    resolve,
    resolve_all,
)
from livegain.relay.replay import Replay

REPO = Path(__file__).resolve().parents[2]
DEMO_ROUND = REPO / "livegain" / "data" / "demo-round.pgn"
DEMO_EVENT = REPO / "livegain" / "data" / "demo-event.pgn"
LCC_ID = "0b9b5e3e-1c2d-4e5f-8a9b-0123456789ab"
REAL = Endpoints()
DEPTH = 6

# --- each source named by its rule (pure) ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule", "source"),
    [
        (
            "https://lichess.org/broadcast/tata-steel-masters-2024/round-3/AbCd1234",
            "lichess-round",
            LichessRound("AbCd1234", "tata-steel-masters-2024", "round-3"),
        ),
        (  # a game's page: its round
            "https://lichess.org/broadcast/tata-steel-masters-2024/round-3/AbCd1234/XyZw9876",
            "lichess-round",
            LichessRound("AbCd1234", "tata-steel-masters-2024", "round-3"),
        ),
        (
            "lichess.org/broadcast/tata-steel-masters-2024/round-3/AbCd1234",
            "lichess-round",
            LichessRound("AbCd1234", "tata-steel-masters-2024", "round-3"),
        ),
        (
            "https://lichess.org/api/stream/broadcast/round/AbCd1234.pgn",
            "lichess-round",
            LichessRound("AbCd1234"),
        ),
        (
            "https://lichess.org/api/broadcast/round/AbCd1234.pgn",
            "lichess-round",
            LichessRound("AbCd1234"),
        ),
        (
            "https://lichess.org/broadcast/tata-steel-masters-2024/Qwer5678",
            "lichess-tournament",
            LichessTournament("Qwer5678"),
        ),
        (
            "https://lichess.org/api/broadcast/Qwer5678",
            "lichess-tournament",
            LichessTournament("Qwer5678"),
        ),
        (
            f"https://view.livechesscloud.com/#{LCC_ID}",
            "lcc-url",
            LccTournament(LCC_ID),
        ),
        (
            f"https://view.livechesscloud.com/#{LCC_ID}/4",
            "lcc-url",
            LccTournament(LCC_ID, round=4),
        ),
        (
            f"https://1.pool.livechesscloud.com/get/{LCC_ID}/tournament.json",
            "lcc-url",
            LccTournament(LCC_ID, "https://1.pool.livechesscloud.com/get"),
        ),
        (  # the shape is LiveChess Cloud's, whatever the host
            "http://127.0.0.1:8001/get/replay/round-2/index.json",
            "lcc-url",
            LccTournament("replay", "http://127.0.0.1:8001/get", 2),
        ),
        (LCC_ID, "lcc-id", LccTournament(LCC_ID)),
        (f"{LCC_ID}/2", "lcc-id", LccTournament(LCC_ID, round=2)),
        (
            "https://example.org/tata/round-3/games.pgn",
            "pgn-url",
            PgnUrl("https://example.org/tata/round-3/games.pgn"),
        ),
    ],
)
def test_each_kind_of_source_is_named_by_its_rule(text: str, rule: str, source: object) -> None:
    assert classify(text, REAL) == (rule, source)


def test_a_lichess_url_on_the_configured_address_is_a_lichess_url() -> None:
    fake = Endpoints(lichess="http://127.0.0.1:9999")
    assert classify("http://127.0.0.1:9999/broadcast/t/r/AbCd1234", fake) == (
        "lichess-round",
        LichessRound("AbCd1234", "t", "r"),
    )
    # elsewhere it is a PGN URL like any other
    assert classify("http://127.0.0.1:9999/broadcast/t/r/AbCd1234", REAL)[0] == "pgn-url"


def test_local_paths_are_files_or_folders(tmp_path: Path) -> None:
    pgn = tmp_path / "round 3.pgn"
    pgn.write_text("")
    assert classify(str(pgn), REAL) == ("pgn-path", PgnPath(str(pgn), False))
    assert classify(str(tmp_path), REAL) == ("pgn-path", PgnPath(str(tmp_path), True))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nonsense", "no such file or folder, and not a Lichess broadcast round"),
        ("./missing/round3.pgn", "no such file or folder"),
        ("https://lichess.org/abcdEFGH", "a Lichess URL, but not of a broadcast"),
        ("https://lichess.org/broadcast/by/someone", "a Lichess URL, but not of a broadcast"),
        ("ftp://example.org/games.pgn", "no such file or folder"),
        ("0b9b5e3e-1c2d", "no such file or folder"),
        ("  ", "an empty source"),
    ],
)
def test_a_source_no_rule_names_says_why(text: str, why: str) -> None:
    with pytest.raises(ResolveError, match=re.escape(why)) as err:
        classify(text, REAL)
    assert str(err.value).startswith(f"{text}: " if text.strip() else "'  ': ")


def test_the_addresses_come_from_options_else_the_environment() -> None:
    env = {"LIVEGAIN_LICHESS_URL": "http://127.0.0.1:1/", "LIVEGAIN_LCC_URL": "http://h:2/get"}
    assert Endpoints.chosen(environ={}) == Endpoints(lcc_lookup=LCC_LOOKUP_URL)
    assert Endpoints.chosen(environ=env) == Endpoints("http://127.0.0.1:1", "http://h:2/get")
    assert Endpoints.chosen("https://l.example", None, env).lichess == "https://l.example"
    with pytest.raises(ResolveError, match="http"):
        Endpoints.chosen("lichess.org", environ={})


# --- which round is followed (pure) ---------------------------------------------------------


def rnd(rid: str, **state: object) -> dict[str, Any]:
    return {"id": rid, "name": f"Round {rid[-1]}", **state}


def test_a_lichess_tournament_follows_its_ongoing_round_else_the_next_else_none() -> None:
    r1, r2, r3 = "Round001", "Round002", "Round003"

    def pick(*docs: dict[str, Any], pinned: str | None = None) -> tuple[str | None, str]:
        chosen, why = pick_round(read_rounds(list(docs)), pinned)
        return (chosen.id if chosen is not None else None), why

    assert pick(rnd(r1, finished=True), rnd(r2, ongoing=True), rnd(r3)) == (
        r2,
        "Round 2 is ongoing",
    )
    # finishedAt alone marks a round over ("finished" is deprecated in the API)
    assert pick(rnd(r1, finishedAt=1_700_000_000_000), rnd(r2, finished=True), rnd(r3)) == (
        r3,
        "Round 3 is the next round, not started yet",
    )
    assert pick(rnd(r1), rnd(r2), rnd(r3))[0] == r1  # before the first round
    assert pick(rnd(r1, finished=True), rnd(r2, finishedAt=1)) == (None, "every round is finished")
    # pinned: that round while it is not over
    assert pick(rnd(r1, ongoing=True), rnd(r2), pinned=r2) == (r2, "Round 2 (pinned) is upcoming")
    assert pick(rnd(r1, finished=True), rnd(r2), pinned=r1) == (
        None,
        "Round 1 (pinned) is finished",
    )
    assert read_rounds([rnd(r1, customScoring={"white": {"win": 3}})])[0] == BroadcastRound(
        1, r1, "Round 1", "upcoming", {"white": {"win": 3}}
    )
    for bad in ([], None, [{"name": "no id"}], [rnd("short")]):
        with pytest.raises(ValueError):
            read_rounds(bad)


def test_an_lcc_tournament_follows_its_live_round_else_the_next_else_the_last() -> None:
    live = [LccRound(1, 6, 0), LccRound(2, 6, 2), LccRound(3, 6, 0)]
    assert pick_lcc_round(live) == (2, "live")
    quiet = [LccRound(1, 6, 0), LccRound(2, 6, 0), LccRound(3, 0, 0)]
    assert pick_lcc_round(quiet) is None  # the indexes must say which are over
    assert pick_lcc_round(quiet, {1: False, 2: True}) == (2, "next round, not started yet")
    assert pick_lcc_round(quiet, {1: False, 2: False}) == (2, "finished, the last round")
    assert pick_lcc_round([LccRound(1, 0, 0), LccRound(2, 0, 0)]) == (1, "not paired yet")


# --- looked up in the fakes -----------------------------------------------------------------


def demo_games(first: int, last: int) -> Replay:
    """Games ``first..last`` (1-based) of the project's demo round, to replay."""
    games = parse_pgn(DEMO_ROUND.read_text(encoding="utf-8"), "demo")[first - 1 : last]
    return Replay(games, speed=1000, mode="pgn-http")


@contextlib.asynccontextmanager
async def lichess_event() -> AsyncIterator[tuple[FakeLichess, FakeTour, FakeTour]]:
    """The fake Lichess with two tournaments: 'Wijk' (round 2 ongoing, round 1
    finished, round 3 to come) and 'Open' (one round, ongoing), each ongoing
    round streaming two games of the demo round."""
    a, b = demo_games(1, 2), demo_games(3, 4)
    async with a, b, FakeLichess() as lichess:
        wijk = lichess.add(
            FakeTour(
                "WijkTour",
                "Wijk Masters 2026",
                "wijk-masters-2026",
                [
                    FakeRound("WijkRd01", "Round 1", "round-1", finished=True),
                    FakeRound("WijkRd02", "Round 2", "round-2", ongoing=True, replay=b),
                    FakeRound("WijkRd03", "Round 3", "round-3"),
                ],
            )
        )
        open_ = lichess.add(
            FakeTour(
                "OpenTour",
                "livegain Demo Open 2026",
                "demo-open",
                [FakeRound("OpenRd05", "Round 5", "round-5", ongoing=True, replay=a)],
            )
        )
        yield lichess, wijk, open_


async def test_a_lichess_round_url_follows_its_tournament() -> None:
    async with lichess_event() as (lichess, _wijk, _open):
        ep = Endpoints(lichess=lichess.base_url)
        got = await resolve(lichess.round_url("OpenRd05"), ep)
        assert got.rule == "lichess-round"
        assert (got.event, got.round, got.state, got.boards) == (
            "livegain Demo Open 2026",
            "Round 5",
            "ongoing",
            2,
        )
        assert got.feed == LichessFeedConfig(
            name="lichess:OpenTour", url=lichess.base_url, tournament="OpenTour"
        )
        # the round's document (for its tournament), then the tournament's
        assert lichess.paths == [
            "/api/broadcast/demo-open/round-5/OpenRd05",
            "/api/broadcast/OpenTour",
        ]
        assert got.describe() == (
            "lichess-round livegain Demo Open 2026, Round 5 (ongoing, 2 boards): "
            f"every round, from {lichess.base_url}/api/broadcast/OpenTour; format: round-robin "
            "(the source says '10-player round robin')"
        )
        # The standings entry read from the source: its name, format and scoring.
        assert got.standings == {
            "name": "livegain Demo Open 2026",
            "format": "round-robin",
            "cycles": 1,
            "format_why": "format: round-robin (the source says '10-player round robin')",
        }
        # --round without a number: that round only.
        got = await resolve(lichess.round_url("OpenRd05"), ep, pin=True)
        assert isinstance(got.feed, LichessFeedConfig) and got.feed.round == "OpenRd05"


async def test_a_lichess_tournament_url_follows_the_event() -> None:
    async with lichess_event() as (lichess, wijk, _open):
        ep = Endpoints(lichess=lichess.base_url)
        got = await resolve(lichess.tour_url("WijkTour"), ep)
        assert got.rule == "lichess-tournament"
        assert (got.event, got.round, got.state) == (
            "Wijk Masters 2026",
            "Round 2",
            "ongoing",
        )
        assert got.feed == LichessFeedConfig(
            name="lichess:WijkTour", url=lichess.base_url, tournament="WijkTour"
        )
        assert lichess.paths == ["/api/broadcast/WijkTour"]
        # Between rounds: the next one, followed from its first move.
        wijk.rounds[1].ongoing, wijk.rounds[1].finished = False, True
        got = await resolve(lichess.tour_url("WijkTour"), ep)
        assert (got.round, got.state) == ("Round 3", "next round, not started yet")
        # --round 1: round 1 only
        got = await resolve(lichess.tour_url("WijkTour"), ep, pin=1)
        assert isinstance(got.feed, LichessFeedConfig) and got.feed.round == "WijkRd01"
        with pytest.raises(ResolveError, match="round 9: the tournament lists 3 rounds"):
            await resolve(lichess.tour_url("WijkTour"), ep, pin=9)
        # Without a format in the tournament, it is counted from the first round's games.
        del wijk.info["format"]
        got = await resolve(lichess.tour_url("WijkTour"), ep)
        assert got.notes == ("format: not told by the source, counted as a Swiss",)
        assert got.standings == {
            "name": "Wijk Masters 2026",
            "format": "swiss",
            "format_why": "format: not told by the source, counted as a Swiss",
            "rounds": 3,  # the Swiss's odds are simulated to its last round
        }


async def test_an_lcc_tournament_id_follows_the_event(tmp_path: Path) -> None:
    async with FakeLcc() as lcc:
        ep = Endpoints(lcc=lcc.pool)
        done, playing = ["1-0", "1/2-1/2", "0-1"], ["1-0", "*", "*"]
        lcc.add(LCC_ID, "Tata Steel Masters", [(3, 0), (3, 2), (0, 0)], {1: done, 2: playing})
        got = await resolve(LCC_ID, ep)
        assert got.rule == "lcc-id"
        assert got.feed == LccFeedConfig(
            name=f"lcc:{LCC_ID}", base_url=lcc.pool, tournament_id=LCC_ID, rounds=None
        )
        assert (got.event, got.round, got.state, got.boards) == (
            "Tata Steel Masters",
            "Round 2",
            "live",
            3,
        )
        # 3 rounds for 6 players: a Swiss
        assert got.standings == {
            "name": "Tata Steel Masters",
            "format": "swiss",
            "format_why": "format: swiss (3 rounds for 6 players: a Swiss)",
            "rounds": 3,
        }
        # tournament.json, then the round's index
        assert lcc.paths == [f"/get/{LCC_ID}/tournament.json", f"/get/{LCC_ID}/round-2/index.json"]
        # No game live: the indexes say which round is not over.
        lcc.add(LCC_ID, "Tata Steel Masters", [(3, 0), (3, 0), (3, 0)], {1: done, 2: done})
        lcc.indexes[(LCC_ID, 3)] = {"pairings": [{"result": "*"}] * 3}
        got = await resolve(LCC_ID, ep)
        assert (got.round, got.state, got.boards) == ("Round 3", "next round, not started yet", 3)
        # A round named by the viewer's URL, pinned with --round.
        got = await resolve(f"https://view.livechesscloud.com/#{LCC_ID}/1", ep, pin=True)
        assert (got.rule, got.round, got.state) == ("lcc-url", "Round 1", "pinned")
        assert isinstance(got.feed, LccFeedConfig) and got.feed.rounds == [1]
        with pytest.raises(ResolveError, match="round 7: the tournament lists 3 rounds"):
            await resolve(f"{LCC_ID}/7", ep)
        # A round not paired yet is waited for, not refused.
        lcc.add(LCC_ID, "Tata Steel Masters", [(3, 0), (3, 0)], {1: done})
        del lcc.indexes[(LCC_ID, 2)]
        got = await resolve(f"{LCC_ID}/2", ep, pin=True)
        assert (got.round, got.state, got.boards) == (
            "Round 2",
            "pinned; not paired yet, waited for",
            None,
        )
        # A pool URL is looked up where it points, whatever the configured pool.
        pool_url = f"{lcc.pool}/{LCC_ID}/tournament.json"
        got = await resolve(pool_url, Endpoints())
        assert isinstance(got.feed, LccFeedConfig) and got.feed.base_url == lcc.pool


async def test_an_lcc_tournament_s_host_is_asked_of_the_lookup() -> None:
    async with FakeLcc() as lcc:
        lcc.add(LCC_ID, "Tata Steel Masters", [(3, 0)], {1: ["1-0", "*", "*"]})
        lcc.hosts[LCC_ID] = f"127.0.0.1:{lcc.port}"
        ep = Endpoints.chosen(environ={"LIVEGAIN_LCC_LOOKUP_URL": f"{lcc.base_url}/meta"})
        got = await resolve(LCC_ID, ep)
        assert isinstance(got.feed, LccFeedConfig) and got.feed.base_url == lcc.pool
        assert lcc.paths[0] == f"/meta/{LCC_ID}"
        assert f"pool: 127.0.0.1:{lcc.port}, from LiveChess Cloud's lookup" in got.notes
        with pytest.raises(ResolveError, match="LiveChess Cloud knows no tournament"):
            await resolve("0b9b5e3e-1c2d-4e5f-8a9b-000000000000", ep)
        # Without a lookup answer (nothing listens there), the configured pool.
        assert Endpoints.chosen(environ={}).lcc_lookup == "https://lookup.livechesscloud.com/meta"
        assert Endpoints.chosen(environ={"LIVEGAIN_LCC_URL": lcc.pool}).lcc_lookup is None


async def test_pgn_urls_files_and_folders_need_no_lookup(tmp_path: Path) -> None:
    pgn = tmp_path / "round3.pgn"
    pgn.write_text("")
    got = await resolve_all(["https://example.org/r3/games.pgn", str(pgn), str(tmp_path)], REAL)
    assert [g.rule for g in got] == ["pgn-url", "pgn-path", "pgn-path"]
    assert got[0].feed == PgnHttpFeedConfig(url="https://example.org/r3/games.pgn")
    assert got[1].feed == FileFeedConfig(path=str(pgn))
    assert (got[2].feed, got[2].state) == (FileFeedConfig(path=str(tmp_path)), "folder")


async def test_a_source_that_cannot_be_looked_up_says_why() -> None:
    async with FakeLichess() as lichess, FakeLcc() as lcc:
        ep = Endpoints(lichess=lichess.base_url, lcc=lcc.pool)
        url = "https://lichess.org/broadcast/gone/round-1/Gone0001"
        with pytest.raises(ResolveError, match=r"HTTP 404.*no such broadcast") as err:
            await resolve(url, ep)
        assert str(err.value).startswith(f"{url}: {lichess.base_url}/api/broadcast/")
        with pytest.raises(ResolveError, match=f"{LCC_ID}: .*tournament.json: HTTP 404"):
            await resolve(LCC_ID, ep)
        lcc.tournaments[LCC_ID] = {"name": "No rounds"}
        with pytest.raises(ResolveError, match=r"tournament\.json lists no rounds"):
            await resolve(LCC_ID, ep)
        lichess.add(FakeTour("EmptyTou", "Empty", "empty"))
        with pytest.raises(ResolveError, match="the tournament lists no rounds"):
            await resolve("https://lichess.org/broadcast/empty/EmptyTou", ep)
        closed = lcc.base_url
    # Nothing listens there any more.
    with pytest.raises(ResolveError, match=f"^{LCC_ID}: {closed}/get/{LCC_ID}/tournament.json: "):
        await resolve(LCC_ID, Endpoints(lcc=f"{closed}/get"))


# --- the command -----------------------------------------------------------------------------


def test_the_settings_add_the_sources_to_the_configuration(tmp_path: Path) -> None:
    cfg = tmp_path / "livegain.toml"
    cfg.write_text(
        f'data_dir = "{tmp_path / "data"}"\n[engine]\nworkers = 1\ndepth = 9\n'
        '[[feeds]]\ntype = "file"\npath = "arbiter.pgn"\nscale = "lichess"\n'
    )
    stream = Resolved("x", "lichess-round", PgnStreamFeedConfig(url="http://h/s.pgn"))
    args = build_parser("watch").parse_args(
        ["watch", "x", "--config", str(cfg), "--depth", "7", "--port", "0", "--delay", "900"]
    )
    s = watch_settings(args, [stream], None)
    assert [f.type for f in s.feeds] == ["file", "pgn-stream"]
    assert [m.scale for m in s.feed_models] == ["lichess", "fide"]
    assert (s.engine.depth, s.engine.workers, s.server.port) == (7, 1, 0)
    assert (s.broadcast.delay, s.data_dir, s.persist) == (900, tmp_path / "data", True)
    # On the embedded defaults: nothing kept on disk unless --data-dir.
    args = build_parser("watch").parse_args(
        ["watch", "x", "--scale", "lichess", "--kind", "online-rapid"]
    )
    s = watch_settings(args, [stream], str(tmp_path / "scratch"))
    assert (s.server.port, s.engine.depth, s.persist) == (8080, 12, False)
    assert (s.feed_models[0].scale, s.feed_models[0].kind) == ("lichess", "online-rapid")
    assert (s.log.level, s.log.json_format) == ("warning", False)
    args = build_parser("watch").parse_args(["watch", "x", "--data-dir", str(tmp_path / "d")])
    s = watch_settings(args, [stream], None)
    assert (s.data_dir, s.persist) == (tmp_path / "d", True)


def test_an_unresolvable_source_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = tmp_path / "r.pgn"
    pgn.write_text("")
    # The second source is named wrong: nothing is looked up, nothing starts.
    assert main(["watch", str(pgn), "https://lichess.org/@/someone"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "livegain watch: error: https://lichess.org/@/someone: a Lichess URL, but not of "
        "a broadcast round or tournament (/broadcast/...)\n"
    )


LIVEGAIN = [sys.executable, "-m", "livegain.cli"]


async def run_watch(*argv: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *LIVEGAIN,
        "watch",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "LIVEGAIN_ENGINE__WORKERS": "1"},
    )


async def test_a_source_not_found_ends_the_command_with_exit_2() -> None:
    async with FakeLichess() as lichess:
        proc = await run_watch(
            "https://lichess.org/broadcast/gone/round-1/Gone0001",
            "--lichess-url",
            lichess.base_url,
        )
        async with asyncio.timeout(60):
            out, err = await proc.communicate()
    assert proc.returncode == 2
    lines = err.decode().splitlines()
    assert len(lines) == 1 and "Traceback" not in err.decode()
    assert lines[0].startswith(
        "livegain watch: error: https://lichess.org/broadcast/gone/round-1/Gone0001: "
    )
    assert "HTTP 404" in lines[0] and out == b""


async def read_until_url(proc: asyncio.subprocess.Process, wait: float = 60) -> list[str]:
    """The lines ``livegain watch`` prints once it listens (up to "Ctrl-C to stop")."""
    assert proc.stdout is not None
    lines: list[str] = []
    async with asyncio.timeout(wait):
        while not any("Ctrl-C to stop" in line for line in lines):
            line = await proc.stdout.readline()
            if not line:
                assert proc.stderr is not None
                err = await proc.stderr.read()
                raise AssertionError(f"watch ended: {''.join(lines)} {err.decode()}")
            lines.append(line.decode())
    return lines


@pytest.mark.engine
async def test_watch_follows_every_kind_of_source_live(tmp_path: Path, stockfish: str) -> None:
    """A Lichess round URL, a Lichess tournament URL, a LiveChess Cloud id and a
    local PGN file at once: the real service shows every board with evaluations
    to a WebSocket client, and the round's stream goes on live."""
    lcc = Replay(
        parse_pgn(DEMO_ROUND.read_text(encoding="utf-8"), "demo")[4:6],
        speed=1000,
        mode="lcc",
        tournament_id=LCC_ID,
    )
    arbiter = tmp_path / "arbiter.pgn"
    arbiter.write_text(
        '[Event "Rosenwald Memorial"]\n[Round "8"]\n[White "Byrne, Donald"]\n'
        '[Black "Fischer, Robert James"]\n[Result "*"]\n\n1. Nf3 Nf6 2. c4 g6 3. Nc3 Bg7 *\n'
    )
    async with lichess_event() as (lichess, wijk, open_), lcc:
        rounds = [open_.rounds[0].replay, wijk.rounds[1].replay, lcc]
        for replay in rounds:
            assert replay is not None
            await replay.advance(8)
        proc = await run_watch(
            lichess.round_url("OpenRd05"),
            lichess.tour_url("WijkTour"),
            LCC_ID,
            str(arbiter),
            "--port",
            "0",
            "--depth",
            str(DEPTH),
            "--engine",
            stockfish,
            "--lichess-url",
            lichess.base_url,
            "--lcc-url",
            lcc.lcc_base_url,
        )
        try:
            lines = await read_until_url(proc)
            text = "".join(lines)
            assert "livegain watch: 4 sources" in text
            assert "lichess-round livegain Demo Open 2026, Round 5 (ongoing, 2 boards)" in text
            assert "lichess-tournament Wijk Masters 2026, Round 2 (ongoing)" in text
            assert (
                "lcc-id livegain Demo Open 2026, Round 1 (live, 2 boards): "
                f"every round, polled from {lcc.lcc_base_url}/{LCC_ID}; pool: as configured"
            ) in text
            assert f"pgn-path (file): watching {arbiter}" in text, text
            m = re.search(r"live at (http://127\.0\.0\.1:(\d+)/)", text)
            assert m, text
            url = m.group(1)
            assert f"{url}overlay/boards" in text and f"{url}overlay/board?board=ID" in text
            # What each source shows, by its players.
            expected = {}
            for replay in rounds:
                assert replay is not None
                for snap in replay.snapshots():
                    expected[snap.white.name] = len(snap.moves)
            expected["Byrne, Donald"] = 6

            def shown(m: Mirror) -> dict[str, int]:
                return {
                    s["white"]["name"]: evaluated(s)
                    for s in m.boards.values()
                    if len(s["moves"]) == evaluated(s)
                }

            async with Mirror(f"ws://127.0.0.1:{m.group(2)}/ws") as mirror:
                await mirror.wait(lambda m: shown(m) == expected, wait=120)
                assert len(mirror.boards) == 7
                for state in mirror.boards.values():
                    assert state["engine"].endswith(f"depth {DEPTH}")
                    assert all(p["eval"] is not None for p in state["moves"])
                    assert state["eval"] is not None
                # Live: the round's stream goes on, and so does its board.
                replay = open_.rounds[0].replay
                assert replay is not None
                await replay.advance(4)
                for snap in replay.snapshots():
                    expected[snap.white.name] = len(snap.moves)
                assert sum(expected.values()) == 6 + 3 * 8 + 4
                await mirror.wait(lambda m: shown(m) == expected, wait=120)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
            async with asyncio.timeout(60):
                _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert "stopped" in err.decode()


async def test_the_event_s_scoring_and_format_reach_the_standings(tmp_path: Path) -> None:
    """A Lichess tournament whose rounds carry a customScoring (3/1/0): the
    standings entry watch configures has it, and a configuration's own entry
    for the same event wins."""
    from livegain.core.scoring import Scoring
    from livegain.relay.event import EventRelay

    three = {"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1}}
    relay = EventRelay.from_pgn(
        DEMO_EVENT.read_text(encoding="utf-8"),
        info_format="6-player double round robin",
        scoring=three,
    )
    async with relay:
        got = await resolve(relay.tournament_url, Endpoints(lichess=relay.base_url))
        assert got.standings == {
            "name": "livegain Demo Open 2026",
            "format": "round-robin",
            "cycles": 2,
            "scoring": three,
            "format_why": "format: round-robin (the source says '6-player double round robin')",
        }
        assert "scoring: 3/1/0" in got.notes
        bad = EventRelay.from_pgn(
            DEMO_EVENT.read_text(encoding="utf-8"), scoring={"white": {"win": -3}}
        )
        async with bad:
            worse = await resolve(bad.tournament_url, Endpoints(lichess=bad.base_url))
        assert worse.standings is not None and "scoring" not in worse.standings
        assert any(n.startswith("scoring not read") for n in worse.notes)
    args = build_parser("watch").parse_args(["watch", "x"])
    s = watch_settings(args, [got], str(tmp_path))
    (event,) = s.events
    rules = event.rules()
    assert (rules.format, rules.cycles, rules.scoring) == (
        "round-robin",
        2,
        Scoring.symmetric(3, 1),
    )
    # The configuration's entry for the same event wins.
    cfg = tmp_path / "c.toml"
    cfg.write_text('[[events]]\nname = "LIVEGAIN demo open 2026"\nformat = "swiss"\n')
    args = build_parser("watch").parse_args(["watch", "x", "--config", str(cfg)])
    s = watch_settings(args, [got], None)
    assert [(e.name, e.format, e.scoring) for e in s.events] == [
        ("LIVEGAIN demo open 2026", "swiss", None)
    ]
