"""Engine workers through the broker, for real: a Mosquitto of the test's own on
a free port, `livegain worker` subprocesses with real Stockfish, and the
:class:`RemoteEvaluator` (or `livegain analyze --broker`) asking them.

The helpers here (worker processes, reference evaluations) serve the service
tests too (tests/app/test_remote_service.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import aiomqtt
import chess
import chess.pgn
import pytest
from brokers import PrivateBroker

from livegain.core.evaluation import Evaluation
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.mqtt.address import parse_mqtt_url
from livegain.remote.evaluator import RemoteEvaluator
from livegain.remote.protocol import (
    Eval,
    Job,
    Presence,
    Result,
    decode,
    encode,
    jobs_topic,
    presence_topic,
)

REPO = Path(__file__).resolve().parents[2]
CENTURY = REPO / "livegain" / "data" / "game_of_the_century.pgn"


def century_boards(plies: int | None = None) -> list[chess.Board]:
    """The positions of the game of the century (after each ply)."""
    with CENTURY.open() as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    board = game.board()
    out = []
    for move in game.mainline_moves():
        board.push(move)
        out.append(board.copy(stack=False))
    return out[:plies] if plies is not None else out


async def local_reference(
    stockfish: str, boards: list[chess.Board], depth: int
) -> tuple[list[Evaluation], str, str]:
    """What the local pool says: evaluations, engine key, engine name."""
    async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=depth)) as pool:
        evs = list(await asyncio.gather(*(pool.evaluate(b) for b in boards)))
        return evs, pool.engine_key, pool.engine_name


class Workers:
    """Started `livegain worker` processes, stopped (SIGTERM, then SIGKILL) at the end."""

    def __init__(self, tmp: Path, broker_url: str) -> None:
        self.tmp = tmp
        self.broker_url = broker_url
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(
        self, name: str, *, depth: int, engine: str, processes: int = 1, extra: tuple[str, ...] = ()
    ) -> subprocess.Popen[bytes]:
        log = (self.tmp / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "livegain.cli",
                "worker",
                "--broker",
                self.broker_url,
                "--workers",
                str(processes),
                "--depth",
                str(depth),
                "--engine",
                engine,
                "--id",
                name,
                *extra,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
        self.procs[name] = proc
        return proc

    def kill(self, name: str) -> None:
        os.kill(self.procs[name].pid, signal.SIGKILL)
        self.procs[name].wait(timeout=10)

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@contextmanager
def workers(tmp: Path, broker_url: str) -> Iterator[Workers]:
    w = Workers(tmp, broker_url)
    try:
        yield w
    finally:
        w.stop_all()


def other_version(tmp: Path, stockfish: str, name: str = "Stockfish 99") -> str:
    """The real Stockfish behind a script that reports another ``id name``: a
    different engine version, as far as any UCI client can tell."""
    script = tmp / "stockfish-other-version"
    script.write_text(f'#!/bin/sh\n{stockfish} | sed -u "s/^id name .*/id name {name}/"\n')
    script.chmod(0o755)
    return str(script)


async def announced(broker: PrivateBroker, *names: str, limit: float = 60.0) -> None:
    """Wait until every named worker's presence is retained on the broker."""
    seen: set[str] = set()
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as client:
        await client.subscribe("livegain/engine/workers/+", qos=1)
        async with asyncio.timeout(limit):
            async for message in client.messages:
                if message.payload:
                    seen.add(str(message.topic).rsplit("/", 1)[-1])
                if set(names) <= seen:
                    return


async def wait_until(cond: Callable[[], bool], limit: float = 60.0, what: str = "") -> None:
    try:
        async with asyncio.timeout(limit):
            while not cond():  # noqa: ASYNC110 - other processes change it
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"not within {limit:g} s: {what}") from None


# --------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.slow]


def evaluator(broker: PrivateBroker, depth: int, **kw: object) -> RemoteEvaluator:
    # a job is republished after job_timeout: long enough for a loaded machine
    args: dict[str, object] = {"job_timeout": 10.0, "wait_for_workers": 60.0}
    args.update(kw)
    return RemoteEvaluator(
        parse_mqtt_url(broker.url),
        SearchLimit(depth=depth),
        **args,  # type: ignore[arg-type]
    )


def assert_each_position_once(ev: RemoteEvaluator, positions: int) -> None:
    """Every job accepted exactly once: none lost, none recorded twice."""
    t = ev.tracker
    assert t is not None
    assert t.stats.submitted == positions
    assert t.stats.accepted == positions
    assert sum(ev.results_by.values()) == positions
    assert t.open_jobs() == 0 and t.stats.failed == 0


async def test_results_are_those_of_the_local_pool_node_counts_included(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = century_boards()
    expected, key, _ = await local_reference(stockfish, boards, depth=8)
    with workers(tmp_path, private_broker.url) as w:
        w.start("w1", depth=8, engine=stockfish)
        w.start("w2", depth=8, engine=stockfish)
        async with evaluator(private_broker, 8) as ev:
            await wait_until(lambda: ev.capacity() >= 4, what="both workers announced")
            got = await asyncio.gather(*(ev.evaluate(b) for b in boards))
            assert ev.engine_key == key
            assert got == expected  # cp, mate, WDL, depth, nodes, best move, PV
            assert all(e.nodes > 0 for e in got if e.depth)
            positions = len({b.fen() for b in boards if not b.is_game_over()})
            assert_each_position_once(ev, positions)
            assert ev.results_by["w1"] > 0 and ev.results_by["w2"] > 0
            assert ev.tracker is not None and ev.tracker.stats.duplicates == 0
            status = ev.workers_status()
            assert {x["worker"] for x in status["workers"]} == {"w1", "w2"}
            assert all(
                x["accepted"] and x["engine"].startswith("Stockfish") for x in status["workers"]
            )


async def test_a_job_sent_the_moment_a_worker_announces_itself_is_answered(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    """A requester gives out work as soon as it sees a presence: the worker is
    subscribed to its jobs by then (a job sent before would reach no one and
    wait out its deadline)."""
    fen = century_boards(1)[0].fen()
    reply_to = "livegain/engine/results/eager"  # each worker answers on {reply_to}/{worker}
    async with aiomqtt.Client(
        "127.0.0.1", private_broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as client:
        await client.subscribe("livegain/engine/workers/+", qos=1)
        await client.subscribe(f"{reply_to}/+", qos=1)
        with workers(tmp_path, private_broker.url) as w:
            w.start("fresh", depth=6, engine=stockfish)
            async with asyncio.timeout(60):
                async for message in client.messages:
                    msg = decode(bytes(message.payload)) if message.payload else None  # type: ignore[arg-type]
                    if isinstance(msg, Presence):
                        job = Job(
                            job="eager-1",
                            fen=fen,
                            engine=msg.engine_key,
                            limit=msg.limit,
                            deadline=time.time() + 600,
                            reply_to=f"{reply_to}/{msg.worker}",
                        )
                        await client.publish(msg.jobs_topic, encode(job), qos=1)
                    elif isinstance(msg, Result):
                        assert msg.job == "eager-1" and msg.error is None and msg.eval
                        break


async def test_a_worker_killed_mid_job_loses_nothing_and_duplicates_nothing(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = century_boards(40)
    expected, _, _ = await local_reference(stockfish, boards, depth=11)
    with workers(tmp_path, private_broker.url) as w:
        w.start("doomed", depth=11, engine=stockfish)
        w.start("steady", depth=11, engine=stockfish)
        async with evaluator(private_broker, 11, job_timeout=3.0) as ev:
            await wait_until(lambda: ev.capacity() >= 4, what="both workers announced")
            run = asyncio.gather(*(ev.evaluate(b) for b in boards))
            await wait_until(lambda: ev.results_by["doomed"] >= 3, what="doomed worked")
            assert ev.tracker is not None and ev.tracker.outstanding > 0
            w.kill("doomed")  # SIGKILL: its jobs out are lost with it
            got = await asyncio.wait_for(run, 120)
            assert got == expected
            assert_each_position_once(ev, len(boards))
            # its jobs went to the other worker after their deadline ...
            assert ev.tracker.stats.republished >= 1
            assert ev.results_by["steady"] > 0
            # ... and its presence was cleared by its MQTT will
            assert "doomed" not in ev.workers_seen


async def test_a_worker_joining_mid_run_takes_work(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = century_boards(50)
    expected, _, _ = await local_reference(stockfish, boards, depth=11)
    with workers(tmp_path, private_broker.url) as w:
        w.start("first", depth=11, engine=stockfish)
        async with evaluator(private_broker, 11) as ev:
            run = asyncio.gather(*(ev.evaluate(b) for b in boards))
            await wait_until(lambda: ev.results_by["first"] >= 3, what="first worked")
            assert not run.done()
            w.start("late", depth=11, engine=stockfish)
            got = await asyncio.wait_for(run, 120)
            assert got == expected
            assert ev.results_by["late"] > 0, "the worker that joined took no job"
            assert_each_position_once(ev, len(boards))


async def test_a_worker_with_another_engine_version_is_refused(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = century_boards(20)
    expected, key, name = await local_reference(stockfish, boards, depth=8)
    with workers(tmp_path, private_broker.url) as w:
        w.start("other", depth=8, engine=other_version(tmp_path, stockfish))
        w.start("right", depth=8, engine=stockfish)
        async with evaluator(private_broker, 8, engine_name=name) as ev:
            await wait_until(
                lambda: {"other", "right"} <= set(ev.workers_seen), what="both announced"
            )
            got = await asyncio.gather(*(ev.evaluate(b) for b in boards))
            assert got == expected and ev.engine_key == key
            other = ev.workers_seen["other"]
            assert other.presence.engine_name == "Stockfish 99"
            assert not other.accepted and "Stockfish 99" in (other.reason or "")
            assert ev.workers_seen["right"].accepted
            assert ev.results_by["other"] == 0 and ev.results_by["right"] == len(boards)
            status = {x["worker"]: x for x in ev.workers_status()["workers"]}
            assert status["other"]["accepted"] is False and status["other"]["refused_because"]


async def test_a_result_from_another_engine_is_refused_and_the_job_redone(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    """A worker that announces the right engine but answers with another engine
    key (a fault no real worker shows on demand: scripted here) is refused."""
    boards = century_boards(6)
    expected, key, name = await local_reference(stockfish, boards, depth=8)
    wrong = key.replace(name, "Stockfish 99")
    prefix = "livegain/engine"
    forged = 0
    async with aiomqtt.Client(
        "127.0.0.1", private_broker.port, identifier="liar", protocol=aiomqtt.ProtocolVersion.V5
    ) as liar:
        presence = Presence(
            worker="liar",
            host="test",
            engine_name=name,
            engine_key=key,
            jobs_topic=jobs_topic(prefix, key, "liar"),
            limit={"depth": 8},
            hash_mb=16,
            processes=1,
            cores=1,  # type: ignore[arg-type]
            livegain="test",
            started=0.0,
        )
        await liar.subscribe(jobs_topic(prefix, key, "liar"), qos=1)
        await liar.publish(presence_topic(prefix, "liar"), encode(presence), qos=1, retain=True)
        async with evaluator(private_broker, 8) as ev:
            run = asyncio.gather(*(ev.evaluate(b) for b in boards))

            async def lie() -> None:
                nonlocal forged
                async for message in liar.messages:
                    job = decode(bytes(message.payload))  # type: ignore[arg-type]
                    assert isinstance(job, Job)
                    bogus = Result(
                        job=job.job,
                        fen=job.fen,
                        engine=wrong,
                        limit=job.limit,
                        worker="liar",
                        eval=Eval(cp=999, depth=8, nodes=1),
                    )
                    await liar.publish(job.reply_to, encode(bogus), qos=1)
                    forged += 1

            liar_task = asyncio.create_task(lie())
            assert ev.tracker is not None
            await wait_until(lambda: ev.tracker.stats.refused >= 2, what="forged results refused")  # type: ignore[union-attr]
            liar_task.cancel()
            await liar.publish(presence_topic(prefix, "liar"), b"", qos=1, retain=True)
            with workers(tmp_path, private_broker.url) as w:
                w.start("honest", depth=8, engine=stockfish)
                got = await asyncio.wait_for(run, 60)
            assert got == expected  # no forged score got in
            assert ev.tracker.stats.refused >= 2 and forged >= 2
            assert ev.results_by["liar"] == 0
            assert_each_position_once(ev, len(boards))


async def test_a_broker_restart_is_survived(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = century_boards(50)
    expected, _, _ = await local_reference(stockfish, boards, depth=11)
    with workers(tmp_path, private_broker.url) as w:
        w.start("w1", depth=11, engine=stockfish)
        w.start("w2", depth=11, engine=stockfish)
        async with evaluator(private_broker, 11) as ev:
            await wait_until(lambda: ev.capacity() >= 4, what="both workers announced")
            run = asyncio.gather(*(ev.evaluate(b) for b in boards))
            await wait_until(lambda: sum(ev.results_by.values()) >= 5, what="some results")
            private_broker.stop()
            await asyncio.sleep(1.0)
            assert not run.done()
            private_broker.start()
            got = await asyncio.wait_for(run, 120)
            assert got == expected
            assert ev.connects >= 2
            assert_each_position_once(ev, len(boards))
            await wait_until(lambda: ev.capacity() >= 4, what="workers announced again")


def _analyze_json(*extra: str) -> dict[str, object]:
    import json

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "livegain.cli",
            "analyze",
            str(CENTURY),
            "--depth",
            "8",
            "--json",
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=True,
    )
    data: dict[str, object] = json.loads(out.stdout)
    return data


async def test_analyze_with_broker_gives_the_local_report_and_fills_the_same_cache(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    local_json = await asyncio.to_thread(_analyze_json, "--engine", stockfish)
    cache = tmp_path / "evals.sqlite3"
    with workers(tmp_path, private_broker.url) as w:
        w.start("w1", depth=8, engine=stockfish)
        w.start("w2", depth=8, engine=stockfish)
        remote_json = await asyncio.to_thread(
            _analyze_json, "--broker", private_broker.url, "--cache", str(cache)
        )
    assert remote_json == local_json
    # the cache the workers filled serves a local pool: the same key, no search
    from livegain.engine.cache import EvalCache

    c = EvalCache(cache)
    try:
        boards = [chess.Board(), *century_boards()]  # analyze evaluates the start too
        assert c.stats().rows == len(boards) - 1  # the final mate needs no engine
        async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=8), cache=c) as pool:
            await asyncio.gather(*(pool.evaluate(b) for b in boards))
            assert pool.stats.searches == 0 and pool.stats.cache_hits == len(boards) - 1
    finally:
        c.close()


def test_worker_with_a_bad_broker_url_says_so_in_one_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "livegain.cli", "worker", "--broker", "http://x"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("livegain worker: error: --broker: ")
    assert "not an MQTT URL: 'http://x'" in lines[0]
