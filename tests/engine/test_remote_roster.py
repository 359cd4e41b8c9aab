"""Direct assignment without a broker: who gets a job (room per worker, spread
over the workers), who gets none (silent after unanswered jobs, dropped for a
lie), and the tracker's sampled re-evaluation (held results, a local pool or a
third opinion deciding, liars named)."""

from __future__ import annotations

import dataclasses

import pytest

from livegain.core.evaluation import Evaluation
from livegain.remote.protocol import Job, OutdatedError, decode
from livegain.remote.roster import UNKNOWN_KEPT, Roster
from livegain.remote.tracker import JobTracker

from .test_remote_tracker import FENS, KEY, LIMIT, ev_for, result


def tracker(**kw: object) -> JobTracker:
    args: dict[str, object] = {"job_timeout": 10.0, "max_attempts": 4}
    args.update(kw)
    return JobTracker(KEY, LIMIT, "livegain/engine/results/me", **args)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the roster


def test_slots_spread_the_most_urgent_jobs_over_the_workers_within_their_room() -> None:
    r = Roster(prefetch=2, max_jobs=5)
    r.announce("big", processes=2, started=1.0)  # room 4
    r.announce("small", processes=1, started=1.0)  # room 2
    assert r.capacity() == 5  # max_jobs
    assert r.slots({}, total_out=0) == ["big", "small", "big", "small", "big"]
    assert r.slots({"big": 3}, total_out=3) == ["small", "big"]
    assert r.slots({"big": 4, "small": 1}, total_out=5) == []


def test_a_worker_whose_jobs_expire_twice_in_a_row_is_silent_until_it_answers_again() -> None:
    r = Roster(prefetch=2, silent_after=2)
    r.announce("w", processes=64, started=1.0)
    assert r.capacity() == 128
    assert r.expired("w", 30) is False
    r.answered("w")  # an answer resets the count
    assert r.expired("w", 30) is False
    assert r.expired("w", 30) is True  # two in a row
    st = r.get("w")
    assert st is not None and st.status == "silent" and "2 jobs in a row" in (st.reason or "")
    assert r.capacity() == 0 and r.slots({}, 0) == [] and r.silenced == 1
    assert r.expired("w", 30) is False  # silent once
    # its presence retained again (a reconnect, same start): still silent
    r.announce("w", processes=64, started=1.0)
    assert r.capacity() == 0
    # a new presence (a restart): on probation, one job at a time
    r.announce("w", processes=64, started=2.0)
    assert r.get("w").status == "probation" and r.capacity() == 1  # type: ignore[union-attr]
    r.answered("w")
    assert r.get("w").status == "active" and r.capacity() == 128  # type: ignore[union-attr]


def test_a_dropped_worker_gets_nothing_whatever_it_announces_and_after_it_left() -> None:
    r = Roster()
    r.announce("liar", processes=4, started=1.0)
    assert r.drop("liar", "lied") is True and r.drop("liar", "again") is False
    r.leave("liar")
    r.announce("liar", processes=4, started=99.0)
    st = r.get("liar")
    assert st is not None and st.status == "dropped" and st.reason == "lied"
    assert r.capacity() == 0 and r.dropped == 1


def test_a_presence_of_the_old_protocol_is_named_as_such() -> None:
    with pytest.raises(OutdatedError) as err:
        decode(b'{"type": "worker", "v": 1, "worker": "old"}')
    assert err.value.version == 1 and "this livegain speaks 2" in str(err.value)


# ---------------------------------------------------------------- the tracker


def test_a_job_is_given_to_one_worker_with_its_own_reply_topic() -> None:
    t = tracker()
    t.submit(FENS[0])
    t.submit(FENS[1])
    a = t.assign("a", now=0.0)
    b = t.assign("b", now=0.0)
    assert isinstance(a, Job) and isinstance(b, Job)
    assert a.reply_to == "livegain/engine/results/me/a" and b.fen == FENS[1]
    assert t.out_by() == {"a": 1, "b": 1} and t.assign("a", now=0.0) is None


def test_results_are_judged_by_their_topic() -> None:
    t = tracker()
    t.submit(FENS[0])
    job = t.assign("a", now=0.0)
    assert job is not None
    # another worker answers a job it was not given, or in a's name
    out = t.on_result(result(job, worker="b"), sender="b")
    assert out.kind == "invalid" and "not given" in (out.reason or "")
    out = t.on_result(result(job, worker="a"), sender="b")
    assert out.kind == "invalid" and "names worker 'a'" in (out.reason or "")
    assert t.invalid_by == {"b": 2} and t.outstanding == 1
    assert t.on_result(result(job, worker="a"), sender="a").kind == "accepted"


def test_expired_jobs_name_their_worker_and_a_recall_gives_its_jobs_to_others() -> None:
    t = tracker()
    for fen in FENS[:3]:
        t.submit(fen)
    t.assign("silent", now=0.0)
    t.assign("silent", now=0.0)
    t.assign("ok", now=0.0)
    settled, late = t.expire_jobs(now=10.0)
    assert settled == [] and sorted(late) == ["ok", "silent", "silent"]
    t.assign("silent", now=10.0)
    assert t.recall("silent") == 1 and t.out_by() == {}
    again = t.assign("ok", now=11.0)
    assert again is not None and again.attempt == 3  # out twice before


def test_a_sampled_result_is_held_until_the_local_pool_agrees() -> None:
    t = tracker(sampler=lambda _w: True, verify_locally=True)
    t.submit(FENS[1])
    job = t.assign("w", now=0.0)
    assert job is not None
    held = t.on_result(result(job, worker="w"), sender="w")
    assert held.kind == "held" and t.stats.sampled == 1
    assert t.assign("other", now=0.0) is None  # kept for the local pool
    local = t.take_local()
    assert local is not None and local.id == job.job
    out = t.local_done(job.job, ev_for(job.fen))
    assert out.kind == "accepted" and out.verified and out.liars == () and out.worker == "w"
    assert t.stats.verified == 1 and t.stats.accepted == 1


def test_a_lie_is_caught_by_the_local_pool_and_its_value_kept() -> None:
    t = tracker(sampler=lambda _w: True, verify_locally=True)
    t.submit(FENS[1])
    job = t.assign("liar", now=0.0)
    assert job is not None
    true = ev_for(job.fen)
    forged = dataclasses.replace(true, cp=true.cp + 30)
    assert t.on_result(result(job, ev=forged, worker="liar"), sender="liar").kind == "held"
    local = t.take_local()
    assert local is not None
    out = t.local_done(local.id, true)
    assert out.kind == "accepted" and out.evaluation == true and out.worker == "local"
    ((liar, how),) = out.liars
    assert liar == "liar" and f"cp {forged.cp} where the re-evaluation gives {true.cp}" in how
    assert t.stats.mismatches == 1


def test_between_workers_a_disagreement_waits_for_a_third_opinion() -> None:
    t = tracker(sampler=lambda _w: True)
    t.submit(FENS[2])
    job = t.assign("liar", now=0.0)
    assert job is not None
    true: Evaluation = ev_for(job.fen)
    forged = dataclasses.replace(true, cp=true.cp - 30)
    assert t.on_result(result(job, ev=forged, worker="liar"), sender="liar").kind == "held"
    assert t.assign("liar", now=0.0) is None  # never re-evaluated by itself
    second = t.assign("b", now=0.0)
    assert second is not None and t.stats.verifications == 1 and t.stats.republished == 0
    assert t.on_result(result(second, worker="b"), sender="b").kind == "held"
    assert t.assign("b", now=0.0) is None
    third = t.assign("c", now=0.0)
    assert third is not None
    out = t.on_result(result(third, worker="c"), sender="c")
    assert out.kind == "accepted" and out.evaluation == true and out.worker == "b"
    assert [w for w, _ in out.liars] == ["liar"]


def test_a_held_result_nobody_re_evaluates_is_kept_unverified_in_the_end() -> None:
    t = tracker(sampler=lambda _w: True, max_attempts=2)
    t.submit(FENS[3])
    job = t.assign("w", now=0.0)
    assert job is not None
    t.on_result(result(job, worker="w"), sender="w")
    assert t.assign("v", now=1.0) is not None  # the re-evaluation, never answered
    (out,) = t.expire(now=20.0)
    assert out.kind == "accepted" and out.worker == "w" and "unverified" in (out.reason or "")
    assert t.stats.unverified == 1 and t.open_jobs() == 0


def test_a_held_job_nobody_else_can_re_evaluate_is_settled_at_once() -> None:
    t = tracker(sampler=lambda _w: True)
    t.submit(FENS[1])
    t.submit(FENS[2])
    one = t.assign("a", now=0.0)
    two = t.assign("a", now=0.0)
    assert one is not None and two is not None
    t.on_result(result(one, worker="a"), sender="a")
    assert t.stranded({"a", "b"}, local=False) == []  # b can
    assert t.stranded({"a"}, local=False)[0].kind == "accepted"  # only a: kept
    # two workers disagree and no third: the job fails (the caller retries later)
    t.on_result(result(two, worker="a"), sender="a")
    again = t.assign("b", now=0.0)
    assert again is not None
    forged = dataclasses.replace(ev_for(two.fen), cp=7)
    assert t.on_result(result(again, ev=forged, worker="b"), sender="b").kind == "held"
    (out,) = t.stranded({"a", "b"}, local=False)
    assert out.kind == "failed" and "disagree" in (out.reason or "")


def test_made_up_names_dropped_before_announcing_are_listed_up_to_a_bound() -> None:
    roster = Roster()
    for k in range(UNKNOWN_KEPT + 50):
        assert roster.drop(f"ghost{k}", "invalid result")
    assert roster.dropped == UNKNOWN_KEPT + 50
    assert len(roster.names()) == UNKNOWN_KEPT  # listed: the first ones only
    assert roster.get("ghost0") is not None and roster.get(f"ghost{UNKNOWN_KEPT}") is None
