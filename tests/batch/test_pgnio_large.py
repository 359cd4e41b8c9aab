"""Reading large PGN files with evaluations: gzip, games whose evaluations stop
early, bad games skipped with their reason, and the light reader of
``read_pgn_evals`` (in one process or several) agreeing with the game-tree path."""

from __future__ import annotations

import dataclasses
import gzip
import io
import random
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import livegain
import livegain.batch.pgn_stream as pgn_stream
from livegain.batch.annotated import AnnotatedGame
from livegain.batch.pgn_evals import annotated_from_pgn_evals
from livegain.batch.pgn_stream import read_pgn_evals
from livegain.batch.pgnio import PgnError, read_pgn_games, read_pgn_games_skipping, read_pgn_text

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"
PLIES = 82  # the game of the century: 41...Rc2#


def gotc_text(
    white: str = "Byrne, Donald",
    black: str = "Fischer, Robert James",
    *,
    evals_until: int | None = None,
    gap_at: int | None = None,
    illegal: bool = False,
) -> str:
    """The game of the century as PGN text, its evaluations dropped after ply
    ``evals_until`` or at ply ``gap_at`` only; ``illegal``: a move that cannot
    be played appended."""
    game = chess.pgn.read_game(io.StringIO(GOTC.read_text()))
    assert game is not None
    game.headers["White"] = white
    game.headers["Black"] = black
    for ply, node in enumerate(game.mainline(), start=1):
        if (evals_until is not None and ply > evals_until) or ply == gap_at:
            node.comment = ""
    text = str(game)
    if illegal:
        text = text.replace("41... Rc2#", "41... Rc2# 42. Qxh8")
    return text + "\n\n"


def write_gz(path: Path, text: str) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    return path


def as_dicts(games: list[AnnotatedGame]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(g) for g in games]


def by_tree(path: Path) -> tuple[list[AnnotatedGame], list[str], list[str]]:
    """What read_pgn_evals should give, from python-chess's game trees."""
    games, numbers, skipped = read_pgn_games_skipping(path)
    out: list[AnnotatedGame] = []
    truncated: list[str] = []
    for game, number in zip(games, numbers, strict=True):
        try:
            ann = annotated_from_pgn_evals(game, number)
        except PgnError as exc:
            skipped.append(str(exc))
            continue
        out.append(ann)
        if "truncated" in ann.extra:
            white, black = game.headers.get("White", "?"), game.headers.get("Black", "?")
            truncated.append(f"game {number} ({white} - {black}): {ann.extra['truncated']}")
    skipped.sort(key=lambda m: int(m.split()[1].rstrip(":")))
    return out, skipped, truncated


def test_gzip_is_told_by_its_magic_bytes(tmp_path: Path) -> None:
    plain = read_pgn_games(GOTC)
    for name in ("gotc.pgn.gz", "gotc.pgn"):  # gzip content under a plain name too
        path = write_gz(tmp_path / name, GOTC.read_text())
        games = read_pgn_games(path)
        assert [str(g) for g in games] == [str(g) for g in plain]
        read = read_pgn_evals(path)
        assert as_dicts(read.games) == as_dicts([annotated_from_pgn_evals(plain[0])])
    fake = tmp_path / "plain.pgn.gz"  # a plain file named .gz is read as it is
    fake.write_text(GOTC.read_text())
    assert len(read_pgn_games(fake)) == 1


def test_broken_gzip_is_one_error(tmp_path: Path) -> None:
    whole = gzip.compress((gotc_text() * 20).encode())
    cut = tmp_path / "cut.pgn.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    for read in (read_pgn_games, read_pgn_evals, read_pgn_games_skipping):
        with pytest.raises(PgnError, match=r"cut\.pgn\.gz: cannot read"):
            read(cut)  # type: ignore[operator]


def test_evaluations_stopping_early_truncate_the_game(tmp_path: Path) -> None:
    full = annotated_from_pgn_evals(read_pgn_text(gotc_text())[0])
    # evaluations up to ply 30 of 82; the final checkmate (scored without
    # an evaluation) does not count as evaluations resuming
    game = annotated_from_pgn_evals(read_pgn_text(gotc_text(evals_until=30))[0], 4)
    assert game.extra == {"game_number": "4", "truncated": "evaluated up to ply 30 of 82"}
    assert len(game.sans) == len(game.ucis) == 30 and len(game.scores) == 31
    assert game.sans == full.sans[:30] and game.ucis == full.ucis[:30]
    assert game.scores == full.scores[:31]
    path = write_gz(tmp_path / "t.pgn.gz", gotc_text() + gotc_text("A", "B", evals_until=30))
    read = read_pgn_evals(path)
    assert read.truncated == ["game 2 (A - B): evaluated up to ply 30 of 82"]
    assert read.skipped == []
    assert as_dicts(read.games)[1] == dataclasses.asdict(
        dataclasses.replace(game, headers=read.games[1].headers, extra=read.games[1].extra)
    )


def test_a_gap_is_skipped_with_its_reason_and_the_others_kept(tmp_path: Path) -> None:
    text = gotc_text() + gotc_text("A", "B", gap_at=11) + gotc_text("C", "D")
    read = read_pgn_evals(write_gz(tmp_path / "gap.pgn.gz", text))
    assert read.skipped == ["game 2 (A - B): no [%eval] after 6.Qb3 (ply 11)"]
    assert [g.extra["game_number"] for g in read.games] == ["1", "3"]
    assert [g.white for g in read.games] == ["Byrne, Donald", "C"]


def test_an_illegal_move_in_one_game_of_many_is_skipped(tmp_path: Path) -> None:
    text = gotc_text("A", "B") + gotc_text("C", "D", illegal=True) + gotc_text("E", "F")
    path = tmp_path / "illegal.pgn"
    path.write_text(text)
    with pytest.raises(PgnError, match=r"game 2 \(C - D\): illegal move 42\.Qxh8"):
        read_pgn_games(path)  # the strict reader still stops
    read = read_pgn_evals(path)
    assert read.skipped == ["game 2 (C - D): illegal move 42.Qxh8"]
    assert [g.white for g in read.games] == ["A", "E"]
    games, numbers, skipped = read_pgn_games_skipping(path)  # engine mode's reader
    assert [g.headers["White"] for g in games] == ["A", "E"] and numbers == [1, 3]
    assert skipped == ["game 2 (C - D): illegal move 42.Qxh8"]


def test_text_the_parser_cannot_take_is_skipped(tmp_path: Path) -> None:
    # after the illegal move, ")" ends the main line and the comment has nowhere to go
    hostile = '[White "X"]\n[Black "Y"]\n\n1. e4 Kxe8 ) { [%eval 0.3] } *\n\n'
    path = tmp_path / "hostile.pgn"
    path.write_text(gotc_text("A", "B") + hostile + gotc_text("C", "D"))
    read = read_pgn_evals(path)
    assert read.skipped == ["game 2: cannot parse (IndexError: list index out of range)"]
    assert [g.white for g in read.games] == ["A", "C"]
    assert by_tree(path)[1] == read.skipped


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no games found"),
        ('[White "A"]\n[Black "B"]\n\n1. e4 e5 *\n', "no [%eval] annotations in any game"),
        (
            '[White "A"]\n[Black "B"]\n\n1. e4 e5 *\n\n[White "C"]\n[Black "D"]\n\n'
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 Ke7 4. Qxf7 *\n",
            "x.pgn: game 2 (C - D): illegal move 4.Qxf7 (no game left to analyse: 2 skipped)",
        ),
    ],
)
def test_nothing_to_analyse_is_one_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.pgn"
    path.write_text(text)
    with pytest.raises(PgnError) as info:
        read_pgn_evals(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def random_game_text(rng: random.Random, number: int) -> str:
    """A legal random game with evaluations, comments, NAGs, variations (with
    their own comments) and sometimes a missing or unreadable evaluation."""
    game = chess.pgn.Game()
    game.headers["White"] = f"W{number % 7}"
    game.headers["Black"] = f"B{number % 5}"
    if rng.random() < 0.5:
        game.comment = f"[%eval {rng.randint(-50, 50) / 100:.2f}] start"
    node: chess.pgn.GameNode = game
    board = chess.Board()
    stop = rng.choice([None, None, rng.randint(1, 40)])
    for ply in range(1, rng.randint(0, 60) + 1):
        moves = list(board.legal_moves)
        if not moves:
            break
        move = rng.choice(moves)
        if rng.random() < 0.1 and len(moves) > 1:  # a variation before the main move
            alt = rng.choice([m for m in moves if m != move])
            var = node.add_variation(alt)
            var.comment = "[%eval 9.99] inside a variation"
            var.starting_comment = "[%eval -9.99] starting"
        node = node.add_main_variation(move)
        board.push(move)
        if rng.random() < 0.05:
            node.nags.add(chess.pgn.NAG_MISTAKE)
        roll = rng.random()
        if (stop is not None and ply > stop) or roll < 0.03:
            node.comment = "" if roll >= 0.01 else "[%eval abc]"
        else:
            value = (
                f"#{rng.choice([-3, -1, 0, 1, 2])}"
                if roll < 0.06
                else f"{rng.randint(-900, 900) / 100:.2f}"
            )
            node.comment = f"[%eval {value}]" + (" note" if roll > 0.9 else "")
    return str(game) + "\n\n"


def test_light_reader_agrees_with_game_trees_on_random_games(tmp_path: Path) -> None:
    rng = random.Random(11)
    text = "".join(random_game_text(rng, k) for k in range(120))
    path = write_gz(tmp_path / "random.pgn.gz", text)
    read = read_pgn_evals(path, workers=1)
    games, skipped, truncated = by_tree(path)
    assert as_dicts(read.games) == as_dicts(games)
    assert read.skipped == skipped and read.truncated == truncated
    assert read.games and read.skipped and read.truncated  # every case was met


def test_reading_processes_keep_file_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    text = "".join(random_game_text(rng, k) for k in range(60))
    path = write_gz(tmp_path / "many.pgn.gz", text)
    monkeypatch.setattr(pgn_stream, "_BATCH_GAMES", 7)
    seen: list[tuple[int, int, int]] = []
    serial = read_pgn_evals(path, workers=1)
    parallel = read_pgn_evals(path, workers=2, on_progress=lambda *a: seen.append(a))
    assert as_dicts(parallel.games) == as_dicts(serial.games)
    assert (parallel.skipped, parallel.truncated) == (serial.skipped, serial.truncated)
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    assert seen[-1] == (path.stat().st_size, path.stat().st_size, 60)


PGN_TOKENS = [
    '[White "A"]', '[Black "B"]', '[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]', '[SetUp "1"]', "\n",
    "\n\n", "1.", "2.", "1...", "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O", "0-0", "Qxf7#",
    "Kxe8", "e8=Q", "--", "{ [%eval 0.3] }", "{ [%eval #-2] }", "{ [%eval #0] }",
    "{ [%eval x] }", "{", "}", "(", ")", "*", "1-0", "$1", ";c", "%", "[", "]", '"',
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PGN_TOKENS), max_size=50))
def test_light_reader_agrees_with_game_trees_on_any_text(tokens: list[str]) -> None:
    """Whatever the text, both readers cut, skip, number and annotate the same."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "soup.pgn"
        path.write_text(" ".join(tokens))
        try:
            expected: Any = by_tree(path)
            if not expected[0]:
                expected = "none to analyse"
        except PgnError as exc:
            expected = str(exc)
        try:
            read = read_pgn_evals(path, workers=1)
            got: Any = (read.games, read.skipped, read.truncated)
        except PgnError as exc:
            got = str(exc)
        if isinstance(expected, str) or isinstance(got, str):
            # no game at all, or none to analyse: both say so
            assert isinstance(expected, str) and isinstance(got, str)
            assert ("no games found" in expected) == ("no games found" in got)
        else:
            assert as_dicts(got[0]) == as_dicts(expected[0])
            assert got[1:] == expected[1:]
