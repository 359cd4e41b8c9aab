"""The remote engine protocol without a broker: messages, schema files, and the
job tracker's rules (deadlines, first result wins, refusals)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import chess
import pytest

from livegain.core.evaluation import Evaluation
from livegain.remote import protocol
from livegain.remote.protocol import Eval, Job, Limit, ProtocolError, Result, decode, encode
from livegain.remote.tracker import JobTracker

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
