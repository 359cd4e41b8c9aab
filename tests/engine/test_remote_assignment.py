"""Direct assignment against workers that misbehave, for real: a Mosquitto of
the test's own, a real `livegain worker` (Stockfish), and scripted fakes for
what no real worker does on demand: one that takes jobs and never answers,
one that answers every job with an error, one that answers with results no
search can give, one that answers with plausible but wrong scores."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiomqtt
import chess
import pytest
from brokers import PrivateBroker

from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.remote.protocol import (
    Eval,
    Job,
    Limit,
    Presence,
    Result,
    decode,
    encode,
    jobs_topic,
    presence_topic,
)

from .test_remote_workers import (
    assert_each_position_once,
    century_boards,
    evaluator,
    local_reference,
    wait_until,
    workers,
)

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.slow]

PREFIX = "livegain/engine"
DEPTH = 8

Answer = Callable[[Job], Awaitable[Eval | str | None]]


class Fake:
    """A scripted worker: announces ``processes``, reads the jobs given to it,
    and answers each with what ``answer`` returns (an evaluation, an error
    text, or None: never answers)."""

    def __init__(self, client: aiomqtt.Client, name: str, answer: Answer) -> None:
        self.client = client
        self.name = name
        self.answer = answer
        self.jobs: list[Job] = []
        self.answered = 0

    async def run(self) -> None:
        async for message in self.client.messages:
            job = decode(bytes(message.payload))  # type: ignore[arg-type]
            assert isinstance(job, Job)
            self.jobs.append(job)
            ev = await self.answer(job)
            if ev is not None:
                res = Result(
                    job=job.job,
                    fen=job.fen,
                    engine=job.engine,
                    limit=job.limit,
                    worker=self.name,
                    eval=ev if isinstance(ev, Eval) else None,
                    error=ev if isinstance(ev, str) else None,
                )
                await asyncio.shield(self.client.publish(job.reply_to, encode(res), qos=1))
                self.answered += 1


@contextlib.asynccontextmanager
async def fake_worker(
    broker: PrivateBroker, name: str, key: str, engine_name: str, processes: int, answer: Answer
) -> AsyncIterator[Fake]:
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as client:
        await client.subscribe(jobs_topic(PREFIX, key, name), qos=1)
        presence = Presence(
            worker=name,
            host="fake",
            engine_name=engine_name,
            engine_key=key,
            jobs_topic=jobs_topic(PREFIX, key, name),
            limit=Limit(depth=DEPTH),
            hash_mb=16,
            processes=processes,
            cores=processes,
            livegain="fake",
            started=time.time(),
        )
        await client.publish(presence_topic(PREFIX, name), encode(presence), qos=1, retain=True)
        fake = Fake(client, name, answer)
        task = asyncio.create_task(fake.run())
        try:
            yield fake
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await client.publish(presence_topic(PREFIX, name), b"", qos=1, retain=True)


async def test_a_worker_that_takes_jobs_and_never_answers_gets_no_more(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    """A fake announcing 64 processes takes the jobs given to it and never
    answers: after two of its jobs expire it is silent, gets not one job more,
    its jobs go to the real worker, and every position is evaluated."""
    boards = century_boards(30)
    expected, key, name = await local_reference(stockfish, boards, depth=DEPTH)

    async def never(_job: Job) -> None:
        return None

    with workers(tmp_path, private_broker.url) as w:
        w.start("honest", depth=DEPTH, engine=stockfish)
        async with (
            fake_worker(private_broker, "sink", key, name, 64, never) as sink,
            evaluator(private_broker, DEPTH, job_timeout=3.0, engine_name=name) as ev,
        ):
            await wait_until(
                lambda: {"sink", "honest"} <= set(ev.workers_seen) and ev.capacity() >= 130,
                what="both workers accepted",
            )
            run = asyncio.gather(*(ev.evaluate(b) for b in boards))
            await wait_until(lambda: ev.published_to["sink"] > 0, what="the sink took jobs")
            state = ev.roster.get("sink")
            assert state is not None
            await wait_until(lambda: state.status == "silent", what="the sink found silent")
            given = ev.published_to["sink"]
            got = await asyncio.wait_for(run, 120)
            assert got == expected
            assert_each_position_once(ev, len(boards))
            assert ev.results_by["sink"] == 0 and ev.results_by["honest"] == len(boards)
            # not one job more after it was found silent; every one it was given reached it
            assert ev.published_to["sink"] == given
            await wait_until(lambda: len(sink.jobs) == given, what="the sink's jobs delivered")
            assert sink.answered == 0
            status = {x["worker"]: x for x in ev.workers_status()["workers"]}
            assert status["sink"]["status"] == "silent" and status["sink"]["accepted"]
            assert "unanswered" in status["sink"]["status_because"]
            assert status["honest"]["status"] == "active"
            assert ev.workers_status()["jobs"]["workers_silenced"] == 1
            assert ev.capacity() == 2  # the honest worker's room only


@pytest.mark.parametrize("fault", ["error", "invalid"])
async def test_a_worker_answering_every_job_with_an_error_or_an_invalid_result_gets_no_more(
    fault: str, stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    """A fake announcing 8 processes (the most room: it gets the first jobs)
    answers each job at once, with an error, or with a result no search can
    give (a depth beyond the limit): after two errors in a row it is failing,
    after its first invalid result it is dropped; it gets not one job more, its
    jobs go to the real worker at once (long before their deadline), and every
    position is evaluated as the local pool evaluates it."""
    boards = century_boards(30)
    expected, key, name = await local_reference(stockfish, boards, depth=DEPTH)

    async def broken(job: Job) -> Eval | str:
        if fault == "error":
            return "EngineSearchError: the engine died"
        move = min(m.uci() for m in chess.Board(job.fen).legal_moves)
        return Eval(cp=20, depth=DEPTH + 4, nodes=1000, best=move, pv=(move,))

    want = "failing" if fault == "error" else "dropped"
    with workers(tmp_path, private_broker.url) as w:
        w.start("honest", depth=DEPTH, engine=stockfish)
        async with (
            fake_worker(private_broker, "broken", key, name, 8, broken) as fake,
            # deadlines far off: every job moved off the fake was moved by the rule
            evaluator(private_broker, DEPTH, job_timeout=60.0, verify_share=0.0) as ev,
        ):
            await wait_until(
                lambda: ev.roster.usable("broken") and ev.roster.usable("honest"),
                what="both workers accepted",
            )
            run = asyncio.gather(*(ev.evaluate(b) for b in boards))
            state = ev.roster.get("broken")
            assert state is not None
            await wait_until(lambda: state.status == want, what=f"the fake found {want}")
            given = ev.published_to["broken"]
            got = await asyncio.wait_for(run, 120)
            assert got == expected
            assert_each_position_once(ev, len(boards))
            assert ev.results_by["broken"] == 0 and ev.results_by["honest"] == len(boards)
            assert ev.published_to["broken"] == given  # not one job more
            t = ev.tracker
            assert t is not None and t.stats.expired == 0
            stats = t.stats

            def judged() -> int:
                """The fake's answers for open jobs (one per job it was given;
                for a job finished meanwhile, a duplicate instead)."""
                return stats.errors if fault == "error" else stats.invalid

            await wait_until(
                lambda: fake.answered == given and judged() + stats.duplicates == given,
                what="the fake's answers judged",
            )
            row = {x["worker"]: x for x in ev.workers_status()["workers"]}["broken"]
            assert row["status"] == want and row["accepted"] is True
            jobs = ev.workers_status()["jobs"]
            if fault == "error":
                assert "answered with an error: EngineSearchError" in row["status_because"]
                assert 2 <= row["errors"] <= judged()  # errors counted against it
                assert jobs["workers_failing"] == 1 and jobs["workers_dropped"] == 0
            else:
                assert f"depth {DEPTH + 4} beyond the limit {DEPTH}" in row["status_because"]
                assert jobs["invalid_by"] == {"broken": judged()} and judged() >= 1
                assert jobs["workers_dropped"] == 1 and jobs["workers_failing"] == 0
            assert jobs["workers_silenced"] == 0
            assert ev.capacity() == 2  # the honest worker's room only


async def test_a_worker_answering_wrong_scores_is_caught_by_sampling_and_dropped(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    """A fake that searches for real and adds 30 cp to every score (each
    result valid: legal move and PV, score in range) is caught when its
    sampled result is re-evaluated by the local pool ("both" mode,
    verify_share 1.0): it is dropped, and every value kept is the local
    pool's."""
    boards = century_boards(24)
    expected, key, name = await local_reference(stockfish, boards, depth=DEPTH)

    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=DEPTH)) as own:

        async def lie(job: Job) -> Eval:
            true = Eval.of(await own.evaluate(chess.Board(job.fen)))
            return true.model_copy(update={"cp": max(-3000, min(3000, true.cp + 30))})

        async with fake_worker(private_broker, "liar", key, name, 8, lie) as liar:
            local = EnginePool(stockfish, workers=1, limit=SearchLimit(depth=DEPTH))
            async with evaluator(private_broker, DEPTH, local=local, verify_share=1.0) as ev:
                await wait_until(lambda: ev.roster.usable("liar"), what="the liar accepted")
                run = asyncio.gather(*(ev.evaluate(b) for b in boards))
                state = ev.roster.get("liar")
                assert state is not None
                await wait_until(lambda: state.status == "dropped", what="the liar dropped")
                given = ev.published_to["liar"]
                got = await asyncio.wait_for(run, 180)
                assert got == expected  # the verified values, not the liar's
                assert_each_position_once(ev, len(boards))
                t = ev.tracker
                assert t is not None and t.stats.mismatches >= 1
                assert "where the re-evaluation gives" in (state.reason or "")
                assert ev.results_by["liar"] == 0
                assert liar.answered >= 1
                assert ev.published_to["liar"] == given  # not one job after it was caught
                status = {x["worker"]: x for x in ev.workers_status()["workers"]}
                assert status["liar"]["status"] == "dropped"
                assert ev.workers_status()["jobs"]["workers_dropped"] == 1
                assert ev.capacity() == 0  # the local pool does the rest


async def test_a_worker_of_the_old_protocol_is_listed_as_refused_with_why(
    stockfish: str, private_broker: PrivateBroker
) -> None:
    """A version 1 worker (it took jobs through the shared subscription) gets no
    job and is listed in /healthz's workers as refused, naming the version."""
    old = (
        b'{"type": "worker", "v": 1, "worker": "old", "host": "h", "engine_name": "x",'
        b' "engine_key": "x", "jobs_topic": "livegain/engine/jobs/0123456789abcdef",'
        b' "limit": {"depth": 8, "nodes": null}, "hash_mb": 16, "processes": 8, "cores": 8,'
        b' "livegain": "0.1.0", "started": 0.0}'
    )
    local = EnginePool(stockfish, workers=1, limit=SearchLimit(depth=DEPTH))
    async with (
        aiomqtt.Client(
            "127.0.0.1", private_broker.port, protocol=aiomqtt.ProtocolVersion.V5
        ) as client,
        evaluator(private_broker, DEPTH, local=local) as ev,
    ):
        await client.publish(presence_topic(PREFIX, "old"), old, qos=1, retain=True)
        await wait_until(lambda: "old" in ev.workers_seen, what="the old worker seen")
        (row,) = ev.workers_status()["workers"]
        assert row["worker"] == "old" and row["accepted"] is False
        assert "protocol version 1, this livegain speaks 2" in row["refused_because"]
        assert ev.capacity() == 0 and ev.bad_messages == 0
        await ev.evaluate(chess.Board())
        assert ev.published_to == {} and ev.results_by["local"] == 1
        await client.publish(presence_topic(PREFIX, "old"), b"", qos=1, retain=True)
