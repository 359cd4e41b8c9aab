"""Fuzzing the PGN readers: a junk game between two good ones.

The live parser (:func:`livegain.feeds.pgn.parse_pgn`, used by the file,
pgn-http and pgn-stream feeds) never raises, names the game of every
problem, never falls back to "unreadable game" (its catch-all for its own
bugs), and leaves the good games exactly as they parse alone. The batch
readers of :mod:`livegain.batch.pgnio` (``analyze``, ``validate``, ``fit`` read
downloaded files) return games or raise :class:`PgnError` with the game
named, nothing else. Cases are derandomized: the same in every run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livegain.batch.pgn_evals import annotated_from_pgn_evals
from livegain.batch.pgn_stream import read_pgn_evals
from livegain.batch.pgnio import PgnError, read_pgn_games_skipping, read_pgn_text
from livegain.feeds.pgn import parse_game, parse_pgn

pytestmark = pytest.mark.timeout(120)

FUZZ = settings(
    max_examples=1000,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

GOOD_1 = (
    '[Event "Fuzz Open"]\n[Round "1.1"]\n[White "Ames, A"]\n[Black "Bloom, B"]\n'
    '[GameId "good-1"]\n[Result "*"]\n\n'
    "1. e4 {[%clk 1:29:58] [%eval 0.3]} e5 {[%eval 0.25]} 2. Nf3 {[%eval 0.3]} "
    "Nc6 {[%eval 0.28]} *\n"
)
GOOD_3 = (
    '[Event "Fuzz Open"]\n[Round "1.3"]\n[White "Eck, E"]\n[Black "Frey, F"]\n'
    '[GameId "good-3"]\n[Result "1/2-1/2"]\n\n'
    "1. c4 {[%eval 0.1]} e5 {[%eval 0.1]} 2. Nc3 {[%eval 0.1]} 1/2-1/2\n"
)
BIG = "9" * 5000

words = st.sampled_from(
    [
        "e4", "e5", "Nf3", "Nc6", "Bb5", "O-O", "O-O-O", "Qxf7#", "e8=Q", "Ke2", "Kxe8",
        "1.", "2...", "3", "1-0", "0-1", "*", "½-½", "1/2-1/2", "$1", "!!", "--", "Z0",
        "P@e4", "e4e5", "0000", "(", ")", "{", "}", ";", "\n%", "[", "]", '"', "\\",
        "\x00", "\r", "\n\n", "\ufeff", BIG,
    ]
)  # fmt: skip
comments = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "[%clk 1:00:00]",
            f"[%clk {BIG}:00]",
            f"[%clk 1:00:{BIG[:400]}]",
            f"[%emt 0:00:{BIG[:400]}]",
            "[%eval #-3]",
            "[%eval #0]",
            "[%eval 1e999]",
            f"[%eval {BIG[:12]}.5]",
            "[%eval 99999,20]",
        ]
    ),
).map(lambda s: "{" + s + "}")
movetext = st.lists(st.one_of(words, comments, st.text(max_size=6)), max_size=30).map(" ".join)
tag_names = st.one_of(
    st.sampled_from(
        [
            *("Event", "Round", "White", "Black", "WhiteElo", "BlackElo", "WhiteFideId"),
            *("Board", "FEN", "Variant", "SetUp", "Result", "WhiteClock", "TimeControl", "Date"),
        ]
    ),
    st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True).filter(lambda t: t != "GameId"),
)
tag_values = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            *("²", BIG, f"1:00:{BIG[:400]}", "rnbqkbnr/8/8 w - - 0 1", "8/8/8/8/8/8/8/8 w - - 0 1"),
            *("chess960", "960", "1.99999999999999999", "-1", "1/2-1/2", "1-0", "?", ""),
        ]
    ),
)
tags = st.lists(st.tuples(tag_names, tag_values), max_size=6).map(
    lambda ts: "".join(f'[{k} "{v}"]\n' for k, v in ts)
)
junk_games = st.one_of(
    st.builds(lambda t, m: f"{t}\n{m}", tags, movetext),
    st.text(max_size=200),
)


def _round(junk: str) -> str:
    return f"{GOOD_1}\n{junk}\n\n{GOOD_3}"


ALONE = {
    "good-1": parse_game(GOOD_1, "fuzz", 0).snapshot,
    "good-3": parse_game(GOOD_3, "fuzz", 0).snapshot,
}


@FUZZ
@given(junk_games)
def test_live_parser_names_the_bad_game_and_keeps_the_good_ones(junk: str) -> None:
    games = parse_pgn(_round(junk), "fuzz")  # must not raise
    by_id = {g.snapshot.game_id: g for g in games if g.snapshot is not None}
    for gid, alone in ALONE.items():
        assert gid in by_id, [i.message for g in games for i in g.issues]
        assert by_id[gid].snapshot == alone
        assert not by_id[gid].issues
    for g in games:
        for issue in g.issues:
            assert issue.where.startswith("game"), issue  # names the game (players, round)
            assert "unreadable game" not in issue.message, issue  # no parser bug hit
        if g.snapshot is not None:
            assert all(c is None or 0 <= c < 10**10 for c in g.snapshot.clocks)
            s = g.snapshot
            assert s.clock_white is None or 0 <= s.clock_white < 10**10
            assert s.clock_black is None or 0 <= s.clock_black < 10**10


@settings(FUZZ, max_examples=800)
@given(junk_games)
def test_batch_reader_returns_games_or_a_named_pgn_error(junk: str) -> None:
    try:
        games = read_pgn_text(_round(junk), "round.pgn")
    except PgnError as exc:
        assert str(exc).startswith("round.pgn: "), exc  # names the file (and the game)
        return
    for number, game in enumerate(games, 1):
        try:
            annotated_from_pgn_evals(game, number)
        except PgnError as exc:
            assert str(exc).startswith(f"game {number} ("), exc


@settings(FUZZ, max_examples=150)
@given(junk_games)
def test_file_readers_skip_the_bad_game_only(junk: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "round.pgn"
        path.write_text(_round(junk), encoding="utf-8", errors="surrogatepass")
        games, _numbers, skipped = read_pgn_games_skipping(path)
        ids = [g.headers.get("GameId") for g in games]
        # python-chess reads an unclosed comment or variation on into the next game, as
        # PGN allows: the game after such junk may go with it; the one before never does
        balanced = not any(c in junk for c in "{}();%")
        assert "good-1" in ids and ("good-3" in ids or not balanced), skipped
        assert all(s.startswith("game ") for s in skipped), skipped
        evals = read_pgn_evals(path, workers=1)
        ids = [g.headers.get("GameId") for g in evals.games]
        assert "good-1" in ids and ("good-3" in ids or not balanced), (evals.skipped, ids)
