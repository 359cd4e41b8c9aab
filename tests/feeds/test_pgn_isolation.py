"""One bad game in a multi-game PGN: skipped or cut to its legal prefix, counted and named,
while the other games apply unchanged (the parser, then the file, pgn-http and pgn-stream
feeds against a real file and real local HTTP servers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from livegain.feeds import FileFeedConfig, PgnHttpFeedConfig, PgnStreamFeedConfig
from livegain.feeds.files import FileFeed
from livegain.feeds.http_pgn import PgnHttpFeed
from livegain.feeds.pgn import parse_game, parse_pgn
from livegain.feeds.pgn_stream import PgnStreamFeed
from livegain.relay.http import MiniHttpServer, Reply

from .conftest import RecordingSink, cancel, run_feed
from .test_pgn_stream import streaming

pytestmark = pytest.mark.timeout(60)


def _game(board: int, white: str, black: str, moves: str, extra: str = "") -> str:
    return (
        f'[Event "Iso Open"]\n[Round "1.{board}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[Result "*"]\n{extra}\n{moves}\n'
    )


GOOD_1 = _game(1, "Ames, A", "Bloom, B", "1. e4 {[%clk 1:29:58]} e5 2. Nf3 Nc6 *")
GOOD_3 = _game(3, "Eck, E", "Frey, F", "1. c4 e5 2. Nc3 *")
WHO = "game 2 (Cole, C - Dunn, D, round 1.2)"
MOVES_2 = ("d4", "d5", "c4", "e6")
BIG = "9" * 5000

# name -> (tags to add, move text, moves game 2 keeps (None: no snapshot), words in its error)
BAD: dict[str, tuple[str, str, tuple[str, ...] | None, str | None]] = {
    "illegal move mid-game": ("", "1. d4 d5 2. c4 Ke7 3. Nc3 Nf6 4. e3 e6 *", MOVES_2[:3], "Ke7"),
    "invalid FEN": ('[FEN "rnbqkbnr/pppppppp/8/8 w KQkq - 0 1"]\n', "1. d4 d5 *", None, "FEN"),
    "unreadable tag line": ('[WhiteElo 2700"]\n', "1. d4 d5 2. c4 e6 *", MOVES_2, "tag"),
    "WhiteElo in superscript digits": ('[WhiteElo "²"]\n', "1. d4 d5 2. c4 e6 *", MOVES_2, None),
    "WhiteElo of 5000 digits": (f'[WhiteElo "{BIG}"]\n', "1. d4 d5 2. c4 e6 *", MOVES_2, None),
    "WhiteFideId of 5000 digits": (
        f'[WhiteFideId "{BIG}"]\n',
        "1. d4 d5 2. c4 e6 *",
        MOVES_2,
        None,
    ),
    "Board of 5000 digits": (f'[Board "{BIG}"]\n', "1. d4 d5 2. c4 e6 *", MOVES_2, None),
    "clock of 5000 digits": ("", f"1. d4 {{[%clk {BIG}:00:00]}} d5 2. c4 e6 *", MOVES_2, None),
    "clock seconds of 1e400": (
        "",
        f"1. d4 {{[%clk 1:00:{BIG[:400]}]}} d5 2. c4 e6 *",
        MOVES_2,
        None,
    ),
    "WhiteClock of 1e400": (
        f'[WhiteClock "1:00:{BIG[:400]}"]\n',
        "1. d4 d5 2. c4 e6 *",
        MOVES_2,
        None,
    ),
    "control characters": ("", "1. d4 \x00\x07 d5 \x1b[2J 2. c4 e6 *", ("d4",), "ply 2"),
}


def _round(bad: str) -> str:
    tags, moves, _, _ = BAD[bad]
    middle = (
        f'[Event "Iso Open"]\n[Round "1.2"]\n[White "Cole, C"]\n[Black "Dunn, D"]\n'
        f'[Result "*"]\n{tags}\n{moves}\n'
    )
    return "\n".join([GOOD_1, middle, GOOD_3])


@pytest.mark.parametrize("bad", list(BAD))
def test_one_bad_game_leaves_the_others_as_they_are_alone(bad: str) -> None:
    games = parse_pgn(_round(bad), "round")
    assert len(games) == 3
    alone_1, alone_3 = parse_game(GOOD_1, "round", 0), parse_game(GOOD_3, "round", 2)
    assert games[0].snapshot == alone_1.snapshot and not games[0].issues
    assert games[2].snapshot == alone_3.snapshot and not games[2].issues
    _, _, kept, words = BAD[bad]
    two = games[1]
    if kept is None:
        assert two.snapshot is None
    else:
        assert two.snapshot is not None and two.snapshot.moves == kept, two.issues
        assert two.snapshot.white.name == "Cole, C"
        assert two.snapshot.white.rating is None and two.snapshot.white.fide_id is None
        assert all(c is None or 0 <= c < 10**7 for c in two.snapshot.clocks)
    if words is not None:
        assert two.issues, "the problem was not reported"
        assert all(i.where.startswith(WHO) for i in two.issues), two.issues
        assert any(words in i.where + i.message for i in two.issues), two.issues


# --- through the feeds -------------------------------------------------------------------------

FEED_CASES = ["illegal move mid-game", "invalid FEN", "WhiteElo of 5000 digits"]


def _check(sink: RecordingSink, bad: str, errors: int) -> None:
    boards = sink.by_board()
    assert boards[1].moves == ("e4", "e5", "Nf3", "Nc6"), sink.error_text()
    assert boards[3].moves == ("c4", "e5", "Nc3"), sink.error_text()
    kept = BAD[bad][2]
    if kept is None:
        assert 2 not in boards
    else:
        assert boards[2].moves == kept
    if BAD[bad][3] is not None:
        named = [e for e in sink.errors if WHO in e[1]]
        assert named, sink.error_text()
        assert errors >= len(named)  # counted by the feed
    assert not any("unreadable game" in e[2] for e in sink.errors), sink.error_text()


@pytest.mark.parametrize("bad", FEED_CASES)
async def test_file_feed_applies_the_good_games(
    tmp_path: Path, sink: RecordingSink, bad: str
) -> None:
    p = tmp_path / "round.pgn"
    p.write_text(_round(bad))
    feed = FileFeed(FileFeedConfig(path=str(p)))
    await feed.poll_once(sink)
    _check(sink, bad, feed.emitter.errors)


@pytest.mark.parametrize("bad", FEED_CASES)
async def test_pgn_http_feed_applies_the_good_games(sink: RecordingSink, bad: str) -> None:
    body = _round(bad).encode()
    async with MiniHttpServer(lambda path, headers: Reply(200, body)) as srv:
        feed = PgnHttpFeed(PgnHttpFeedConfig(url=f"{srv.base_url}/round.pgn"))
        await feed.poll_once(sink)
    _check(sink, bad, feed.emitter.errors)


@pytest.mark.parametrize("bad", FEED_CASES)
async def test_pgn_stream_feed_applies_the_good_games(sink: RecordingSink, bad: str) -> None:
    async with streaming() as server:
        feed = PgnStreamFeed(PgnStreamFeedConfig(url=server.url))
        task = await run_feed(feed, sink)
        try:
            await sink.wait_for(lambda: server.connections == 1 and len(server._queues) == 1)
            server.push((_round(bad) + "\n\n").encode())
            # a later game closes the last one of the round in a stream
            server.push(b'[Event "Iso Open"]\n[Round "1.4"]\n[White "G"]\n[Black "H"]\n\n*\n\n')
            await sink.wait_for(lambda: {1, 3} <= set(sink.by_board()))
        finally:
            await cancel(task)
    _check(sink, bad, feed.emitter.errors)
