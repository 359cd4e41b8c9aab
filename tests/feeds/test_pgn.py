"""The live PGN parser on the inputs real relays produce, nasty ones included."""

from __future__ import annotations

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.feeds.pgn import (
    game_to_pgn,
    parse_game,
    parse_pgn,
    parse_time,
    split_games,
)

DGT_ROUND = (
    '[Event "Open A"]\r\n[Site "Wijk"]\r\n[Date "2024.04.30"]\r\n[Round "3.5"]\r\n'
    '[White "Carlsen, Magnus"]\r\n[Black "Giri, Anish"]\r\n[Result "*"]\r\n'
    '[WhiteElo "2830"]\r\n[BlackElo "2745"]\r\n[WhiteTitle "GM"]\r\n[BlackTitle "GM"]\r\n'
    '[WhiteFideId "1503014"]\r\n[BlackFideId "24116068"]\r\n[TimeControl "5400+30"]\r\n'
    '[GameId "abc-5"]\r\n[ePGN "0.1;DGT LiveChess/2.2.5"]\r\n\r\n'
    "1. e4 {[%clk 1:30:00]} {[%emt 00:00:02]} e5 {[%clk 1:31:3]} 2. Nf3 {[%clk 01:29:40]}\r\n"
    "Nc6 3. Bb5 {[%clk 1:28:59]} a6 {[%clk 1:30:01]} *\r\n"
    "\r\n"
    '[Event "Open A"]\r\n[Round "3"]\r\n[Board "6"]\r\n[White "Ding, Liren"]\r\n'
    '[Black "Nepo, Ian"]\r\n[Result "1/2-1/2"]\r\n\r\n1. d4 d5 2. c4 1/2-1/2\r\n'
)


def test_multi_game_dgt_round_with_crlf_and_every_clock_style() -> None:
    games = parse_pgn(DGT_ROUND, "src")
    assert len(games) == 2
    a, b = games[0].snapshot, games[1].snapshot
    assert a is not None and b is not None
    assert a.moves == ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6")
    # split comments, unpadded 1:31:3, a missing clock on Nc6
    assert a.clocks == (5400, 5463, 5380, None, 5339, 5401)
    assert games[0].emt_seconds[0] == 2.0
    assert (a.round, a.board, a.game_id) == ("3", 5, "abc-5")
    assert a.white.name == "Carlsen, Magnus" and a.white.rating == 2830
    assert a.white.title == "GM" and a.white.fide_id == "1503014"
    assert a.black.fide_id == "24116068" and a.black.rating == 2745
    assert a.clock_white == 5339 and a.clock_black == 5401
    assert ("ePGN", "0.1;DGT LiveChess/2.2.5") in a.tags
    assert a.result == "*" and a.source == "src"
    assert (b.round, b.board, b.result, b.moves) == ("3", 6, "1/2-1/2", ("d4", "d5", "c4"))
    assert not games[0].issues and not games[1].issues


def test_split_only_on_blank_line_followed_by_a_tag() -> None:
    text = '[White "A"]\n\n1. e4 {a comment\n\n[%clk 1:00:00]} e5 *\n\n\n[White "B"]\n\n1. d4 *'
    parts = split_games(text)
    assert len(parts) == 2
    assert parse_game(parts[0]).snapshot.moves == ("e4", "e5")  # type: ignore[union-attr]


def test_illegal_move_keeps_the_legal_prefix_and_names_game_and_ply() -> None:
    text = '[White "Carlsen"]\n[Black "Giri"]\n[Round "3.5"]\n\n1. e4 e5 2. Qxh7 Nc6 3. Bb5 a6 *'
    (g,) = parse_pgn(text)
    assert g.snapshot is not None and g.snapshot.moves == ("e4", "e5")
    assert g.trailing_illegal == 0
    (issue,) = g.issues
    assert "Carlsen - Giri" in issue.where and "round 3.5" in issue.where
    assert "ply 3" in issue.where and "2.Qxh7" in issue.where
    assert "illegal" in issue.message and not issue.truncated


def test_kings_in_the_centre_signal_is_passed_on_for_the_game_state() -> None:
    """Up to two illegal tokens at the very end go on as they are (the game state reads
    DGT's "kings in the centre" result signal, or reports the move with the board's id)."""
    text = (
        '[White "A"]\n[Black "B"]\n[Result "*"]\n\n'
        "1. e4 e5 2. Ke2 Ke7 3. Ke3 Ke6 4. Kd4 Kd5 *"  # both kings to the centre
    )
    (g,) = parse_pgn(text)
    assert g.snapshot is not None
    assert g.snapshot.moves == ("e4", "e5", "Ke2", "Ke7", "Ke3", "Ke6", "Kd4", "Kd5")
    assert g.trailing_illegal == 2 and g.issues == ()
    assert len(g.snapshot.clocks) == len(g.snapshot.moves)


def test_one_trailing_illegal_token_with_its_clock() -> None:
    text = (
        '[White "A"]\n[Black "B"]\n[Result "1/2-1/2"]\n\n'
        "1. e4 e5 2. Nf3 Nc6 3. Ke5 {[%clk 0:01:00]} 1/2-1/2"
    )
    (g,) = parse_pgn(text)
    assert g.snapshot is not None
    assert g.snapshot.moves == ("e4", "e5", "Nf3", "Nc6", "Ke5")
    assert g.snapshot.clocks == (None, None, None, None, 60)
    assert g.snapshot.result == "1/2-1/2" and g.trailing_illegal == 1 and not g.issues


def test_more_than_two_tokens_after_an_illegal_move_is_a_broken_game() -> None:
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Ke3 Nc6 3. Nf3 *')
    assert g.snapshot is not None and g.snapshot.moves == ("e4", "e5")
    assert "ply 3 (2.Ke3)" in g.issues[0].where and g.trailing_illegal == 0


def test_illegal_tail_cut_mid_move_is_not_passed_on() -> None:
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Ke3 N')
    assert g.snapshot is not None and g.snapshot.moves == ("e4", "e5")
    assert g.truncated and any("illegal" in i.message for i in g.issues)


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        ("2. Nf", ("e4", "e5")),  # cut mid-move
        ("2. Nf3 {[%clk 1:2", ("e4", "e5", "Nf3")),  # cut mid-comment
        ("2", ("e4", "e5")),  # cut in a move number
        ("2. Nf3 (2. Nc3 Nf6", ("e4", "e5", "Nf3")),  # cut mid-variation
    ],
)
def test_partial_pgn_cut_anywhere(tail: str, expected: tuple[str, ...]) -> None:
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 e5 ' + tail)
    assert g.snapshot is not None and g.snapshot.moves == expected
    assert g.truncated and len(g.issues) == 1


def test_cut_inside_the_tags() -> None:
    games = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 *\n\n[White "C"]\n[Black "D')
    assert games[0].snapshot is not None and games[0].snapshot.moves == ("e4",)
    assert games[1].truncated
    assert not games[0].issues


def test_garbage_is_reported_and_other_games_survive() -> None:
    text = "\x00\x01garbage }{ ((\n\n" + '[White "A"]\n[Black "B"]\n\n1. e4 e5 *'
    games = parse_pgn(text)
    good = [g for g in games if g.snapshot is not None]
    assert len(good) == 1 and good[0].snapshot.moves == ("e4", "e5")  # type: ignore[union-attr]
    assert any(g.issues for g in games)


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "}}}", "1.", "[", '["', "*", "{", "(((", "1-0", "$$$", ";x", "%\n"],
)
def test_tiny_garbage_never_raises(text: str) -> None:
    for g in parse_pgn(text):
        assert g.snapshot is None or g.snapshot.moves == ()


def test_invalid_fen_is_reported_not_guessed() -> None:
    (g,) = parse_pgn('[White "A"]\n[FEN "not a fen"]\n[SetUp "1"]\n\n1. e4 *')
    assert g.snapshot is None
    assert "invalid FEN" in g.issues[0].message


def test_fen_start_with_black_to_move_and_numbering() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 40"
    text = f'[White "A"]\n[FEN "{fen}"]\n[SetUp "1"]\n\n40... Kd7 41. e4 Qa1 42. e5 Ke6 *'
    (g,) = parse_pgn(text)
    assert g.snapshot is not None
    assert g.snapshot.moves == ("Kd7", "e4")
    assert g.snapshot.initial_fen == fen
    assert "41...Qa1" in g.issues[0].where


def test_empty_game_headers_only() -> None:
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n[Result "*"]\n')
    assert g.snapshot is not None and g.snapshot.moves == () and not g.issues


def test_san_normalisation_annotations_castling_zeros_and_nags() -> None:
    text = '[White "A"]\n\n1.e4!? e5?! 2.Nf3 $1 Nc6 3.Bc4 Nf6 4.0-0 Bc5 5.d3 O-O *'
    (g,) = parse_pgn(text)
    assert g.snapshot is not None
    assert g.snapshot.moves == ("e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "O-O", "Bc5", "d3", "O-O")


def test_result_from_movetext_when_header_missing_and_odd_spellings() -> None:
    (g,) = parse_pgn('[White "A"]\n\n1. e4 e5 ½-½')
    assert g.snapshot is not None and g.snapshot.result == "1/2-1/2"
    (g,) = parse_pgn('[White "A"]\n[Result "2-0"]\n\n1. e4 *')
    assert g.snapshot is not None and g.snapshot.result == "*"
    assert "unknown result" in g.issues[0].message


def test_players_unknown_values() -> None:
    (g,) = parse_pgn('[White "?"]\n[WhiteElo "?"]\n[BlackElo "0"]\n[WhiteFideId "0"]\n\n*')
    assert g.snapshot is not None
    assert g.snapshot.white.rating is None and g.snapshot.black.rating is None
    assert g.snapshot.white.fide_id is None


def test_round_board_tag_and_time() -> None:
    (g,) = parse_pgn('[Round "3.5"]\n[Board "7"]\n[White "A"]\n[Black "B"]\n\n1. e4 *')
    assert g.snapshot is not None and (g.snapshot.round, g.snapshot.board) == ("3", 7)
    assert parse_time("1:31:3") == 5463
    assert parse_time("0:15:27.5") == 927.5
    assert parse_time("junk") is None


def test_header_clock_tags_win() -> None:
    text = '[White "A"]\n[WhiteClock "0:59:00"]\n[BlackClock "1:00:00"]\n\n1. e4 {[%clk 1:20:00]} *'
    (g,) = parse_pgn(text)
    assert g.snapshot is not None
    assert g.snapshot.clock_white == 3540 and g.snapshot.clock_black == 3600


def test_roundtrip_tata_steel_against_python_chess(tata_steel: object) -> None:
    from pathlib import Path

    text = "\n\n".join(split_games(Path(str(tata_steel)).read_text())[:20])
    ours = parse_pgn(text)
    import io

    stream = io.StringIO(text)
    theirs = []
    while (game := chess.pgn.read_game(stream)) is not None:
        theirs.append(tuple(n.san() for n in game.mainline()))
    assert len(ours) == len(theirs) == 20
    assert [g.snapshot.moves for g in ours] == theirs  # type: ignore[union-attr]
    assert not any(g.issues for g in ours)


def test_cache_reparses_only_changed_games() -> None:
    cache: dict[tuple[int, str], object] = {}
    first = parse_pgn(DGT_ROUND, "s", cache)  # type: ignore[arg-type]
    changed = DGT_ROUND.replace("2. c4 1/2-1/2", "2. c4 e6 1/2-1/2")
    second = parse_pgn(changed, "s", cache)  # type: ignore[arg-type]
    assert second[0] is first[0]  # unchanged game: same object, not parsed again
    assert second[1] is not first[1]
    assert second[1].snapshot.moves == ("d4", "d5", "c4", "e6")  # type: ignore[union-attr]
    assert len(cache) == 2


def test_game_to_pgn_writes_trailing_illegal_tokens_as_they_came() -> None:
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Ke3 *')
    assert g.snapshot is not None and g.trailing_illegal == 1
    text = game_to_pgn(g.snapshot.tags, g.snapshot.moves, g.clock_seconds, "1-0")
    assert "1. e4 e5 2. Ke3 1-0" in text
    (again,) = parse_pgn(text)
    assert again.snapshot is not None and again.snapshot.moves == g.snapshot.moves


def test_game_to_pgn_roundtrip_with_clocks() -> None:
    (g,) = parse_pgn(DGT_ROUND.split("\r\n\r\n[Event")[0])
    assert g.snapshot is not None
    text = game_to_pgn(
        g.snapshot.tags, g.snapshot.moves, g.clock_seconds, "1-0", None, g.emt_seconds
    )
    (again,) = parse_pgn(text)
    assert again.snapshot is not None
    assert again.snapshot.moves == g.snapshot.moves
    assert again.snapshot.clocks == g.snapshot.clocks
    assert again.snapshot.result == "1-0" and again.emt_seconds[0] == 2.0


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=400))
def test_any_cut_of_a_real_game_gives_a_prefix(cut: int) -> None:
    full = DGT_ROUND.split("\r\n\r\n[Event")[0]
    body_at = full.index("1. e4")
    text = full[: body_at + cut]
    complete = parse_pgn(full)[0].snapshot
    assert complete is not None
    for g in parse_pgn(text):
        if g.snapshot is not None:
            assert complete.moves[: len(g.snapshot.moves)] == g.snapshot.moves


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='[]{}()"\\;%$.*-/01Oabcdefgh12345678KQRBNx+# \n\r\t', max_size=200))
def test_random_pgnish_text_never_raises(text: str) -> None:
    for g in parse_pgn(text):
        if g.snapshot is not None:
            board = chess.Board(g.snapshot.initial_fen or chess.STARTING_FEN)
            assert 0 <= g.trailing_illegal <= 2
            legal = g.snapshot.moves[: len(g.snapshot.moves) - g.trailing_illegal]
            for san in legal:
                board.push_san(san)  # every move before the trailing tokens is legal
            assert len(g.snapshot.clocks) == len(g.snapshot.moves)


def test_check_command_lists_problems(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from livegain.feeds.pgn import main

    f = Path(str(tmp_path)) / "r.pgn"
    f.write_text(DGT_ROUND + '\n[White "X"]\n[Black "Y"]\n\n1. e4 e5 2. Ke3 Nc6 3. d4 *\n')
    assert main([str(f)]) == 0
    out = capsys.readouterr().out
    assert "game 3 (X - Y) ply 3 (2.Ke3): illegal move 'Ke3'" in out
    assert "3 games, 11 plies, 1 problems" in out
    assert main([str(f) + ".missing"]) == 2
