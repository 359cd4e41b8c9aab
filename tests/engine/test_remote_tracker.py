"""The remote engine protocol without a broker: messages, schema files, the
job tracker's rules (deadlines, first result wins, refusals), and what a
worker's errors and invalid results cost it (failing, dropped)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import chess
import pytest

from livegain.core.evaluation import Evaluation
from livegain.engine.search import SearchLimit
from livegain.mqtt.address import parse_mqtt_url
from livegain.remote import protocol
from livegain.remote.evaluator import RemoteEvaluator
from livegain.remote.protocol import (
    DEFAULT_PREFIX,
    Eval,
    Job,
    Limit,
    Presence,
    ProtocolError,
    Result,
    decode,
    encode,
    jobs_topic,
    presence_topic,
    reply_topic,
)
from livegain.remote.roster import Roster
from livegain.remote.tracker import FAULT_TEXT, JobTracker

REPO = Path(__file__).resolve().parents[2]
KEY = "Stockfish 15.1|depth 8|hash=16|threads=1|deterministic=1"
OTHER = "Stockfish 99|depth 8|hash=16|threads=1|deterministic=1"
LIMIT = Limit(depth=8)
FENS = [chess.STARTING_FEN]
for san in ("e4", "e5", "Nf3", "Nc6", "Bb5"):
    b = chess.Board(FENS[-1])
    b.push_san(san)
    FENS.append(b.fen())
EV = Evaluation(
    cp=31, mate=None, wdl=(120, 800, 80), depth=8, nodes=4321, best="e2e4", pv=("e2e4",)
)


def ev_for(fen: str) -> Evaluation:
    """``EV`` with a best move legal in ``fen`` (results are checked: tracker.result_problem)."""
    move = min(m.uci() for m in chess.Board(fen).legal_moves)
    return dataclasses.replace(EV, best=move, pv=(move,))


def tracker(**kw: object) -> JobTracker:
    args: dict[str, object] = {"job_timeout": 10.0, "max_attempts": 3}
    args.update(kw)
    return JobTracker(KEY, LIMIT, "livegain/engine/results/me", **args)  # type: ignore[arg-type]


def result(
    job: Job,
    *,
    engine: str = KEY,
    limit: Limit = LIMIT,
    fen: str | None = None,
    ev: Evaluation | None = EV,
    error: str | None = None,
    worker: str = "w1",
) -> Result:
    if ev is EV:
        ev = ev_for(job.fen)
    return Result(
        job=job.job,
        fen=fen or job.fen,
        engine=engine,
        limit=limit,
        worker=worker,
        eval=Eval.of(ev) if ev is not None else None,
        error=error,
    )


# ---------------------------------------------------------------- messages


def test_committed_schema_files_match_the_models() -> None:
    for name, text in protocol.json_schemas().items():
        path = REPO / "docs" / "protocol" / name
        assert path.exists(), f"{path} missing: run python -m livegain.remote.protocol"
        assert path.read_text() == text, f"{path} stale: run python -m livegain.remote.protocol"
    assert protocol.main([str(REPO / "docs" / "protocol"), "--check"]) == 0


def test_evaluation_survives_the_wire_exactly() -> None:
    t = tracker()
    t.submit(FENS[1])
    (job,) = t.take(1, now=1000.0)
    back = decode(encode(result(decode(encode(job)))))  # type: ignore[arg-type]
    assert isinstance(back, Result) and back.eval is not None
    assert back.eval.evaluation() == ev_for(job.fen)


def test_guide_examples_are_valid_messages() -> None:
    text = (REPO / "docs" / "protocol" / "README.md").read_text()
    import re

    blocks = re.findall(r"```jsonc\n(.*?)```", text, flags=re.S)
    kinds = {decode(block.encode()).type for block in blocks}
    assert kinds == {"job", "result", "worker"}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b"not json", "message"),
        (b'{"type": "job", "v": 2, "job": "1"}', "job.fen"),
        (b'{"type": "job", "v": 1, "job": "1"}', "protocol version 1"),
        (b'{"type": "worker", "v": 3}', "protocol version 3"),
        (b'{"type": "nonsense"}', "message"),
        (b"x" * (protocol.MAX_PAYLOAD + 1), "message"),
    ],
)
def test_a_bad_message_is_refused_naming_what(body: bytes, where: str) -> None:
    with pytest.raises(ProtocolError) as err:
        decode(body)
    text = str(err.value)
    if where != "message":
        assert text.startswith(where), text


# ---------------------------------------------------------------- the tracker


def test_jobs_go_out_most_urgent_first_up_to_capacity() -> None:
    t = tracker()
    ids = [t.submit(fen, priority=p) for fen, p in zip(FENS, [5, 1, 3, 0, 9, 2], strict=True)]
    assert t.submit(FENS[0], priority=7) == ids[0]  # one job per position
    jobs = t.take(3, now=100.0)
    assert [j.fen for j in jobs] == [FENS[3], FENS[1], FENS[5]]
    assert all(j.deadline == 110.0 and j.attempt == 1 and j.engine == KEY for j in jobs)
    assert t.take(3, now=100.0) == []  # capacity reached
    assert t.on_result(result(jobs[0])).kind == "accepted"
    (nxt,) = t.take(3, now=101.0)
    assert nxt.fen == FENS[2]


def test_first_result_wins_and_later_ones_are_counted_duplicates() -> None:
    t = tracker()
    t.submit(FENS[1])
    (job,) = t.take(1, now=0.0)
    first = t.on_result(result(job, worker="w1"))
    assert first.kind == "accepted" and first.evaluation == ev_for(job.fen)
    assert first.worker == "w1"
    other = Evaluation(cp=-5, depth=8, nodes=1)
    again = t.on_result(result(job, worker="w2", ev=other))
    assert again.kind == "duplicate" and again.evaluation is None
    assert t.stats.accepted == 1 and t.stats.duplicates == 1
    assert t.on_result(result(job.model_copy(update={"job": "never-sent"}))).kind == "unknown"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"engine": OTHER}, "engine"),
        ({"limit": Limit(depth=9)}, "limit depth 9"),
        ({"fen": FENS[4]}, "position"),
    ],
)
def test_a_result_for_another_engine_limit_or_position_is_refused(
    change: dict[str, object], why: str
) -> None:
    t = tracker()
    t.submit(FENS[1])
    (job,) = t.take(1, now=0.0)
    out = t.on_result(result(job, **change))  # type: ignore[arg-type]
    assert out.kind == "refused" and out.evaluation is None
    assert out.reason is not None and why in out.reason
    assert t.stats.refused == 1 and t.stats.accepted == 0
    # given out again, to another worker, with the same id
    (again,) = t.take(1, now=1.0)
    assert again.job == job.job and again.attempt == 2
    assert t.on_result(result(again)).kind == "accepted"


def test_a_job_past_its_deadline_goes_out_again_then_fails_naming_the_position() -> None:
    t = tracker(max_attempts=2)
    t.submit(FENS[2])
    (job,) = t.take(1, now=0.0)
    assert t.expire(now=9.9) == [] and t.take(1, now=9.9) == []
    assert t.expire(now=10.0) == []  # back in the queue
    (again,) = t.take(1, now=10.0)
    assert (again.job, again.attempt, again.deadline) == (job.job, 2, 20.0)
    (failed,) = t.expire(now=20.5)
    assert failed.kind == "failed" and failed.reason is not None
    assert FENS[2] in failed.reason and "after 2 publications" in failed.reason
    # the late answer of the first worker is dropped, not recorded
    assert t.on_result(result(job)).kind == "duplicate"
    assert t.stats.republished == 1 and t.stats.failed == 1 and t.open_jobs() == 0


def test_a_late_result_of_a_job_given_out_again_still_wins_once() -> None:
    t = tracker()
    t.submit(FENS[1])
    (job,) = t.take(1, now=0.0)
    t.expire(now=11.0)
    (again,) = t.take(1, now=11.0)
    assert t.on_result(result(job, worker="slow")).kind == "accepted"  # the first answer
    assert t.on_result(result(again, worker="fast")).kind == "duplicate"
    assert t.outstanding == 0 and t.stats.accepted == 1


def test_a_worker_error_sends_the_job_elsewhere() -> None:
    t = tracker()
    t.submit(FENS[1])
    (job,) = t.take(1, now=0.0)
    out = t.on_result(result(job, ev=None, error="engine died"))
    assert out.kind == "retry" and "engine died" in (out.reason or "")
    (again,) = t.take(1, now=0.0)
    assert again.attempt == 2


def test_a_reconnect_gives_every_job_out_again_without_counting_it() -> None:
    t = tracker(max_attempts=1)
    for fen in FENS[:3]:
        t.submit(fen)
    first = t.take(10, now=0.0)
    assert t.requeue_remote() == 3 and t.outstanding == 0
    again = t.take(10, now=1.0)
    assert [j.job for j in again] == [j.job for j in first]
    assert all(j.attempt == 1 for j in again)


def test_local_and_remote_share_one_queue_first_result_wins() -> None:
    t = tracker()
    t.submit(FENS[1], priority=1)
    t.submit(FENS[2], priority=0)
    local = t.take_local()
    assert local is not None and local.fen == FENS[2]
    (remote,) = t.take(5, now=0.0)
    assert remote.fen == FENS[1]
    assert t.local_done(local.id, EV).kind == "accepted"
    assert t.on_result(result(remote)).kind == "accepted"
    assert t.local_done(local.id, EV).kind == "duplicate"


def test_cancelled_job_is_not_sent() -> None:
    t = tracker()
    a = t.submit(FENS[1])
    t.submit(FENS[2])
    t.cancel(a)
    assert [j.fen for j in t.take(5, now=0.0)] == [FENS[2]]
    assert json.loads(encode(Limit(depth=8))) == {"depth": 8, "nodes": None}


# ------------------------------------------ workers failing, invalid results


def status(r: Roster, name: str) -> str:
    st = r.get(name)
    assert st is not None
    return st.status


def test_a_worker_answering_errors_twice_in_a_row_is_failing_until_it_restarts() -> None:
    r = Roster(prefetch=2, silent_after=2)
    r.announce("w", processes=8, started=1.0)
    assert r.failed("w", "engine died") is False
    r.answered("w")  # an evaluation resets the count
    assert r.failed("w", "engine died") is False
    assert r.failed("w", "engine died again") is True  # two in a row
    st = r.get("w")
    assert st is not None and st.status == "failing" and st.errors == 3
    assert st.reason == "2 jobs in a row without a result, the last answered with an error: " + (
        "engine died again"
    )
    assert r.capacity() == 0 and r.slots({}, 0) == [] and r.failing == 1 and r.silenced == 0
    assert r.failed("w", "more") is False and r.failing == 1  # found failing once
    r.announce("w", processes=8, started=1.0)  # its presence again, unchanged: no
    assert r.capacity() == 0
    r.leave("w")
    r.announce("w", processes=8, started=2.0)  # a restart: on probation, one job
    assert status(r, "w") == "probation" and r.capacity() == 1
    assert "after being failing" in (st.reason or "")
    assert r.failed("w", "still broken") is True  # its one job lost: failing again
    assert status(r, "w") == "failing" and st.reason == (
        "its job on probation answered with an error: still broken"
    )
    assert r.failing == 2 and r.capacity() == 0
    r.announce("w", processes=8, started=3.0)
    r.answered("w")
    assert status(r, "w") == "active" and st.reason is None and r.capacity() == 16


def test_expired_and_errored_jobs_make_one_streak_named_by_the_last() -> None:
    r = Roster(silent_after=2)
    r.announce("a", processes=1, started=1.0)
    r.announce("b", processes=1, started=1.0)
    assert r.expired("a", 30) is False and r.failed("a", "boom") is True
    assert r.failed("b", "boom") is False and r.expired("b", 30) is True
    a, b = r.get("a"), r.get("b")
    assert a is not None and a.status == "failing"
    assert b is not None and b.status == "silent" and "unanswered within 30 s" in (b.reason or "")
    # a silent worker on probation is silent again at its first job lost
    r.announce("b", processes=1, started=2.0)
    assert status(r, "b") == "probation" and r.expired("b", 30) is True
    assert status(r, "b") == "silent"
    assert (r.silenced, r.failing) == (2, 1)


def test_an_error_is_the_answering_worker_s_fault_and_the_job_goes_to_another() -> None:
    t = tracker()
    t.submit(FENS[1])
    t.submit(FENS[2])
    job = t.assign("a", now=0.0)
    assert job is not None and job.fen == FENS[1]
    out = t.on_result(result(job, ev=None, error="EngineSearchError: died", worker="a"), "a")
    assert out.kind == "retry" and out.fault == "EngineSearchError: died"
    nxt = t.assign("a", now=1.0)  # not the job it failed: the next one
    assert nxt is not None and nxt.fen == FENS[2]
    again = t.assign("b", now=1.0)
    assert again is not None and (again.job, again.attempt) == (job.job, 2)
    # a result for another engine key is its sender's fault too
    out = t.on_result(result(nxt, engine=OTHER, worker="a"), "a")
    assert out.kind == "refused" and (out.fault or "").startswith("result refused: engine")
    # an evaluation is no fault; a long error text is cut
    assert t.on_result(result(again, worker="b"), "b").fault is None
    t.submit(FENS[3], priority=-1)
    third = t.assign("c", now=2.0)
    assert third is not None and third.fen == FENS[3]
    long = t.on_result(result(third, ev=None, error="x" * 2000, worker="c"), "c")
    assert long.fault == "x" * FAULT_TEXT


def test_a_position_every_worker_fails_costs_one_worker_one_error_not_its_place() -> None:
    """A position no engine can search (each worker answers it with an error):
    its first error counts against a worker, later ones do not (the position
    is suspect); once every usable worker has failed it, it may go to them
    again, and fails after ``max_attempts`` publications (the service retries
    it later). No worker becomes failing on its account."""
    t = tracker(max_attempts=4)
    r = Roster(silent_after=2)
    for name in ("a", "b"):
        r.announce(name, processes=1, started=1.0)

    def fail(worker: str, now: float) -> str | None:
        job = t.assign(worker, now)
        assert job is not None and job.fen == FENS[4]
        out = t.on_result(result(job, ev=None, error="crash", worker=worker), worker)
        if out.fault is not None:
            r.failed(worker, out.fault)
        return out.fault

    t.submit(FENS[4])
    assert fail("a", 0.0) == "crash"  # the first: a's fault
    assert t.stranded({"a", "b"}, local=False) == []  # b may take it, a may not
    assert t.assign("a", now=1.0) is None
    assert fail("b", 1.0) is None  # the second: the position's
    assert t.stranded({"a", "b"}, local=True) == []  # the local pool may take it
    assert t.assign("a", now=2.0) is None  # ... while there is one
    assert t.stranded(set(), local=False) == []  # no usable worker: it waits
    assert t.assign("a", now=2.0) is None
    assert t.stranded({"a", "b"}, local=False) == []  # every usable worker failed it:
    assert fail("a", 2.0) is None  # it goes round again, counted against nobody
    assert t.stranded({"a", "b"}, local=False) == [] and fail("b", 3.0) is None
    st = r.get("a")
    assert st is not None and st.errors == 1 and st.streak == 1
    b = r.get("b")
    assert b is not None and b.errors == 0 and r.capacity() == 4  # both still take jobs
    assert t.stats.failed == 1 and t.open_jobs() == 0  # out 4 times: failed


def test_a_worker_failing_each_fresh_job_is_failing_after_two() -> None:
    t = tracker()
    r = Roster(silent_after=2)
    r.announce("broken", processes=2, started=1.0)
    r.announce("ok", processes=1, started=1.0)
    for fen in FENS[:3]:
        t.submit(fen)
    jobs = [t.assign("broken", now=0.0) for _ in range(2)]
    turned = []
    for job in jobs:
        assert job is not None
        out = t.on_result(result(job, ev=None, error="no engine", worker="broken"), "broken")
        assert out.fault == "no engine"
        turned.append(r.failed("broken", out.fault))
    assert turned == [False, True] and not r.usable("broken")
    assert t.stranded(set(r.usable_names()), local=False) == []
    given = [t.assign("ok", now=1.0) for _ in range(3)]
    assert {j.fen for j in given if j is not None} == set(FENS[:3])


def test_an_invalid_result_names_the_worker_its_topic_names() -> None:
    t = tracker()
    for fen in FENS[:3]:
        t.submit(fen)
    a = t.assign("a", now=0.0)
    b = t.assign("b", now=0.0)
    assert a is not None and b is not None
    bad = dataclasses.replace(ev_for(a.fen), depth=9)  # the limit is depth 8
    cases = [
        (result(a, ev=bad, worker="a"), "a", "beyond the limit"),
        (result(b, worker="a"), "a", "not given"),
        (result(b, worker="b"), "a", "names worker 'b'"),
    ]
    for res, sender, words in cases:
        out = t.on_result(res, sender)
        assert out.kind == "invalid" and out.worker == sender and out.fault is None
        assert words in (out.reason or "")
    assert t.invalid_by == {"a": 3} and t.out_by() == {"a": 1, "b": 1}  # jobs left as they were


# ------------------------------------------------- the requester's judgement


def requester(**kw: object) -> RemoteEvaluator:
    """A requester not started (no broker): its presence and result handlers are fed directly."""
    args: dict[str, object] = {"verify_share": 0.0, "silent_after": 2}
    args.update(kw)
    return RemoteEvaluator(
        parse_mqtt_url("mqtt://127.0.0.1:1"),
        SearchLimit(depth=LIMIT.depth),
        **args,  # type: ignore[arg-type]
    )


def announce(ev: RemoteEvaluator, name: str, processes: int = 1, started: float = 1.0) -> None:
    p = Presence(
        worker=name,
        host="h",
        engine_name="Stockfish 15.1",
        engine_key=KEY,
        jobs_topic=jobs_topic(DEFAULT_PREFIX, KEY, name),
        limit=LIMIT,
        hash_mb=16,
        processes=processes,
        cores=processes,
        livegain="test",
        started=started,
    )
    ev._on_presence(presence_topic(DEFAULT_PREFIX, name), encode(p))


def answer(ev: RemoteEvaluator, sender: str, res: Result) -> None:
    ev._on_result(reply_topic(ev.reply_to, sender), encode(res))


def rows(ev: RemoteEvaluator) -> dict[str, dict[str, object]]:
    return {x["worker"]: x for x in ev.workers_status()["workers"]}


def test_a_worker_answering_errors_is_failing_its_jobs_recalled_and_listed() -> None:
    ev = requester()
    announce(ev, "broken", processes=4)
    announce(ev, "ok")
    t = ev.tracker
    assert t is not None and ev.engine_key == KEY
    for fen in FENS[:4]:
        t.submit(fen)
    jobs = [t.assign("broken", now=0.0) for _ in range(3)]
    assert all(j is not None for j in jobs)
    for job in jobs[:2]:
        assert job is not None
        answer(ev, "broken", result(job, ev=None, error="EngineSearchError: died", worker="broken"))
    st = ev.roster.get("broken")
    assert st is not None and st.status == "failing" and st.errors == 2
    assert t.out_by() == {}  # its third job recalled at once
    assert not ev.roster.usable("broken") and ev.capacity() == 2
    row = rows(ev)["broken"]
    assert row["status"] == "failing" and row["errors"] == 2 and row["accepted"] is True
    assert "answered with an error: EngineSearchError: died" in str(row["status_because"])
    assert ev.workers_status()["jobs"]["workers_failing"] == 1
    # its jobs go to the other worker, none back to it
    given = [t.assign("ok", now=1.0) for _ in range(4)]
    assert {j.fen for j in given if j is not None} == set(FENS[:4])
    # gone and back unchanged: still failing, still listed; restarted: on probation
    ev._on_presence(presence_topic(DEFAULT_PREFIX, "broken"), b"")
    assert rows(ev)["broken"]["status"] == "failing"
    announce(ev, "broken", processes=4, started=1.0)
    assert not ev.roster.usable("broken")
    announce(ev, "broken", processes=4, started=2.0)
    assert status(ev.roster, "broken") == "probation" and ev.capacity() == 3


@pytest.mark.parametrize("how", ["illegal move", "not given", "another's name"])
def test_an_invalid_result_drops_its_sender_at_once(how: str) -> None:
    ev = requester()
    announce(ev, "w", processes=2)
    announce(ev, "other")
    t = ev.tracker
    assert t is not None
    for fen in FENS[:3]:
        t.submit(fen)
    mine = [t.assign("w", now=0.0) for _ in range(2)]
    theirs = t.assign("other", now=0.0)
    assert mine[0] is not None and mine[1] is not None and theirs is not None
    if how == "illegal move":
        forged = dataclasses.replace(ev_for(mine[0].fen), best="a1a8", pv=("a1a8",))
        answer(ev, "w", result(mine[0], ev=forged, worker="w"))
    elif how == "not given":
        answer(ev, "w", result(theirs, worker="w"))
    else:
        answer(ev, "w", result(theirs, worker="other"))
    st = ev.roster.get("w")
    assert st is not None and st.status == "dropped"
    assert st.reason is not None and st.reason.startswith("invalid result from w: ")
    assert t.out_by() == {"other": 1}  # w's jobs recalled, the other's left as it was
    s = ev.workers_status()
    assert s["jobs"]["workers_dropped"] == 1 and s["jobs"]["invalid_by"] == {"w": 1}
    assert rows(ev)["w"]["status"] == "dropped" and ev.roster.usable("other")
    # another invalid one is counted, not dropped twice; a restart changes nothing
    answer(ev, "w", result(theirs, worker="w"))
    announce(ev, "w", processes=2, started=9.0)
    assert ev.roster.dropped == 1 and t.invalid_by == {"w": 2} and not ev.roster.usable("w")


def test_a_sender_that_never_announced_itself_is_listed_dropped() -> None:
    ev = requester()
    announce(ev, "w")
    t = ev.tracker
    assert t is not None
    t.submit(FENS[1])
    job = t.assign("w", now=0.0)
    assert job is not None
    answer(ev, "stranger", result(job, worker="stranger"))
    row = rows(ev)["stranger"]
    assert row["status"] == "dropped" and row["present"] is False
    assert "not given" in str(row["status_because"]) and t.out_by() == {"w": 1}


# ----------------------------------------------- workers that lie alike


def test_two_workers_lying_alike_pass_each_other_but_not_the_local_pool() -> None:
    """Documented (docs/security.md): without a local pool a sampled result is
    re-evaluated by another worker, and two workers forging the same numbers
    agree; with one ("both" mode) only the local pool re-evaluates."""
    t = tracker(sampler=lambda _w: True)
    t.submit(FENS[1])
    job = t.assign("liar1", now=0.0)
    assert job is not None
    true = ev_for(job.fen)
    forged = dataclasses.replace(true, cp=true.cp + 50)
    assert t.on_result(result(job, ev=forged, worker="liar1"), "liar1").kind == "held"
    check = t.assign("liar2", now=0.0)
    assert check is not None
    out = t.on_result(result(check, ev=forged, worker="liar2"), "liar2")
    assert out.kind == "accepted" and out.verified and out.evaluation == forged  # passes
    assert out.liars == ()

    t = tracker(sampler=lambda _w: True, verify_locally=True)
    t.submit(FENS[1])
    job = t.assign("liar1", now=0.0)
    assert job is not None
    assert t.on_result(result(job, ev=forged, worker="liar1"), "liar1").kind == "held"
    assert t.assign("liar2", now=0.0) is None  # never checked by another worker
    local = t.take_local()
    assert local is not None
    out = t.local_done(local.id, true)
    assert out.evaluation == true and [w for w, _ in out.liars] == ["liar1"]
