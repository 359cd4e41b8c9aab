"""The pool's UCI client: the pure reader (lines in, values out) and the pool on top."""

from __future__ import annotations

import chess
import chess.engine
import pytest

from livegain.engine.errors import EngineSearchError, EngineStartError
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit, evaluation_from_result
from livegain.engine.uci import (
    SearchReader,
    SearchResult,
    UciError,
    go_command,
    option_line,
    parse_option,
    position_command,
)

from .conftest import FakeEngineFactory

pytestmark = pytest.mark.timeout(120)

SF_LINES = [
    "info string NNUE evaluation using nn-ad9b42354671.nnue enabled",
    "info depth 1 seldepth 1 multipv 1 score cp 12 wdl 40 950 10 nodes 20 nps 20000 "
    "hashfull 0 tbhits 0 time 1 pv e2e4",
    "info depth 2 seldepth 2 multipv 1 score cp 30 lowerbound wdl 60 930 10 nodes 61 "
    "nps 61000 hashfull 0 tbhits 0 time 1 pv d2d4 d7d5",
    "info depth 3 seldepth 3 multipv 1 score cp -35 wdl 2 949 49 nodes 390 nps 390000 "
    "hashfull 0 tbhits 0 time 1 pv c7c5 c2c3 g8f6",
]


def read(lines: list[str]) -> SearchResult:
    reader = SearchReader()
    for line in lines:
        assert reader.feed(line) is None
    result = reader.feed("bestmove c7c5 ponder c2c3")
    assert result is not None
    return result


def test_reader_keeps_the_last_score_line() -> None:
    result = read(SF_LINES)
    assert (result.kind, result.score, result.wdl) == ("cp", -35, (2, 949, 49))
    assert (result.depth, result.nodes) == (3, 390)
    assert result.pv == ("c7c5", "c2c3", "g8f6")
    assert result.bestmove == "c7c5"


def test_reader_takes_the_depth_of_a_later_iteration_and_ignores_strings() -> None:
    lines = [
        *SF_LINES,
        "info depth 4 currmove e2e4 currmovenumber 1",
        "info string score cp 999 is not a score line",
    ]
    result = read(lines)
    assert result.depth == 4 and result.score == -35


def test_reader_mate_and_no_best_move() -> None:
    reader = SearchReader()
    reader.feed("info depth 5 score mate -2 wdl 0 0 1000 nodes 99 pv h7h8 g6g7")
    result = reader.feed("bestmove (none)")
    assert result is not None
    assert (result.kind, result.score, result.bestmove) == ("mate", -2, None)


@pytest.mark.parametrize(
    "line",
    ["info depth 5 score cp abc nodes 3", "info depth 5 score cp", "info depth 5 score pawns 3"],
)
def test_reader_names_a_bad_info_line(line: str) -> None:
    reader = SearchReader()
    reader.feed(line)
    with pytest.raises(UciError, match="info line"):
        reader.feed("bestmove e2e4")


def test_reader_refuses_a_best_move_without_a_score() -> None:
    reader = SearchReader()
    with pytest.raises(UciError, match="without any score"):
        reader.feed("bestmove e2e4")


def test_results_are_turned_to_whites_view() -> None:
    reader = SearchReader()
    reader.feed("info depth 7 score mate 3 wdl 1000 0 0 nodes 5 pv d8d1")
    black_mates = reader.feed("bestmove d8d1")
    assert black_mates is not None
    ev = evaluation_from_result(black_mates, white_to_move=False)
    assert (ev.cp, ev.mate, ev.wdl, ev.best) == (-3900, -3, (0, 0, 1000), "d8d1")
    reader = SearchReader()
    reader.feed("info depth 7 score cp 25 wdl 100 880 20 nodes 5 pv e7e5")
    plain = reader.feed("bestmove e7e5")
    assert plain is not None
    ev = evaluation_from_result(plain, white_to_move=False)
    assert (ev.cp, ev.mate, ev.wdl) == (-25, None, (20, 880, 100))


def test_options_and_commands() -> None:
    hash_opt = parse_option("option name Hash type spin default 16 min 1 max 33554432")
    assert hash_opt is not None and (hash_opt.name, hash_opt.min, hash_opt.max) == (
        "Hash",
        1,
        33554432,
    )
    assert option_line(hash_opt, 64) == "setoption name Hash value 64"
    with pytest.raises(chess.engine.EngineError, match="at most 33554432"):
        option_line(hash_opt, 10**9)
    spaced = parse_option("option name Debug Log File type string default ")
    assert spaced is not None and spaced.name == "Debug Log File"
    check = parse_option("option name UCI_ShowWDL type check default false")
    assert check is not None and option_line(check, True) == "setoption name UCI_ShowWDL value true"
    combo = parse_option("option name Style type combo default Normal var Solid var Risky Play")
    assert combo is not None and combo.var == ["Solid", "Risky Play"]
    assert parse_option("id name Stockfish 15.1") is None
    assert position_command(chess.STARTING_FEN) == "position startpos"
    fen = "8/8/4k3/8/8/4K3/4P3/8 w - - 0 1"
    assert position_command(fen) == f"position fen {fen}"
    assert go_command(12, None) == "go depth 12"
    assert go_command(None, 5000) == "go nodes 5000"


async def test_garbled_engine_output_is_a_clear_error(fake_engine: FakeEngineFactory) -> None:
    path = fake_engine("garbled")
    board = chess.Board()
    async with EnginePool(path, workers=1, limit=SearchLimit(depth=5), max_retries=1) as pool:
        with pytest.raises(EngineSearchError) as err:
            await pool.evaluate(board)
    assert board.fen() in str(err.value)
    assert "cannot read the engine's info line 'info depth 5 score cp x1 nodes 1234'" in str(
        err.value
    )


@pytest.mark.engine
async def test_bad_or_managed_options_are_refused_at_start(stockfish: str) -> None:
    with pytest.raises(EngineStartError, match=r"Hash.*at most"):
        await EnginePool(stockfish, workers=1, hash_mb=10**9).start()
    with pytest.raises(EngineStartError, match=r"MultiPV.*pool manages it"):
        await EnginePool(stockfish, workers=1, options={"MultiPV": 3}).start()


@pytest.mark.engine
async def test_a_search_replays_no_principal_variation(
    stockfish: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver's cost was python-chess replaying every PV of every depth on a
    board (docs/benchmarks.md); a pool search now makes no board move at all."""
    pushes = 0
    push = chess.Board.push

    def counting_push(self: chess.Board, move: chess.Move) -> None:
        nonlocal pushes
        pushes += 1
        push(self, move)

    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=10)) as pool:
        monkeypatch.setattr(chess.Board, "push", counting_push)
        ev = await pool.evaluate(board)
        monkeypatch.undo()
    assert ev.depth == 10 and len(ev.pv) >= 2
    assert chess.Move.from_uci(ev.pv[0]) in board.legal_moves
    assert pushes == 0
