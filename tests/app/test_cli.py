"""`livegain serve` and `livegain demo` as a user runs them: real processes, real signals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from livegain.models.perceived import store_perceived_model

from .conftest import DEPTH, toy_model

pytestmark = pytest.mark.engine

LIVEGAIN = [sys.executable, "-m", "livegain.cli"]


def start(
    args: list[str], env: dict[str, str] | None = None, seen: list[str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start ``livegain ARGS`` and wait for its URL; the lines printed before it go to ``seen``."""
    proc = subprocess.Popen(
        LIVEGAIN + args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    end = time.monotonic() + 60
    lines = seen if seen is not None else []
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"(?:live at|Open) (https?://127\.0\.0\.1:\d+/)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    _, err = proc.communicate(timeout=10)
    raise AssertionError(f"no URL printed: {''.join(lines)} {err}")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def wait_json(url: str, cond: Any, wait: float = 60) -> Any:
    end = time.monotonic() + wait
    data = None
    while time.monotonic() < end:
        data = get_json(url)
        if cond(data):
            return data
        time.sleep(0.2)
    raise AssertionError(f"condition not met: {data}")


def wait_found(url: str, cond: Any, wait: float = 60) -> Any:
    """:func:`wait_json` on a URL that answers 404 until it has something."""
    import urllib.error

    end = time.monotonic() + wait
    data = None
    while time.monotonic() < end:
        try:
            data = get_json(url)
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise
        else:
            if cond(data):
                return data
        time.sleep(0.2)
    raise AssertionError(f"condition not met: {data}")


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> str:
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


def engine_children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def test_serve_with_config_env_and_flags(tmp_path: Path) -> None:
    pgn = tmp_path / "round.pgn"
    pgn.write_text(
        '[Event "T"]\n[Round "1.1"]\n[White "Alpha, Ann"]\n[Black "Beta, Bob"]\n'
        '[Result "*"]\n\n1. d4 d5 2. c4 e6 *\n'
    )
    models = store_perceived_model(toy_model("toy-cli"), tmp_path / "models.toml")
    cfg = tmp_path / "livegain.toml"
    cfg.write_text(
        f'data_dir = "{tmp_path / "data"}"\n[server]\nport = 1\n'
        f'[engine]\ndepth = {DEPTH}\nworkers = 1\nperceived_model = "{models}"\n'
        f'[[feeds]]\ntype = "file"\npath = "{pgn}"\ninterval = 0.2\n'
    )
    # The env overrides the file (depth), the flag overrides both (port 1 -> 0).
    proc, url = start(
        ["serve", "--config", str(cfg), "--port", "0", "--loop", "uvloop"],
        env={"LIVEGAIN_ENGINE__DEPTH": "7"},
    )
    try:
        wait_json(
            url + "healthz/boards",
            lambda d: (
                d["board_status"] and all(b["evaluated"] == 4 for b in d["board_status"].values())
            ),
        )
        health = get_json(url + "healthz")
        assert health["board_summary"]["evaluated"] == 4 * health["boards"]
        assert health["engine"].endswith("depth 7")
        assert health["event_loop"] == "uvloop"
        # The model file of the configuration, picked for this engine and depth.
        assert health["perceived_model"]["model"] == "toy-cli"
        assert "toy-cli" in health["perceived_model"]["why"]
        boards = get_json(url + "api/boards")
        assert boards[0]["white"]["name"] == "Alpha, Ann"
        # Both ratings on the wire: calibrated (two moves: too early) and Algorithm 4.
        white = boards[0]["white_perceived"]
        assert (white["model"], white["moves"], white["early"]) == ("toy-cli", 2, True)
        assert boards[0]["white_algorithm4"]["moves"] == 2
        # The engines run below the service ([engine] nice, 5 by default).
        engines = [
            pid
            for pid in engine_children(proc.pid)
            if Path(f"/proc/{pid}/comm").read_text().strip().startswith("stockfish")
        ]
        service_nice = os.getpriority(os.PRIO_PROCESS, proc.pid)
        assert engines
        assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in engines} == {
            min(19, service_nice + 5)
        }
    finally:
        err = stop(proc)
    assert engine_children(proc.pid) == []
    # JSON log lines on stderr, with the board id bound.
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert any(e.get("event") == "board_added" and e.get("board_id") for e in events)
    assert any(e.get("event") == "perceived_model" and e.get("model") == "toy-cli" for e in events)
    assert any(e.get("event") == "service_stopped" for e in events)
    assert (tmp_path / "data" / "livegain.sqlite3").exists()


def test_serve_reports_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[server]\nport = 'x'\n")
    out = subprocess.run(
        [*LIVEGAIN, "serve", "--config", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert "bad.toml" in out.stderr and "server.port" in out.stderr
    assert "Traceback" not in out.stderr


def test_demo_follows_a_multi_round_event() -> None:
    printed: list[str] = []
    proc, url = start(
        ["demo", "--port", "0", "--speed", "200", "--depth", str(DEPTH)], seen=printed
    )
    try:
        # The demo Open's five rounds (rounds 1-4 read as finished, round 5 live),
        # the Team Cup's three (rounds 1-2 finished, round 3 live: 24 games)
        # and the game of the century.
        wait_json(
            url + "healthz/boards",
            lambda d: (
                len(d["board_status"]) == 55
                and sum(b["evaluated"] > 2 for b in d["board_status"].values()) >= 3
            ),
        )
        follows = get_json(url + "healthz")["feeds"]["lichess:LgDemo01"]["status"]
        assert (follows["round"], follows["finished_rounds_read"]) == ("Round 5", 4)
        # The player table counts every round: four finished games each before round 5.
        quoted = urllib.parse.quote("livegain Demo Open 2026")
        standings = wait_found(url + f"api/standings/{quoted}", lambda d: d["finished"] >= 24)
        assert standings["format"] == "swiss"  # read from the tournament's description
        assert all(r["games"] >= 4 and r["rated_games"] >= 4 for r in standings["rows"])
        health = get_json(url + "healthz")
        assert health["engine"].endswith(f"depth {DEPTH}")
        assert health["event_loop"] == "asyncio"
        # The shipped model nearest to this engine and depth, or none (said why).
        picked = health["perceived_model"]
        assert picked["why"]
        boards = get_json(url + "api/boards")
        shown = [b["white_perceived"] for b in boards if b["white_perceived"] is not None]
        if picked["model"] is None:
            assert shown == []
        else:
            assert shown and all(p["model"] == picked["model"] for p in shown)
        assert any(b["white_algorithm4"] is not None for b in boards)
        # Clocks and time spent on the wire (the demo round has [%clk] and 90+30)
        busiest = max(boards, key=lambda b: b["plies"])
        state = get_json(url + "api/boards/" + urllib.parse.quote(busiest["board_id"], safe=""))
        assert state["clocks"]["time_trouble_below"] == 300
        assert any(m["spent"] is not None for m in state["moves"])
        # The producer's view ranks every board
        ranking = get_json(url + "api/producer")
        assert sorted(r["rank"] for r in ranking["boards"]) == list(range(1, 56))
        assert all(r["reason"] for r in ranking["boards"])
        with urllib.request.urlopen(url + "overlay/producer", timeout=10) as resp:
            assert resp.status == 200
        # it prints where the player table, the team pages, the key moments and the
        # producer's view are
        pages = [m.group(1) for line in printed if (m := re.search(r": (http\S+)$", line))]
        assert [p.split("?")[0].removeprefix(url) for p in pages] == [
            "overlay/static/widget-standings.html",
            "overlay/static/widget-players.html",
            "overlay/static/widget-team-match.html",
            "overlay/static/widget-team-standings.html",
            "overlay/static/widget-moments.html",
            "overlay/producer",
        ]
        for page in pages:
            with urllib.request.urlopen(page, timeout=10) as resp:
                assert resp.status == 200
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200
            assert "text/html" in resp.headers["Content-Type"]
    finally:
        stop(proc, signal.SIGINT)


def test_demo_batch_keeps_the_offline_analysis() -> None:
    out = subprocess.run(
        [*LIVEGAIN, "demo", "--batch", "--json"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["games"]


def test_serve_reports_a_missing_engine_and_a_busy_port(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'data_dir = "{tmp_path}"\n[engine]\npath = "/nonexistent/engine"\n')
    out = subprocess.run(
        [*LIVEGAIN, "serve", "--config", str(cfg), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "/nonexistent/engine" in out.stderr and "Traceback" not in out.stderr
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cfg.write_text(f'data_dir = "{tmp_path}"\n[engine]\ndepth = {DEPTH}\nworkers = 1\n')
        out = subprocess.run(
            [*LIVEGAIN, "serve", "--config", str(cfg), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 2
    assert "cannot start the server" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.broker
def test_demo_over_mqtt(shared_broker: str) -> None:
    seen: list[str] = []
    proc, url = start(
        ["demo", "--port", "0", "--speed", "200", "--depth", str(DEPTH), "--mqtt", shared_broker],
        seen=seen,
    )
    try:
        wait_json(
            url + "healthz/boards",
            lambda d: (
                len(d["board_status"]) == 7
                and sum(b["evaluated"] > 2 for b in d["board_status"].values()) >= 3
            ),
        )
        health = get_json(url + "healthz")
        assert health["feed_errors"] == {}
        assert health["mqtt"]["connected"] is True
        # The gateway command the demo prints meets its output on the broker.
        said = [line for line in seen if "livegain gateway --broker" in line]
        assert len(said) == 1, seen
        command = said[0].split("livegain gateway", 1)[1].split()
        assert command == ["--broker", shared_broker, "--prefix", "livegain/demo/out"]
        gateway, gateway_url = start(["gateway", *command, "--host", "127.0.0.1", "--port", "0"])
        try:
            wait_json(gateway_url + "healthz", lambda d: d["boards"] == 7)
        finally:
            stop(gateway)
    finally:
        stop(proc, signal.SIGINT)
