"""Real Mosquitto brokers for tests: the shared one, or a private one we can restart."""

from __future__ import annotations

import getpass
import random
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def port_open(host: str, port: int, wait: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), wait):
            return True
    except OSError:
        return False


def _ephemeral_ports() -> range:
    """The kernel's range for the local ports of outgoing connections."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)  # Linux's default


_PORTS = random.Random()


def free_port() -> int:
    """A port for a server another process will bind (a broker, a gateway on a
    port fixed in advance), free now and outside the ephemeral range: a port the
    kernel hands out (bind to 0) may be taken as the local port of any outgoing
    connection before that process binds it. A process that can bind 0 and
    report its port itself should do that instead."""
    ephemeral = _ephemeral_ports()
    pool = [p for p in range(10000, 65536) if p not in ephemeral]
    for _ in range(200):
        port = _PORTS.choice(pool)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port outside the ephemeral range")


@dataclass(frozen=True)
class BrokerTls:
    """PEM files for a TLS listener: the broker's certificate and key, the CA
    its clients' certificates must come from, and whether it demands one."""

    cafile: Path
    certfile: Path
    keyfile: Path
    require_certificate: bool = True


class PrivateBroker:
    """A mosquitto on a free port with persistence in a temp dir; stop/start at will.

    With ``tls`` it has a second listener, TLS only, on ``tls_port`` (``tls_url``).
    """

    def __init__(self, workdir: Path, tls: BrokerTls | None = None) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.tls = tls
        self.tls_port = free_port() if tls is not None else None
        self.conf = workdir / "mosquitto.conf"
        (workdir / "db").mkdir(parents=True, exist_ok=True)
        conf = (
            # per_listener_settings off: allow_anonymous holds for both listeners
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
        if tls is not None:
            conf += (
                f"listener {self.tls_port} 127.0.0.1\n"
                f"cafile {tls.cafile}\ncertfile {tls.certfile}\nkeyfile {tls.keyfile}\n"
                f"require_certificate {'true' if tls.require_certificate else 'false'}\n"
            )
        self.conf.write_text(conf)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    @property
    def tls_url(self) -> str:
        assert self.tls_port is not None, "no TLS listener"
        return f"mqtts://127.0.0.1:{self.tls_port}"

    def start(self) -> None:
        assert self.proc is None
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if port_open("127.0.0.1", self.port, 0.2) and (
                self.tls_port is None or port_open("127.0.0.1", self.tls_port, 0.2)
            ):
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
