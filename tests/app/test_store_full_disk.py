"""A full disk is "cannot write now", not "not a livegain store": on a real
small file system (a tmpfs, mounted by the test; skipped where mounting is not
permitted) the service keeps running through the outage and logs it once per
interval with a count; a restart on the still-full disk is a one-line error
saying the disk is full, with or without --fresh-store, and leaves the store
as it was; once space is back the service starts on that store and has every
ply, and a store that comes back while the service runs gets every ply
without waiting for another move."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from conftest import need

from livegain.app.service import STORE_FILE, Service
from livegain.app.store import Store

from .conftest import running, settings_for

pytestmark = [pytest.mark.engine, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SANS = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"]
BEFORE = 4  # plies stored before the disk fills


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs of the test's own."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    try:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        proc = None
        why = str(exc)
    else:
        why = proc.stderr.strip()
    need(proc is not None and proc.returncode == 0, f"cannot mount a tmpfs here: {why}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, timeout=10)


def fill(disk: Path) -> Path:
    """Write until the file system refuses (ENOSPC); the filler's path."""
    filler = disk / "filler"
    with filler.open("wb") as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 65536)
            f.flush()
    st = os.statvfs(disk)
    assert st.f_bavail == 0, "the disk is not full"
    return filler


def write_pgn(path: Path, plies: int) -> None:
    moves = " ".join(
        (f"{i // 2 + 1}. " if i % 2 == 0 else "") + san for i, san in enumerate(SANS[:plies])
    )
    path.write_text(
        '[Event "Full disk"]\n[Round "1.1"]\n[White "Alpha, Ann"]\n[Black "Beta, Bob"]\n'
        f'[Result "*"]\n\n{moves} *\n'
    )


def board_plies(service: Service) -> tuple[int, int]:
    """(plies, evaluated plies) of the one board."""
    t = service.registry
    if t is None or len(t.boards) != 1:
        return (0, 0)
    g = next(iter(t.boards.values()))
    return (g.plies, g.evaluated_plies)


async def until(what: str, predicate: object, limit: float = 60.0) -> None:
    for _ in range(int(limit / 0.05)):
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not in {limit} s: {what}")


def stored_plies(data: Path) -> int:
    """Plies of the one stored board, read from a copy of the store's files on
    another disk (reading the store in place on a full disk would need room
    for SQLite's shared-memory file, and must not change it)."""
    with tempfile.TemporaryDirectory() as tmp:
        for p in data.glob(f"{STORE_FILE}*"):
            shutil.copyfile(p, Path(tmp) / p.name)
        store = Store(Path(tmp) / STORE_FILE)
        try:
            ((_, snap),) = store.load_snapshots()
            return len(snap.moves)
        finally:
            store.close()


def fingerprint(data: Path) -> dict[str, str]:
    """Every file of the data directory, by name, with its content's hash."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data.iterdir())
        if p.is_file()
    }


def config_file(tmp_path: Path, data: Path, pgn: Path, stockfish: str) -> Path:
    config = tmp_path / f"livegain-{uuid.uuid4().hex[:6]}.toml"
    config.write_text(
        f"data_dir = {json.dumps(str(data))}\npersist = true\n\n"
        '[server]\nhost = "127.0.0.1"\nport = 0\n\n'
        f"[engine]\npath = {json.dumps(stockfish)}\ndepth = 4\nworkers = 1\n\n"
        '[log]\nlevel = "info"\n\n'
        f'[[feeds]]\ntype = "file"\npath = {json.dumps(str(pgn))}\ninterval = 0.1\n'
    )
    return config


def serve(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEGAIN_")}
    return subprocess.run(
        [sys.executable, "-m", "livegain.cli", "serve", "--config", str(config), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
    )


def settings(tmp_path: Path, data: Path, pgn: Path, stockfish: str) -> object:
    return settings_for(
        tmp_path,
        data_dir=str(data),
        engine={"path": stockfish, "depth": 4},
        feeds=[{"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}],
    )


async def test_a_full_disk_is_not_a_damaged_store(
    tmp_path: Path, small_disk: Path, stockfish: str
) -> None:
    data = small_disk / "data"
    pgn = tmp_path / "round.pgn"  # the feed is on another disk
    write_pgn(pgn, BEFORE)
    service = Service(settings(tmp_path, data, pgn, stockfish))  # type: ignore[arg-type]
    with structlog.testing.capture_logs() as logs:
        async with running(service):
            await until("the first plies evaluated", lambda: board_plies(service) == (4, 4))
            filler = fill(small_disk)
            write_pgn(pgn, len(SANS))
            await until(
                "every ply evaluated while the disk is full",
                lambda: board_plies(service) == (len(SANS), len(SANS)),
            )
            await until("a retry of the unsaved board", lambda: service.stats.store_failures >= 8)
            health = service.health()
    store = health["store"]
    assert store["failing"] and "the disk is full" in store["last_error"], store
    assert any("store: writes failing (the disk is full" in p for p in health["problems"])
    # each distinct error logged once (repeats are counted, and logged again
    # with their count after STORE_LOG_EVERY s, longer than this outage)
    lines = [e for e in logs if e["event"] == "store_failed"]
    assert 1 <= len(lines) <= 3 < service.stats.store_failures, lines
    assert len({e["error"] for e in lines}) == len(lines)
    assert stored_plies(data) == BEFORE  # the store has what it had before the outage
    kept = fingerprint(data)

    # A restart on the still-full disk: one line that says so, and nothing moved
    config = config_file(tmp_path, data, pgn, stockfish)
    for extra in ((), ("--fresh-store",)):
        proc = serve(config, *extra)
        assert proc.returncode == 2, (extra, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout
        lines_err = proc.stderr.strip().splitlines()
        assert len(lines_err) == 1, proc.stderr
        assert str(data / STORE_FILE) in lines_err[0]
        assert "the disk is full" in lines_err[0]
        assert "not a livegain store" not in lines_err[0]
        assert "--fresh-store" not in lines_err[0]
        assert fingerprint(data) == kept, extra  # no rename, no write
    assert not list(data.glob("*.damaged-*"))

    # Space is back: the service starts on its store and has every ply
    filler.unlink()
    again = Service(settings(tmp_path, data, pgn, stockfish))  # type: ignore[arg-type]
    async with running(again):
        await until(
            "every ply evaluated after the restart",
            lambda: board_plies(again) == (len(SANS), len(SANS)),
        )
        assert again.stats.restored_evals >= BEFORE  # the stored evaluations reused
        assert again.health()["store"]["failures"] == 0
    assert stored_plies(data) == len(SANS)


async def test_space_back_while_running_stores_every_ply_without_a_new_move(
    tmp_path: Path, small_disk: Path, stockfish: str
) -> None:
    data = small_disk / "data"
    pgn = tmp_path / "round.pgn"
    write_pgn(pgn, BEFORE)
    service = Service(settings(tmp_path, data, pgn, stockfish))  # type: ignore[arg-type]
    async with running(service):
        await until("the first plies evaluated", lambda: board_plies(service) == (4, 4))
        filler = fill(small_disk)
        write_pgn(pgn, len(SANS))
        await until("the last ply read", lambda: board_plies(service)[0] == len(SANS))
        await until("a failed write", lambda: service.stats.store_failures > 0)
        filler.unlink()  # no move comes after this one
        await until("the store recovered", lambda: service.health()["store"]["failing"] is False)
        await until("the board stored again", lambda: stored_plies(data) == len(SANS))
