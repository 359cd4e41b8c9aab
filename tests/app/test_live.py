"""The whole service against real parts: replayed feeds, Stockfish, websockets clients."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from livegain.app.service import Service
from livegain.batch.analysis import analyze
from livegain.batch.engine_analysis import run_engine_analysis_async
from livegain.core.perceived import PerceivedModel
from livegain.engine.pool import EnginePool
from livegain.feeds.base import PgnHttpFeedConfig, PgnStreamFeedConfig
from livegain.relay.replay import Replay

from .conftest import DEPTH, CountingEvaluator, running, settings_for, toy_model, ws_url
from .mirror import Mirror, comparable, evaluated, fully_evaluated

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
GOTC = REPO / "livegain" / "data" / "game_of_the_century.pgn"


def write_pgn(path: Path, games: list[tuple[dict[str, str], str]]) -> None:
    texts = []
    for headers, moves in games:
        tags = "\n".join(f'[{k} "{_esc(v)}"]' for k, v in headers.items())
        texts.append(f"{tags}\n\n{moves} {headers.get('Result', '*')}\n")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(texts))
    tmp.replace(path)


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def headers(board: int, white: str, black: str, result: str = "*") -> dict[str, str]:
    return {
        "Event": "Test Open",
        "Round": f"1.{board}",
        "White": white,
        "Black": black,
        "Result": result,
    }


# ---------------------------------------------------------------------------


def _opening_model() -> PerceivedModel:
    from livegain.models.perceived import load_perceived_models

    (model,) = [m for m in load_perceived_models() if m.name == "lichess-rapid/pgn-evals"]
    assert model.opening is not None
    return model


@pytest.mark.parametrize(
    ("kind", "which"),
    [("pgn-http", "toy"), ("pgn-stream", "toy"), ("pgn-http", "opening")],
)
async def test_replayed_game_matches_batch_analysis(
    tmp_path: Path, pool: EnginePool, kind: str, which: str
) -> None:
    """Every ply arrives evaluated; perceived ratings equal `analyze` at the same depth.

    Polled (``pgn-http``) or streamed (``pgn-stream``, the Lichess broadcast format).
    Both sides use the same calibrated model: the calibrated estimates
    (``perceived``) and Algorithm 4's (``algorithm4``) must both agree; also
    with the shipped lichess model, which reads the opening of the moves."""
    model = toy_model() if which == "toy" else _opening_model()
    async with Replay.from_file(GOTC, speed=1000, mode="pgn-http") as replay:
        feed: PgnHttpFeedConfig | PgnStreamFeedConfig
        if kind == "pgn-http":
            feed = PgnHttpFeedConfig(name="relay", url=replay.pgn_url, interval=0.2)
        else:
            feed = PgnStreamFeedConfig(name="relay", url=replay.stream_url)
        settings = settings_for(tmp_path, feeds=[feed.model_dump()])
        service = Service(settings, evaluator=pool, perceived_model=model)
        async with running(service), Mirror(ws_url(service)) as mirror:
            plies = replay.total_plies
            while not replay.finished:
                await replay.advance(10)
                await asyncio.sleep(0.1)
            await mirror.wait(
                lambda m: (
                    len(m.boards) == 1 and fully_evaluated(next(iter(m.boards.values())), plies)
                ),
                wait=90,
            )
            state = next(iter(mirror.boards.values()))
            # The mirror (snapshot + updates) equals a fresh snapshot.
            fresh = service.server.state(state["board_id"])
            assert fresh is not None
            assert comparable(state) == comparable(json.loads(fresh.model_dump_json()))
            assert state["result"] == "0-1"
            assert mirror.errors == []
    # The same game through batch analysis with the same engine settings.
    with GOTC.open() as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None
    annotated, _ = await run_engine_analysis_async([game], depth=DEPTH, workers=1)
    report = analyze(annotated, 2860.0, model=model)
    g = report.games[0]
    assert [m["eval"]["cp"] for m in state["moves"]] == annotated[0].scores[1:]
    for color, pg in (("white", g.white), ("black", g.black)):
        # Algorithm 4: the same numbers as analyze's (`PlayerGame.perceived`).
        a4 = state[f"{color}_algorithm4"]
        assert a4["rating"] == pytest.approx(pg.perceived.rating)
        assert (a4["low"], a4["high"]) == pytest.approx((pg.perceived.low, pg.perceived.high))
        assert (a4["moves"], a4["bounded"]) == (pg.perceived.moves, pg.perceived.bounded)
        assert [p["algorithm4"]["rating"] for p in state[f"{color}_trace"]] == pytest.approx(
            [t.perceived.rating for t in pg.trace]
        )
        # The calibrated estimate: the same as analyze's (`PlayerGame.calibrated`).
        cal = state[f"{color}_perceived"]
        assert pg.calibrated is not None
        assert (cal["rating"], cal["low"], cal["high"]) == pytest.approx(
            (pg.calibrated.rating, pg.calibrated.low, pg.calibrated.high)
        )
        assert (cal["moves"], cal["early"], cal["model"]) == (
            pg.calibrated.moves,
            False,
            model.name,
        )
        trace = state[f"{color}_trace"]
        assert [p["ply"] for p in trace] == [t.ply for t in pg.trace]
        assert [p["rating"] for p in trace] == pytest.approx(
            [t.calibrated.rating for t in pg.trace if t.calibrated is not None]
        )
        assert [p["early"] for p in trace] == [
            t.calibrated is not None and t.calibrated.early for t in pg.trace
        ]
    # And as `livegain analyze --json` writes them (figures rounded to 0.1).
    js = report.to_json()["games"][0]
    for color in ("white", "black"):
        for key in ("perceived", "algorithm4"):
            wire = state[f"{color}_{key}"]
            assert js[color][key]["rating"] == pytest.approx(wire["rating"], abs=0.051)
        entries = js[color]["trace"]
        assert [e["perceived"]["rating"] for e in entries] == pytest.approx(
            [p["rating"] for p in state[f"{color}_trace"]], abs=0.051
        )
        assert [e["algorithm4"]["rating"] for e in entries] == pytest.approx(
            [p["algorithm4"]["rating"] for p in state[f"{color}_trace"]], abs=0.051
        )


MAIN = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6"
CORRECTED = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6 6. d4 exd4"


async def test_correction_mid_game_equals_clean_replay(tmp_path: Path, pool: EnginePool) -> None:
    pgn = tmp_path / "round.pgn"
    write_pgn(pgn, [(headers(1, "Alpha, Ann", "Beta, Bob"), MAIN)])
    feed = {"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}
    model = toy_model()
    service = Service(
        settings_for(tmp_path / "a", feeds=[feed]), evaluator=pool, perceived_model=model
    )
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mirror.wait(lambda m: any(fully_evaluated(s, 14) for s in m.boards.values()))
        # The operator rewrites the game from ply 7 on (4. Bxc6 instead of 4. Ba4).
        write_pgn(pgn, [(headers(1, "Alpha, Ann", "Beta, Bob"), CORRECTED)])
        await mirror.wait(
            lambda m: any(
                fully_evaluated(s, 12) and s["moves"][6]["san"] == "Bxc6" for s in m.boards.values()
            )
        )
        corrected = next(iter(mirror.boards.values()))
        truncations = [
            m["truncate_to"] for m in mirror.messages if m["type"] == "update" and m["truncate_to"]
        ]
        assert 6 in truncations
    # A clean run of the corrected game only.
    clean_pgn = tmp_path / "clean.pgn"
    write_pgn(clean_pgn, [(headers(1, "Alpha, Ann", "Beta, Bob"), CORRECTED)])
    feed = {"type": "file", "name": "arbiter", "path": str(clean_pgn), "interval": 0.1}
    clean = Service(
        settings_for(tmp_path / "b", feeds=[feed]), evaluator=pool, perceived_model=model
    )
    async with running(clean), Mirror(ws_url(clean)) as mirror2:
        await mirror2.wait(lambda m: any(fully_evaluated(s, 12) for s in m.boards.values()))
        reference = next(iter(mirror2.boards.values()))
    assert corrected["white_perceived"]["model"] == "toy"
    assert all(p["rating"] is not None for p in corrected["black_trace"])
    a, b = comparable(corrected), comparable(reference)
    for key in a:
        if a[key] != b[key]:
            if key == "moves":
                for x, y in zip(a[key], b[key], strict=True):
                    assert x == y, key
            assert a[key] == b[key], key
    assert a == b


async def test_duplicates_and_bad_board_do_not_disturb(tmp_path: Path, pool: EnginePool) -> None:
    """The same game twice is one board; an illegal move on one board stops only that board."""
    pgn = tmp_path / "round.pgn"
    good = (headers(1, "Alpha, Ann", "Beta, Bob"), MAIN)
    bad = (headers(2, "Gamma, Gil", "Delta, Dan"), "1. d4 d5 2. c4 Ke7 3. Nc3 Nf6")  # 2... Ke7??
    xss = (headers(3, "<img src=x onerror=alert(1)>", 'Robert "); DROP TABLE--'), "1. c4 e5")
    write_pgn(pgn, [good, bad, good, xss])
    feed = {"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}
    # No calibrated model to be found: Algorithm 4 alone, `perceived` null.
    missing = tmp_path / "no-models.toml"
    settings = settings_for(tmp_path, feeds=[feed], engine={"perceived_model": str(missing)})
    service = Service(settings, evaluator=pool)
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mirror.wait(
            lambda m: (
                len(m.boards) == 3
                and any(fully_evaluated(s, 14) for s in m.boards.values())
                and any(
                    s["black"]["name"].startswith("Delta") and evaluated(s) == 3
                    for s in m.boards.values()
                )
                # every board evaluated: no update still to come during the check below
                and all(evaluated(s) == len(s["moves"]) for s in m.boards.values())
            )
        )
        by_white = {s["white"]["name"]: s for s in mirror.boards.values()}
        assert set(by_white) == {"Alpha, Ann", "Gamma, Gil", "<img src=x onerror=alert(1)>"}
        bad_state = by_white["Gamma, Gil"]
        assert [m["san"] for m in bad_state["moves"]] == ["d4", "d5", "c4"]
        good_state = by_white["Alpha, Ann"]
        assert good_state["white_perceived"] is None and good_state["black_perceived"] is None
        assert good_state["white_algorithm4"]["moves"] == 7
        assert all(p["rating"] is None and p["early"] for p in good_state["white_trace"])
        assert service.health()["perceived_model"] == {
            "model": None,
            "why": f"no calibrated model ({missing}: no such file)",
        }
        seq_before = {b: s["seq"] for b, s in mirror.boards.items()}
        # Deliver the very same file again (new mtime): nothing changes.
        write_pgn(pgn, [good, bad, good, xss])
        await asyncio.sleep(1.0)
        assert {b: s["seq"] for b, s in mirror.boards.items()} == seq_before
        # The illegal move was reported (by the feed, naming the game) and counted.
        health = service.health()
        assert health["feed_errors"]["arbiter"] >= 1
        # The same snapshots delivered again straight to the service: no-ops too.
        assert service.store is not None
        for _, snap in service.store.load_snapshots():
            service.on_snapshot(snap)
        assert service.stats.duplicates == 3
        await asyncio.sleep(0.3)
        assert {b: s["seq"] for b, s in mirror.boards.items()} == seq_before
        # Names travel as data, verbatim.
        xss_state = by_white["<img src=x onerror=alert(1)>"]
        assert xss_state["black"]["name"] == 'Robert "); DROP TABLE--'


async def test_restart_mid_game_loses_nothing_and_reanalyses_nothing(
    tmp_path: Path, pool: EnginePool
) -> None:
    pgn = tmp_path / "round.pgn"
    first = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6"
    full = MAIN
    write_pgn(pgn, [(headers(1, "Alpha, Ann", "Beta, Bob"), first)])
    feed = {"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}
    settings = settings_for(tmp_path, feeds=[feed])
    before = CountingEvaluator(pool)
    model = toy_model()
    service = Service(settings, evaluator=before, perceived_model=model)
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mirror.wait(lambda m: any(fully_evaluated(s, 8) for s in m.boards.values()))
        state_before = next(iter(mirror.boards.values()))
    assert len(before.fens) >= 9
    # While the service is down the game goes on.
    write_pgn(pgn, [(headers(1, "Alpha, Ann", "Beta, Bob"), full)])
    after = CountingEvaluator(pool)
    service2 = Service(settings, evaluator=after, perceived_model=model)
    async with running(service2):
        assert service2.stats.restored_boards == 1
        assert service2.stats.restored_evals == 9
        async with Mirror(ws_url(service2)) as mirror2:
            await mirror2.wait(lambda m: any(fully_evaluated(s, 14) for s in m.boards.values()))
            state_after = next(iter(mirror2.boards.values()))
    # The engine searched only the six new positions, none of the old ones.
    assert not set(after.fens) & set(before.fens)
    assert len(set(after.fens)) == 6
    assert state_after["board_id"] == state_before["board_id"]
    assert state_after["moves"][:8] == state_before["moves"]
    assert state_after["white_trace"][:4] == state_before["white_trace"]
    assert state_after["black_trace"][:4] == state_before["black_trace"]
    assert state_before["white_trace"][-1]["rating"] is not None  # calibrated, restored too


async def test_match_odds_follow_the_game(tmp_path: Path, pool: EnginePool) -> None:
    pgn = tmp_path / "round.pgn"
    write_pgn(pgn, [(headers(1, "Alpha, Ann", "Beta, Bob"), MAIN)])
    feed = {"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}
    match = {
        "a": "Beta",
        "b": "Alpha",
        "games": 4,
        "score_a": 1.5,
        "score_b": 0.5,
        "rating_a": 2700,
        "rating_b": 2650,
        "draw_rate": 0.5,
    }
    service = Service(settings_for(tmp_path, feeds=[feed], matches=[match]), evaluator=pool)
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mirror.wait(lambda m: any(fully_evaluated(s, 14) for s in m.boards.values()))
        state = next(iter(mirror.boards.values()))
    odds = state["match"]
    assert odds is not None
    assert (odds["a"], odds["b"], odds["games_left"]) == ("Beta", "Alpha", 2)
    assert (odds["score_a"], odds["score_b"]) == (1.5, 0.5)
    assert odds["a_wins"] + odds["draw"] + odds["b_wins"] == pytest.approx(1.0)
    # Leading by a point with two games left and the higher rating: A is the favourite.
    assert odds["a_wins"] > odds["b_wins"]


class FailingEvaluator(CountingEvaluator):
    """The real pool, except that one position always fails (a fault on demand)."""

    def __init__(self, pool: EnginePool, bad_fen: str) -> None:
        super().__init__(pool)
        self.bad_fen = bad_fen

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Any:
        if board.fen() == self.bad_fen:
            self.fens.append(board.fen())
            raise RuntimeError("engine crashed on this position")
        return await super().evaluate(board, priority)


async def test_a_failing_board_or_position_never_stops_the_others(
    tmp_path: Path, pool: EnginePool
) -> None:
    pgn = tmp_path / "round.pgn"
    good = (headers(1, "Alpha, Ann", "Beta, Bob"), MAIN)
    cursed = (headers(2, "Gamma, Gil", "Delta, Dan"), "1. d4 d5 2. c4 e6")
    write_pgn(pgn, [good, cursed])
    board = chess.Board()
    for san in ("d4", "d5", "c4"):
        board.push_san(san)
    evaluator = FailingEvaluator(pool, board.fen())  # ply 3 of board 2 cannot be evaluated
    feed = {"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}
    service = Service(settings_for(tmp_path, feeds=[feed]), evaluator=evaluator)
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mirror.wait(lambda m: len(m.boards) == 2)  # both boards read once, cleanly
        assert service.registry is not None
        real_apply = service.registry.apply

        def apply(snap: Any) -> Any:  # a bug in the game state, on one board only
            if snap.white.name == "Gamma, Gil" and len(snap.moves) > 4:
                raise RuntimeError("bug")
            return real_apply(snap)

        service.registry.apply = apply  # type: ignore[method-assign]
        write_pgn(pgn, [good, (cursed[0], "1. d4 d5 2. c4 e6 3. Nc3 Nf6")])
        await mirror.wait(
            lambda m: (
                len(m.boards) == 2
                and any(fully_evaluated(s, 14) for s in m.boards.values())
                and len(service.scheduler.given_up) == 1
            )
        )
        health = service.health()
        cursed_id = next(b for b, s in mirror.boards.items() if s["white"]["name"] == "Gamma, Gil")
        assert health["status"] == "degraded"
        assert service.board_status()[cursed_id]["errors"] >= 1
        assert service.stats.board_failures  # the apply bug was caught and counted
        assert evaluator.fens.count(board.fen()) == 3  # tried three times, then given up
        # Failure counts are kept only for positions that never succeeded.
        assert set(service.scheduler.failures) == service.scheduler.given_up
        cursed_state = mirror.boards[cursed_id]
        assert evaluated(cursed_state) == 2  # the prefix stops at the failed position
