"""The watched-file feed on real files: rewrites, partial writes, directories, odd encodings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from livegain.feeds import FileFeedConfig, make_feed
from livegain.feeds import files as files_mod
from livegain.feeds.files import FileFeed

from .conftest import RecordingSink, cancel, run_feed

pytestmark = pytest.mark.timeout(60)

GAME = '[White "A"]\n[Black "B"]\n[Round "2.1"]\n\n1. e4 e5 2. Nf3 {[%clk 0:10:00]} Nc6 *\n'


def bump(path: Path, text: str) -> None:
    """Write and move the mtime on, so that a rewrite within one tick is still seen."""
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


async def test_file_rewritten_by_the_operator(tmp_path: Path, sink: RecordingSink) -> None:
    p = tmp_path / "games.pgn"
    p.write_text(GAME)
    feed = make_feed(FileFeedConfig(path=str(p)))
    assert isinstance(feed, FileFeed)
    await feed.poll_once(sink)
    assert sink.snapshots[-1].moves == ("e4", "e5", "Nf3", "Nc6")
    assert sink.snapshots[-1].clocks == (None, None, 600, None)
    await feed.poll_once(sink)
    assert feed.reads == 1 and len(sink.snapshots) == 1  # unchanged: not read again
    bump(p, GAME.replace("Nc6 *", "Nc6 3. Bb5 *"))
    await feed.poll_once(sink)
    assert sink.snapshots[-1].moves[-1] == "Bb5"
    bump(p, GAME.replace("2. Nf3 {[%clk 0:10:00]} Nc6", "2. Nc3"))  # a correction
    await feed.poll_once(sink)
    assert sink.snapshots[-1].moves == ("e4", "e5", "Nc3")
    assert sink.errors == []


async def test_partial_write_is_retried_then_reported_if_it_stays(
    tmp_path: Path, sink: RecordingSink
) -> None:
    p = tmp_path / "games.pgn"
    p.write_text(GAME)
    feed = FileFeed(FileFeedConfig(path=str(p)))
    await feed.poll_once(sink)
    n = len(sink.snapshots)
    bump(p, GAME.replace("Nc6 *", "Nc6 3. Bb"))  # caught half-way through a rewrite
    await feed.poll_once(sink)
    assert sink.errors == [] and len(sink.snapshots) == n  # the prefix is no news
    bump(p, GAME.replace("Nc6 *", "Nc6 3. Bb5 *"))
    await feed.poll_once(sink)
    assert sink.errors == [] and sink.snapshots[-1].moves[-1] == "Bb5"
    bump(p, GAME.replace("Nc6 *", "Nc6 3. Bb5 a6 4. B"))  # stays cut: reported once
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    assert len(sink.errors) == 1
    assert "cut mid-move" in sink.errors[0][2] and "ply 7" in sink.errors[0][1]
    assert sink.snapshots[-1].moves[-1] == "a6"


async def test_file_changing_during_the_read_is_read_again(
    tmp_path: Path, sink: RecordingSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scripted fault: the size moves between the stat before and after the read."""
    p = tmp_path / "games.pgn"
    p.write_text(GAME)
    real_stat = os.stat
    real_read = Path.read_bytes
    state = {"reads": 0, "raced": False}

    def reading(self: Path) -> bytes:
        state["reads"] += 1
        return real_read(self)

    def racing_stat(path: object, *a: object, **kw: object) -> os.stat_result:
        st = real_stat(path, *a, **kw)  # type: ignore[arg-type]
        if state["reads"] == 1 and not state["raced"]:  # just after the first read
            state["raced"] = True
            fields = list(st)
            fields[6] += 10  # st_size: the writer is at work
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(Path, "read_bytes", reading)
    monkeypatch.setattr(files_mod.os, "stat", racing_stat)
    feed = FileFeed(FileFeedConfig(path=str(p)))
    await feed.poll_once(sink)
    assert feed.retries == 1 and sink.snapshots == []
    await feed.poll_once(sink)
    assert sink.snapshots[-1].moves == ("e4", "e5", "Nf3", "Nc6")


async def test_directory_missing_then_appearing_latin1_and_junk(
    tmp_path: Path, sink: RecordingSink
) -> None:
    d = tmp_path / "round2"
    feed = FileFeed(FileFeedConfig(path=str(d), interval=0.02))
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: len(sink.errors) == 1)
        assert "no such file" in sink.errors[0][2]
        d.mkdir()
        (d / "board1.pgn").write_text(GAME)
        (d / "board2.pgn").write_bytes(
            '[White "Müller"]\n[Black "Ødegaard"]\n[Round "2.2"]\n\n1. d4 *\n'.encode("latin-1")
        )
        (d / "notes.txt").write_text("1. e4 not a pgn file")
        (d / "board3.pgn").write_bytes(b"\x00\x01\x02 junk {{{")
        await sink.wait_for(lambda: len({s.board for s in sink.snapshots}) == 2)
        await sink.wait_for(lambda: any("board3.pgn" in e[1] for e in sink.errors))
        two = sink.by_board()[2]
        assert two.white.name == "Müller" and two.black.name == "Ødegaard"
        assert sink.by_board()[1].moves == ("e4", "e5", "Nf3", "Nc6")
        # a file deleted: its games are not deleted, nothing is emitted
        n = len(sink.snapshots)
        (d / "board1.pgn").unlink()
        await sink.wait_for(lambda: feed.reads >= 3)
        assert len(sink.snapshots) == n
    finally:
        await cancel(task)


# -- limits --------------------------------------------------------------------------


def _games(n: int) -> str:
    return "\n".join(
        f'[White "W{k}"]\n[Black "B{k}"]\n[Round "1.{k}"]\n\n1. e4 e5 *\n' for k in range(1, n + 1)
    )


async def test_file_larger_than_max_bytes_is_refused_once(
    tmp_path: Path, sink: RecordingSink
) -> None:
    p = tmp_path / "games.pgn"
    p.write_text(GAME)
    feed = make_feed(FileFeedConfig(path=str(p), max_bytes=len(GAME.encode()) - 1))
    assert isinstance(feed, FileFeed)
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    assert sink.snapshots == [] and feed.reads == 0
    ((source, where, message),) = sink.errors  # once while the file stays so
    assert source == feed.name and where == str(p)
    assert f"{len(GAME.encode())} bytes" in message and "max_bytes" in message
    bump(p, GAME.replace(" e5 ", " c5 ").replace("Nc6", "d6"))  # fits again: read
    await feed.poll_once(sink)
    assert sink.snapshots[-1].moves == ("e4", "c5", "Nf3", "d6")


async def test_games_past_max_games_are_refused(tmp_path: Path, sink: RecordingSink) -> None:
    p = tmp_path / "round1.pgn"
    p.write_text(_games(7))
    feed = FileFeed(FileFeedConfig(path=str(p), max_games=5))
    await feed.poll_once(sink)
    assert [s.board for s in sink.snapshots] == [1, 2, 3, 4, 5]
    ((_, where, message),) = sink.errors
    assert where == "games 6-7" and "7 games" in message and "max_games" in message


async def test_game_past_max_plies_is_refused_others_read(
    tmp_path: Path, sink: RecordingSink
) -> None:
    long = '[White "Long"]\n[Black "Game"]\n[Round "1.9"]\n\n' + "Nf3 Nf6 Ng1 Ng8 " * 3 + "*\n"
    p = tmp_path / "round1.pgn"
    p.write_text(long + "\n" + GAME)
    feed = make_feed(FileFeedConfig(path=str(p)), max_plies=11)
    await feed.poll_once(sink)
    assert [s.white.name for s in sink.snapshots] == ["A"]
    ((_, where, message),) = sink.errors
    assert where == "game 1 (Long - Game, round 1.9)"
    assert "more than 11 plies" in message and "max_plies" in message
