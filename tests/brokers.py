"""Real Mosquitto brokers for tests: the shared one, or a private one we can restart."""

from __future__ import annotations

import getpass
import shutil
import socket
import subprocess
import time
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def port_open(host: str, port: int, wait: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), wait):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrivateBroker:
    """A mosquitto on a free port with persistence in a temp dir; stop/start at will."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.conf = workdir / "mosquitto.conf"
        (workdir / "db").mkdir(parents=True, exist_ok=True)
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            # Started as root, mosquitto switches to user "mosquitto", which
            # cannot write our temp dir: persistence would silently fail.
            f"user {getpass.getuser()}\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {workdir / 'db'}/\n"
            "autosave_interval 1\n"
            f"log_dest file {workdir / 'mosquitto.log'}\nlog_type all\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.proc is None
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if port_open("127.0.0.1", self.port, 0.2):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log()}")
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not open its port in 10 s")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc = None

    def log(self) -> str:
        p = self.workdir / "mosquitto.log"
        return p.read_text() if p.exists() else ""
