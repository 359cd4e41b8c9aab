"""A worker's result is checked before it is accepted (legal best move and PV,
score in range, mate consistent, W/D/L per mille, depth within the limit). An
invalid one is refused and drops the worker whose results topic carried it
(its identity), and changes nothing else: the job stays with the worker that
took it, so a forger racing every job on its own topic neither fails a job
nor has it searched again (docs/security.md, "Remote engine workers")."""

from __future__ import annotations

import asyncio
import itertools
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
    Result,
    decode,
    encode,
    jobs_topic,
    reply_topic,
)
from livegain.remote.tracker import JobTracker, result_problem

from .test_remote_workers import (
    assert_each_position_once,
    century_boards,
    evaluator,
    local_reference,
    wait_until,
    workers,
)

MATE_IN_ONE = "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"  # Qg7# or Qf8#
DEPTH = 6


@pytest.fixture(scope="module")
def searched() -> dict[str, Eval]:
    """Real searches (Stockfish at depth 6) of a few positions, as a worker sends them."""
    from livegain.engine.launch import DEFAULT_ENGINE

    boards = [*century_boards(12)[::3], chess.Board(MATE_IN_ONE)]

    async def run() -> dict[str, Eval]:
        async with EnginePool(DEFAULT_ENGINE, workers=1, limit=SearchLimit(depth=DEPTH)) as pool:
            evs = await asyncio.gather(*(pool.evaluate(b) for b in boards))
        return {b.fen(): Eval.of(e) for b, e in zip(boards, evs, strict=True)}

    if not Path(DEFAULT_ENGINE).exists():
        pytest.skip(f"{DEFAULT_ENGINE} not installed")
    return asyncio.run(run())


LIMIT = Limit(depth=DEPTH)


@pytest.mark.engine
def test_real_searches_pass_the_checks(searched: dict[str, Eval]) -> None:
    for fen, ev in searched.items():
        assert result_problem(fen, ev, LIMIT) is None, (fen, ev)
    assert searched[MATE_IN_ONE].mate == 1


def forgeries(fen: str, ev: Eval) -> list[tuple[Eval, str]]:
    """Results no search of ``fen`` can give, each with the words of its refusal."""
    board = chess.Board(fen)
    other = next(m.uci() for m in board.legal_moves if m.uci() != ev.best)
    return [
        (ev.model_copy(update={"best": "a1a8", "pv": ("a1a8",)}), "not legal here"),
        (ev.model_copy(update={"best": "zz"}), "not legal here"),
        (ev.model_copy(update={"best": None, "pv": ()}), "no best move"),
        (ev.model_copy(update={"pv": (other, *ev.pv[1:])}), "PV starts with"),
        (ev.model_copy(update={"pv": (*ev.pv[:1], "e2e4", "e2e4")}), "PV move"),
        (ev.model_copy(update={"cp": 3901}), "beyond +/-3900"),
        (ev.model_copy(update={"cp": -5000, "mate": None}), "beyond +/-3900"),
        (ev.model_copy(update={"mate": 3, "cp": 120}), "mate 3 with cp 120"),
        (ev.model_copy(update={"mate": 0}), "mate 0"),
        (ev.model_copy(update={"wdl": (900, 90, 9)}), "not per mille"),
        (ev.model_copy(update={"wdl": (1200, -100, -100)}), "not per mille"),
        (ev.model_copy(update={"depth": 0}), "depth 0"),
        (ev.model_copy(update={"depth": DEPTH + 1}), "beyond the limit"),
    ]


@pytest.mark.engine
def test_each_forgery_is_named(searched: dict[str, Eval]) -> None:
    for fen, ev in searched.items():
        for forged, words in forgeries(fen, ev):
            problem = result_problem(fen, forged, LIMIT)
            assert problem is not None and words in problem, (fen, forged, problem)
    # A mate in 1 whose move does not mate (a legal move, a consistent score).
    ev = searched[MATE_IN_ONE]
    board = chess.Board(MATE_IN_ONE)
    quiet = next(m for m in board.legal_moves if not board.gives_check(m)).uci()
    forged = ev.model_copy(update={"best": quiet, "pv": (quiet,)})
    assert "does not mate" in (result_problem(MATE_IN_ONE, forged, LIMIT) or "")


def result(job: Job, ev: Eval, worker: str) -> Result:
    return Result(
        job=job.job, fen=job.fen, engine=job.engine, limit=job.limit, worker=worker, eval=ev
    )


@pytest.mark.engine
def test_an_invalid_result_leaves_the_job_with_its_worker(searched: dict[str, Eval]) -> None:
    fen, ev = next(iter(searched.items()))
    t = JobTracker("key", LIMIT, "livegain/engine/results/r", job_timeout=10, max_attempts=2)
    job_id = t.submit(fen)
    (job,) = t.take(capacity=4, now=100.0)
    for forged, _ in forgeries(fen, ev) * 3:  # more than max_attempts
        outcome = t.on_result(result(job, forged, "liar"))
        assert outcome.kind == "invalid" and outcome.job == job_id
    assert t.stats.invalid == t.invalid_by["liar"] == 3 * len(forgeries(fen, ev))
    assert t.outstanding == 1 and t.stats.failed == 0 and t.stats.published == 1
    assert t.take(capacity=4, now=101.0) == []  # not given out again
    ok = t.on_result(result(job, ev, "honest"))
    assert ok.kind == "accepted" and ok.evaluation == ev.evaluation()
    assert t.open_jobs() == 0


@pytest.mark.engine
@pytest.mark.broker
@pytest.mark.slow
async def test_a_forger_answering_every_job_first_changes_nothing(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    """A client that reads every job given to the worker (the dev broker lets
    anyone read any topic) and answers each at once on its own results topic
    (all a worker user may write on the deploy broker), in its own name or in
    the worker's, with an invalid result (a scripted liar: no real worker lies
    on demand): it is dropped at its first, the real worker's results are the
    ones recorded, with no job given out again or failed. (On its victim's
    topic, which only a broker without an ACL lets it write, a forgery would
    drop the victim: docs/security.md.)"""
    boards = century_boards(30)
    expected, key, _ = await local_reference(stockfish, boards, depth=8)
    forged = 0
    async with aiomqtt.Client(
        "127.0.0.1", private_broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as liar:
        await liar.subscribe(jobs_topic("livegain/engine", key, "honest"), qos=1)
        with workers(tmp_path, private_broker.url) as w:
            w.start("honest", depth=8, engine=stockfish)
            async with evaluator(private_broker, 8, job_timeout=30.0) as ev:

                async def forge(job: Job, bogus: Eval) -> None:
                    nonlocal forged
                    name = "honest" if forged % 2 else "forger"  # in another's name, or its own
                    base = job.reply_to.rpartition("/")[0]
                    await liar.publish(
                        reply_topic(base, "forger"), encode(result(job, bogus, name)), qos=1
                    )
                    forged += 1

                async def lie() -> None:
                    kinds = itertools.cycle(
                        [
                            Eval(cp=250, depth=8, nodes=1, best="a1a8", pv=("a1a8",)),
                            Eval(cp=9999, depth=8, nodes=1),
                            Eval(cp=3900, mate=2, wdl=(1000, 0, 0), depth=8, nodes=1),
                            Eval(cp=-200, wdl=(0, 0, 900), depth=8, nodes=1),
                            Eval(cp=100, depth=30, nodes=1),
                        ]
                    )
                    async for message in liar.messages:
                        job = decode(bytes(message.payload))  # type: ignore[arg-type]
                        assert isinstance(job, Job)
                        # shielded: stopping the liar never cuts a forgery between
                        # its sending and its count (the tracker must see as many
                        # as were counted)
                        await asyncio.shield(forge(job, next(kinds)))

                liar_task = asyncio.create_task(lie())
                try:
                    await wait_until(lambda: ev.capacity() >= 2, what="the worker announced")
                    got = await asyncio.wait_for(
                        asyncio.gather(*(ev.evaluate(b) for b in boards)), 120
                    )
                    assert got == expected  # not one forged score got in
                    t = ev.tracker
                    assert t is not None
                    # Each forgery came before the real result (invalid: refused, the
                    # job left as it was) or after it (a duplicate, dropped). The
                    # liar reads the jobs on its own connection and may be behind
                    # the honest worker: it runs until it has answered every job.
                    await wait_until(
                        lambda: t.stats.invalid + t.stats.duplicates == forged >= len(boards),
                        what="every forged result seen",
                    )
                finally:
                    liar_task.cancel()
                assert t.stats.invalid >= 1  # in another's name: invalid even when late
                assert t.stats.republished == 0 and t.stats.expired == 0
                assert_each_position_once(ev, len(boards))
                status = ev.workers_status()
                assert status["jobs"]["invalid"] == t.stats.invalid
                assert status["jobs"]["invalid_by"] == {"forger": t.stats.invalid}
                assert status["jobs"]["workers_dropped"] == 1
                rows = {x["worker"]: x for x in status["workers"]}
                assert rows["forger"]["status"] == "dropped" and not rows["forger"]["present"]
                assert "invalid result from forger" in rows["forger"]["status_because"]
                assert rows["honest"]["status"] == "active" and ev.roster.usable("honest")
