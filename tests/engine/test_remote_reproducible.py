"""`livegain analyze --broker` gives what local `livegain analyze` gives, ply by
ply, whichever worker evaluated a position, in whatever order, and when a job
was given out again after its worker was SIGKILLed mid-run (real Mosquitto of
the test's own, real `livegain worker` processes, real Stockfish).

The games: the first three of the demo round and one that ends by threefold
repetition (a demo game with knights shuffled out and back twice), the case
where the two paths once differed: the local batch scores a repeated position
as a draw by the rules (with the game's history), and the workers were sent
its bare FEN."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import aiomqtt
import chess
import chess.pgn
import pytest
from brokers import PrivateBroker

from livegain.batch.engine_analysis import annotate_all, game_positions, to_search
from livegain.core.evaluation import Evaluation
from livegain.remote.protocol import Result, decode

from .test_remote_workers import REPO, announced, wait_until, workers

DEMO_ROUND = REPO / "livegain" / "data" / "demo-round.pgn"
DEPTH = 8


def demo_games(n: int) -> list[chess.pgn.Game]:
    games = []
    with DEMO_ROUND.open() as fh:
        while len(games) < n and (g := chess.pgn.read_game(fh)) is not None:
            games.append(g)
    return games


def shuffle_out_and_back(board: chess.Board) -> list[chess.Move]:
    """Four quiet knight moves, one out and back per side, that bring ``board`` back."""
    for ours in board.legal_moves:
        if board.piece_type_at(ours.from_square) != chess.KNIGHT or board.is_capture(ours):
            continue
        board.push(ours)
        try:
            for theirs in board.legal_moves:
                piece = board.piece_type_at(theirs.from_square)
                if piece != chess.KNIGHT or board.is_capture(theirs):
                    continue
                back = [chess.Move(ours.to_square, ours.from_square)]
                back.append(chess.Move(theirs.to_square, theirs.from_square))
                trial = board.copy()
                trial.push(theirs)
                if back[0] in trial.legal_moves:
                    trial.push(back[0])
                    if back[1] in trial.legal_moves:
                        return [ours, theirs, *back]
        finally:
            board.pop()
    raise AssertionError(f"no knight shuffle in {board.fen()}")


def repetition_game(source: chess.pgn.Game, plies: int = 24) -> chess.pgn.Game:
    """``source``'s first ``plies`` plies, then a shuffle twice: a threefold repetition."""
    board = source.board()
    for move in list(source.mainline_moves())[:plies]:
        board.push(move)
    shuffle = shuffle_out_and_back(board)
    for move in shuffle * 2:
        board.push(move)
    assert board.is_repetition(3)
    game = chess.pgn.Game.from_board(board)
    for key in ("Event", "Site", "Date", "White", "Black", "WhiteElo", "BlackElo"):
        if key in source.headers:
            game.headers[key] = source.headers[key]
    game.headers["Round"] = "9.1"
    game.headers["Result"] = "1/2-1/2"
    return game


def round_file(tmp: Path) -> Path:
    games = demo_games(3)
    games.append(repetition_game(demo_games(4)[3]))
    path = tmp / "round.pgn"
    path.write_text("\n\n".join(str(g) for g in games) + "\n")
    return path


def evals_by_ply(pgn: str) -> list[list[str]]:
    """Each game's move comments (the [%eval] of every ply), in order."""
    out = []
    fh = io.StringIO(pgn)
    while (game := chess.pgn.read_game(fh)) is not None:
        out.append([node.comment for node in game.mainline()])
    return out


async def analyze(pgn: Path, out: Path, *extra: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "livegain.cli",
        "analyze",
        str(pgn),
        "--depth",
        str(DEPTH),
        "--json",
        "--output-pgn",
        str(out),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, stderr.decode(errors="replace")
    data: dict[str, Any] = json.loads(stdout)
    return data


def test_a_repeated_position_is_scored_by_the_rules_on_both_paths() -> None:
    """What an engine is given to search, local pool or workers alike: never
    the position the rules score with the game's history."""
    prepared = [game_positions(repetition_game(demo_games(4)[3]))]
    ruled = prepared[0].ruled
    boards, fens = to_search(prepared)
    assert len(boards) == len(fens) == sum(r is None for r in ruled) == len(ruled) - 2
    last = ruled[-1]
    assert last is not None and last.rule == "threefold-repetition"
    assert [b.fen() for b in boards] == fens
    # The searched evaluations go to the other positions, in order; the draws stay.
    searched = [Evaluation(cp=i + 1) for i in range(len(boards))]
    (annotated,) = annotate_all(prepared, searched)
    assert annotated.scores == [*range(1, len(boards) + 1), 0, 0]
    with pytest.raises(ValueError, match="more evaluations"):
        annotate_all(prepared, [*searched, Evaluation(cp=1)])


@pytest.mark.engine
@pytest.mark.broker
@pytest.mark.slow
async def test_analyze_with_broker_equals_local_ply_by_ply_with_a_worker_killed(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    pgn = round_file(tmp_path)
    local = await analyze(pgn, tmp_path / "local.pgn", "--engine", stockfish, "--workers", "2")
    by_worker: dict[str, int] = {}
    quick = ("--job-timeout", "3")  # the killed worker's jobs go to the other in 3 s
    with workers(tmp_path, private_broker.url) as w:
        w.start("doomed", depth=DEPTH, engine=stockfish)
        w.start("steady", depth=DEPTH, engine=stockfish)
        await announced(private_broker, "doomed", "steady")
        async with aiomqtt.Client(
            "127.0.0.1", private_broker.port, protocol=aiomqtt.ProtocolVersion.V5
        ) as watch:
            await watch.subscribe("livegain/engine/results/#", qos=1)

            async def count() -> None:
                async for message in watch.messages:
                    res = decode(bytes(message.payload))  # type: ignore[arg-type]
                    if isinstance(res, Result) and res.eval is not None:
                        by_worker[res.worker] = by_worker.get(res.worker, 0) + 1

            counter = asyncio.create_task(count())
            run = asyncio.create_task(
                analyze(pgn, tmp_path / "remote.pgn", "--broker", private_broker.url, *quick)
            )
            try:
                await wait_until(
                    lambda: by_worker.get("doomed", 0) >= 5 or run.done(), what="doomed worked"
                )
                assert not run.done(), "the run ended before the kill"
                w.kill("doomed")  # SIGKILL: the jobs it holds are given out again
                killed_at = dict(by_worker)
                remote = await run
            finally:
                counter.cancel()
                run.cancel()
    assert remote == local
    local_pgn = (tmp_path / "local.pgn").read_text()
    remote_pgn = (tmp_path / "remote.pgn").read_text()
    plies = evals_by_ply(local_pgn)
    assert evals_by_ply(remote_pgn) == plies and len(plies) == 4
    assert remote_pgn == local_pgn
    # the steady worker took over, the killed one had really worked
    assert killed_at["doomed"] >= 5 and by_worker["steady"] > killed_at.get("steady", 0)
    # the repetition game ends on a draw by the rules on both paths
    last = json.dumps(local["games"][3])
    assert local["games"][3]["result"] == "1/2-1/2", last
