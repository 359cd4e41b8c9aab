"""A file analysed as it is read gives the report of the whole-list analysis,
and its JSON and annotated PGN written game by game are the texts written at
once."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

import livegain
from livegain.batch.analysis import FileAnalysis, analyze
from livegain.batch.annotated import AnnotatedGame
from livegain.batch.pgn_evals import annotated_from_pgn_evals
from livegain.batch.pgn_stream import PgnEvalsStream
from livegain.batch.pgn_write import AnnotatedPgnWriter, annotated_pgn, write_annotated_pgn
from livegain.batch.report_json import JsonReportWriter, game_json, report_tail_json

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"


def games(n: int) -> list[AnnotatedGame]:
    """``n`` copies of the game of the century between rotating players,
    cut at different plies."""
    out = []
    for k in range(n):
        game = chess.pgn.read_game(io.StringIO(GOTC.read_text()))
        assert game is not None
        game.headers["White"], game.headers["Black"] = f"W{k % 4}", f"B{k % 3}"
        for ply, node in enumerate(game.mainline(), start=1):
            if ply > 30 + 2 * k:
                node.comment = ""
        out.append(annotated_from_pgn_evals(game, k + 1))
    return out


def test_streamed_analysis_gives_the_whole_report() -> None:
    whole = analyze(games(9), 2860.0, pairing="pair")
    run = FileAnalysis(2860.0, pairing="pair")
    numbers = [rep.number for rep in run.analyse(games(9))]
    streamed = run.report()
    assert numbers == [g.number for g in whole.games]
    assert streamed.games == []
    assert report_tail_json(streamed) == report_tail_json(whole)
    assert run.head_json() == {k: whole.to_json()[k] for k in ("engine", "calibration")}


@pytest.mark.parametrize("count", [0, 1, 2, 3, 7])
def test_json_written_game_by_game_is_the_document_written_at_once(count: int) -> None:
    report = analyze(games(count), 2860.0) if count else None
    head: dict[str, Any] = {"engine": {"rating": 2860.0, "name": None}, "calibration": None}
    documents = [game_json(g) for g in report.games] if report else []
    tail: dict[str, Any] = {"players": [{"name": "a", "x": [1.5, None]}], "truncated": []}
    out = io.StringIO()
    writer = JsonReportWriter(out, head, compact_above=2)
    for document in documents:
        writer.game(document)
    writer.finish(tail)
    whole = {**head, "games": documents, **tail}
    if count > 2:
        assert writer.compact
        assert out.getvalue() == json.dumps(whole) + "\n"
    else:
        assert out.getvalue() == json.dumps(whole, indent=2) + "\n"


def test_pgn_written_game_by_game_is_the_file_written_at_once(tmp_path: Path) -> None:
    some = games(3)
    write_annotated_pgn(some, tmp_path / "all.pgn")
    exporter = [
        annotated_pgn(g).accept(chess.pgn.StringExporter(headers=True, variations=False))
        for g in some
    ]
    assert (tmp_path / "all.pgn").read_text() == "\n\n".join(exporter) + "\n"
    with AnnotatedPgnWriter(tmp_path / "none.pgn") as writer:
        assert not (tmp_path / "none.pgn").exists()  # created at the first game
        del writer
    assert (tmp_path / "none.pgn").read_text() == "\n"


def test_the_stream_keeps_no_game_it_handed_over(tmp_path: Path) -> None:
    path = tmp_path / "three.pgn"
    path.write_text((GOTC.read_text() + "\n\n") * 3)
    with PgnEvalsStream(path, workers=1) as stream:
        seen = sum(1 for _ in stream)
        stream.check()
    assert seen == stream.games == 3
    assert len(stream.truncated) == 0 and stream.skipped == []
    empty = tmp_path / "empty.pgn"
    empty.write_text('[Event "x"]\n[White "A"]\n[Black "B"]\n\n1. e4 e5 *\n\n')
    with PgnEvalsStream(empty, workers=1) as stream:
        assert list(stream) == []
        with pytest.raises(ValueError, match="no \\[%eval\\] annotations"):
            stream.check()
