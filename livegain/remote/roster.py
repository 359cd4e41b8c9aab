"""Which worker gets the next job, and which get none: the requester's rules, sans I/O.

A :class:`Roster` holds the accepted workers of one requester (direct
assignment, protocol v2: the requester picks the worker of each job) and
decides, without I/O or clock:

- **room**: a worker may hold ``prefetch`` x its announced engine processes
  jobs at once (``max_jobs`` in all over every worker); :meth:`Roster.slots`
  spreads the free slots over the workers one at a time, the emptiest first,
  so the most urgent jobs do not all go to one worker;
- **silent** or **failing**: a worker whose jobs end without an evaluation
  from it ``silent_after`` times in a row (any evaluation it sends resets the
  count) gets no more jobs and its jobs out are given to others
  (:meth:`Roster.expired` and :meth:`Roster.failed` say when it turns so):
  *silent* when the last of them expired unanswered, *failing* when the last
  was answered with an error (or a result for another engine key, limit or
  position). Such a worker that announces itself again (a new presence: a
  restart) is tried again *on probation*: one job out at a time until it
  answers one with an evaluation, then its full room; its first job lost on
  probation makes it silent or failing again. Whatever it announces, such a
  worker's cost is thus at most one job per announcement;
- **dropped**: a worker caught lying (a sampled result that the
  re-evaluation contradicts, :mod:`livegain.remote.tracker`) or sending a
  result no search can give (an invalid one) is dropped for good (until the
  requester restarts): no job, whatever it announces.

The roster remembers silent, failing and dropped workers after their
presence is cleared, so that leaving and coming back does not wash the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Status = Literal["active", "probation", "silent", "failing", "dropped"]

STOPPED: tuple[Status, ...] = ("silent", "failing", "dropped")
"""The states in which a worker gets no job."""

UNKNOWN_KEPT = 100
"""Senders dropped before they ever announced themselves that are listed (and
refused if they announce later); beyond these they are only counted: on a
broker without an access list anyone may send under any number of names."""


@dataclass
class WorkerState:
    name: str
    capacity: int
    """Jobs it may hold at once when active (prefetch x processes)."""
    started: float
    """The ``started`` of its last presence (a new value: it announced itself again)."""
    present: bool = True
    status: Status = "active"
    reason: str | None = None
    streak: int = 0
    """Its jobs in a row that ended without an evaluation from it."""
    expired: int = 0
    errors: int = 0
    """Errors counted against it: its answers that were an error (or a result
    refused for another key, limit or position) and the job's first such."""
    answered: int = 0

    def room(self) -> int:
        if not self.present or self.status in STOPPED:
            return 0
        return 1 if self.status == "probation" else self.capacity


class Roster:
    """The accepted workers of one requester and the jobs they may hold."""

    def __init__(self, *, prefetch: int = 2, max_jobs: int = 256, silent_after: int = 2) -> None:
        if prefetch < 1 or max_jobs < 1 or silent_after < 1:
            raise ValueError("prefetch, max_jobs and silent_after must be at least 1")
        self.prefetch = prefetch
        self.max_jobs = max_jobs
        self.silent_after = silent_after
        self._workers: dict[str, WorkerState] = {}
        self._unknown = 0  # dropped before they announced themselves, listed
        self.silenced = 0
        """Times a worker was found silent."""
        self.failing = 0
        """Times a worker was found failing (its jobs answered with errors)."""
        self.dropped = 0
        """Workers dropped for a lie or an invalid result."""

    def __contains__(self, name: str) -> bool:
        return name in self._workers

    def get(self, name: str) -> WorkerState | None:
        return self._workers.get(name)

    def names(self) -> list[str]:
        return list(self._workers)

    # -- presence ----------------------------------------------------------

    def announce(self, name: str, processes: int, started: float) -> WorkerState:
        """An accepted presence: a new worker, or one announcing itself again."""
        capacity = self.prefetch * max(1, processes)
        w = self._workers.get(name)
        if w is None:
            w = WorkerState(name, capacity, started)
            self._workers[name] = w
            return w
        w.capacity = capacity
        w.present = True
        if w.status in ("silent", "failing") and started != w.started:
            w.reason = f"announced itself again after being {w.status} ({w.reason})"
            w.status = "probation"
            w.streak = 0
        w.started = started
        return w

    def leave(self, name: str) -> None:
        """Its presence is cleared (or refused now): no more jobs; its state is kept."""
        w = self._workers.get(name)
        if w is not None:
            w.present = False

    # -- handing out -------------------------------------------------------

    def usable(self, name: str) -> bool:
        w = self._workers.get(name)
        return w is not None and w.room() > 0

    def usable_names(self) -> list[str]:
        return [n for n, w in self._workers.items() if w.room() > 0]

    def capacity(self) -> int:
        """Jobs that may be out now over every usable worker."""
        return min(self.max_jobs, sum(w.room() for w in self._workers.values()))

    def slots(self, out: Mapping[str, int], total_out: int) -> list[str]:
        """The free job slots, one worker name per slot, in the order to fill
        them: round after round, the worker with the most free room first, so
        that the first (most urgent) jobs are spread over the workers."""
        free = {
            n: w.room() - out.get(n, 0)
            for n, w in self._workers.items()
            if w.room() > out.get(n, 0)
        }
        budget = self.max_jobs - total_out
        order: list[str] = []
        while free and budget > 0:
            for name in sorted(free, key=lambda n: (-free[n], n)):
                if budget <= 0:
                    break
                order.append(name)
                budget -= 1
                free[name] -= 1
                if free[name] == 0:
                    del free[name]
        return order

    # -- what the workers did ----------------------------------------------

    def answered(self, name: str) -> None:
        """An evaluation (valid) came from ``name``: it works."""
        w = self._workers.get(name)
        if w is None:
            return
        w.answered += 1
        w.streak = 0
        if w.status == "probation":
            w.status = "active"
            w.reason = None

    def expired(self, name: str, job_timeout: float) -> bool:
        """A job given to ``name`` expired unanswered; True when this makes it silent."""
        w = self._workers.get(name)
        if w is None:
            return False
        w.expired += 1
        return self._lost(w, "silent", f"unanswered within {job_timeout:g} s")

    def failed(self, name: str, why: str) -> bool:
        """``name`` answered a job with an error (``why``), or with a result
        refused for another engine key, limit or position, and it counts
        against it (:attr:`livegain.remote.tracker.Outcome.fault`); True when
        this makes it failing."""
        w = self._workers.get(name)
        if w is None:
            return False
        w.errors += 1
        return self._lost(w, "failing", f"answered with an error: {why}")

    def _lost(self, w: WorkerState, status: Status, how: str) -> bool:
        """One more of ``w``'s jobs ended without an evaluation (``how``, the
        last); True when it gets no more jobs now (``status``)."""
        w.streak += 1
        if w.status == "probation":
            w.reason = f"its job on probation {how}"
        elif w.status == "active" and w.streak >= self.silent_after:
            w.reason = f"{w.streak} jobs in a row without a result, the last {how}"
        else:
            return False
        w.status = status
        if status == "silent":
            self.silenced += 1
        else:
            self.failing += 1
        return True

    def drop(self, name: str, reason: str) -> bool:
        """``name`` lied, or sent an invalid result: no more jobs, ever (True
        if it was not dropped already)."""
        w = self._workers.get(name)
        if w is None:
            if self._unknown >= UNKNOWN_KEPT:  # a flood of made-up names: counted only
                self.dropped += 1
                return True
            self._unknown += 1
            w = WorkerState(name, 0, 0.0, present=False)
            self._workers[name] = w
        if w.status == "dropped":
            return False
        w.status = "dropped"
        w.reason = reason
        self.dropped += 1
        return True
