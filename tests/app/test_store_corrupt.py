"""A damaged store: `livegain serve` says so in one line (exit 2), or with
--fresh-store keeps the damaged file beside and starts with an empty store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from livegain.app.service import STORE_FILE
from livegain.app.store import Store, StoreError

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.engine


def write_config(tmp_path: Path, stockfish: str) -> Path:
    config = tmp_path / "livegain.toml"
    config.write_text(
        f"data_dir = {json.dumps(str(tmp_path / 'data'))}\npersist = true\n\n"
        '[server]\nhost = "127.0.0.1"\nport = 0\n\n'
        f"[engine]\npath = {json.dumps(stockfish)}\ndepth = 4\nworkers = 1\n\n"
        '[log]\nlevel = "info"\n'
    )
    (tmp_path / "data").mkdir(exist_ok=True)
    return config


def serve(config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "livegain.cli", "serve", "--config", str(config), *extra]


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("LIVEGAIN_")}
    return e


GARBAGE = b"\x00not a database, a half-copied file or another program's\xff" * 200


def other_programs_sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    db.commit()
    db.close()


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: p.write_bytes(GARBAGE), "file is not a database"),
        (other_programs_sqlite, "an SQLite file with tables photos"),
    ],
    ids=["garbage", "other-sqlite"],
)
def test_a_damaged_store_is_one_line_and_exit_2(
    tmp_path: Path, stockfish: str, make: object, what: str
) -> None:
    config = write_config(tmp_path, stockfish)
    store = tmp_path / "data" / STORE_FILE
    make(store)  # type: ignore[operator]
    before = store.read_bytes()
    proc = subprocess.run(
        serve(config), capture_output=True, text=True, timeout=60, cwd=REPO, env=env()
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(store) in lines[0]
    assert f"not a livegain store ({what}" in lines[0]
    assert "--fresh-store" in lines[0]
    assert store.read_bytes() == before  # nothing was changed


def test_fresh_store_sets_the_damaged_file_aside_and_starts(tmp_path: Path, stockfish: str) -> None:
    config = write_config(tmp_path, stockfish)
    store = tmp_path / "data" / STORE_FILE
    store.write_bytes(GARBAGE)
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            serve(config, "--fresh-store"),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env(),
        )
    try:
        deadline = time.monotonic() + 60
        while "livegain is live at" not in log.read_text(errors="replace"):
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    text = log.read_text(errors="replace")
    assert proc.returncode == 0, text
    assert "Traceback" not in text
    kept = list(store.parent.glob(f"{STORE_FILE}.damaged-*"))
    assert len(kept) == 1, sorted(p.name for p in store.parent.iterdir())
    assert kept[0].read_bytes() == GARBAGE  # the damaged file kept as it was
    said = [json.loads(line) for line in text.splitlines() if "store_set_aside" in line]
    assert said and said[0]["moved_to"] == str(kept[0]) and said[0]["level"] == "warning"
    Store(store).close()  # a fresh, good store now
    with pytest.raises(StoreError, match="file is not a database"):
        Store(kept[0])
