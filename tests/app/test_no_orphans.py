"""Nothing outlives the service: SIGKILL it (as the OOM killer would) and
every process it started ends within seconds (docs/service.md, "Processes").

Real processes, no mocks. The service runs in a session of its own, so that
a process it started is found even if it was started after the test looked
(its session id is the service's pid); the processes seen before the kill
are also followed by pid and start time. A zombie has ended (it holds no
memory, only its exit status for a parent that may never read it)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from .conftest import DEPTH

LIVEGAIN = [sys.executable, "-m", "livegain.cli"]
ENDED_WITHIN = 20.0
"""Seconds the processes may take to end after the kill (well under one
normally; generous for a loaded 2-core machine)."""


@dataclass(frozen=True)
class Proc:
    pid: int
    started: int  # clock ticks after boot: a pid reused later has another
    cmd: str


def _stat(pid: int) -> tuple[str, int, int] | None:
    """State, session id and start time of ``pid`` (None: no such process)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # the name may hold spaces
    return fields[0], int(fields[3]), int(fields[19])


def _cmd(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "?"


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        with contextlib.suppress(OSError):  # the thread or the process ended
            out += [int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return out


def descendants(pid: int) -> list[Proc]:
    """Every process below ``pid`` now (children, their children, ...)."""
    found: list[Proc] = []
    todo = [pid]
    while todo:
        for child in _children(todo.pop()):
            st = _stat(child)
            if st is not None:
                found.append(Proc(child, st[2], _cmd(child)))
                todo.append(child)
    return found


def running(proc: Proc) -> bool:
    st = _stat(proc.pid)
    return st is not None and st[2] == proc.started and st[0] not in "ZX"


def in_session(sid: int) -> list[Proc]:
    """The live (not zombie) processes of session ``sid``."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None and st[1] == sid and st[0] not in "ZX":
                out.append(Proc(int(name), st[2], _cmd(int(name))))
    return out


def poll(cond: Callable[[], Any], wait: float, what: str) -> Any:
    """``cond()`` once it is true, polled until ``wait`` seconds have passed."""
    end = time.monotonic() + wait
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {wait:g} s")
        time.sleep(0.05)


def kill_and_check(owner: subprocess.Popen[Any], seen: list[Proc]) -> None:
    """SIGKILL ``owner`` (started in a session of its own); assert that every
    process of ``seen`` and of its session ends within :data:`ENDED_WITHIN`."""
    owner.kill()
    owner.wait(30)

    known = {(p.pid, p.started) for p in seen}

    def left() -> list[Proc]:
        return [p for p in seen if running(p)] + [
            p for p in in_session(owner.pid) if (p.pid, p.started) not in known
        ]

    end = time.monotonic() + ENDED_WITHIN
    while (survivors := left()) and time.monotonic() < end:
        time.sleep(0.05)
    for p in survivors:  # leave nothing behind, even when failing
        if running(p):
            os.kill(p.pid, signal.SIGKILL)
    assert not survivors, "still running after the kill:\n" + "\n".join(
        f"{p.pid}: {p.cmd}" for p in survivors
    )


def read_until(stream: IO[str], pattern: str, what: str) -> re.Match[str]:
    """The first line of ``stream`` that matches ``pattern`` (the process has
    the test's time-out: a process that prints nothing fails there)."""
    lines = []
    for line in stream:
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    raise AssertionError(f"{what}: it ended without printing it: {''.join(lines)}")


def get_json(url: str) -> Any:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


# ----------------------------------------------------------------- the service


@pytest.mark.engine
def test_a_killed_service_leaves_no_process(tmp_path: Path, stockfish: str) -> None:
    pgn = tmp_path / "round.pgn"
    pgn.write_text(
        '[Event "Orphans Open"]\n[Round "1.1"]\n[White "Alpha, Ann"]\n[Black "Beta, Bob"]\n'
        '[Result "*"]\n\n1. d4 d5 2. c4 e6 *\n'
    )
    cfg = tmp_path / "livegain.toml"
    cfg.write_text(
        f'data_dir = "{tmp_path / "data"}"\n[server]\nport = 0\n'
        f'[engine]\npath = "{stockfish}"\ndepth = {DEPTH}\nworkers = 2\n'
        f'[[feeds]]\ntype = "file"\npath = "{pgn}"\ninterval = 0.2\n'
    )
    with (tmp_path / "stderr.log").open("w") as log:
        service = subprocess.Popen(
            [*LIVEGAIN, "serve", "--config", str(cfg)],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
        )
    try:
        assert service.stdout is not None
        url = read_until(service.stdout, r"live at (http://127\.0\.0\.1:\d+/)", "its URL")[1]
        # The engines have searched every position; the standings were
        # computed in their child process (the event has standings).
        poll(
            lambda: (
                (h := get_json(url + "healthz"))["standings"]["computations"] >= 1
                and h["board_summary"]["evaluated"] == 4
            ),
            120,
            "the board evaluated and its event's standings computed",
        )

        def started() -> list[Proc]:
            seen = descendants(service.pid)
            engines = [p for p in seen if p.cmd.startswith(stockfish)]
            forkserver = [p for p in seen if "multiprocessing.forkserver" in p.cmd]
            tracker = [p for p in seen if "multiprocessing.resource_tracker" in p.cmd]
            # the fork server and the standings' child (forked from it: the same command)
            ok = len(engines) == 2 and len(forkserver) >= 2 and len(tracker) == 1
            return seen if ok else []

        seen = poll(started, 60, "two engines, the fork server, its child and the tracker")
        kill_and_check(service, seen)
    finally:
        if service.returncode is None:
            service.kill()
            service.wait(30)
        if service.stdout is not None:
            service.stdout.close()


# ------------------------------------------------- each kind of process alone


OFFLOAD_OWNER = """
import asyncio, os, time
from livegain.app.offload import Offload

async def main():
    offload = Offload()
    print("child", await offload.run(os.getpid), flush=True)
    await offload.run(time.sleep, 600)  # killed in the middle of this job

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_the_offload_child_and_its_helpers_end_with_their_owner(tmp_path: Path) -> None:
    """The child of :class:`~livegain.app.offload.Offload` (mid-job), the fork
    server and the resource tracker end when the process that owns them is
    SIGKILLed."""
    script = tmp_path / "owner.py"
    script.write_text(OFFLOAD_OWNER)
    owner = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the tracker's warnings about what it cleaned up
        text=True,
        start_new_session=True,
    )
    try:
        assert owner.stdout is not None
        child = int(read_until(owner.stdout, r"child (\d+)", "the child's pid")[1])

        def started() -> list[Proc]:
            seen = descendants(owner.pid)
            kinds = {"forkserver": 0, "resource_tracker": 0}
            for p in seen:
                for kind in kinds:
                    kinds[kind] += f"multiprocessing.{kind}" in p.cmd
            ok = any(p.pid == child for p in seen) and kinds == {
                "forkserver": 2,
                "resource_tracker": 1,
            }
            return seen if ok else []

        kill_and_check(owner, poll(started, 60, "the fork server, its child and the tracker"))
    finally:
        if owner.returncode is None:
            owner.kill()
            owner.wait(30)
        if owner.stdout is not None:
            owner.stdout.close()


ENGINE_OWNER = """
import sys, time
from livegain.engine.launch import spawn

print("engine", spawn(sys.argv[1]).pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_an_engine_that_ignores_its_input_ends_with_its_owner(tmp_path: Path) -> None:
    """Stockfish quits when its input reaches EOF; an engine that never reads
    it is ended by the kernel (``PR_SET_PDEATHSIG``) when its owner dies."""
    deaf = tmp_path / "deaf-engine"
    deaf.write_text("#!/bin/sh\nexec sleep 600\n")  # reads nothing: only a signal ends it
    deaf.chmod(0o755)
    script = tmp_path / "owner.py"
    script.write_text(ENGINE_OWNER)
    owner = subprocess.Popen(
        [sys.executable, str(script), str(deaf)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the tracker's warnings about what it cleaned up
        text=True,
        start_new_session=True,
    )
    try:
        assert owner.stdout is not None
        engine = int(read_until(owner.stdout, r"engine (\d+)", "the engine's pid")[1])
        seen = poll(
            lambda: [p for p in descendants(owner.pid) if p.pid == engine and "sleep" in p.cmd],
            60,
            "the engine running",
        )
        kill_and_check(owner, seen)
    finally:
        if owner.returncode is None:
            owner.kill()
            owner.wait(30)
        if owner.stdout is not None:
            owner.stdout.close()
