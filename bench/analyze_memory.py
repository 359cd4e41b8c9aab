"""Peak memory and time of `livegain analyze` on a whole file of evaluated games.

Runs ``livegain analyze FILE --evals pgn --json`` as a program, its JSON
written to a temporary file, and prints:

  wall        seconds from launch to exit;
  cpu         user + system seconds of the program and its reading processes;
  peak rss    the largest resident set of one process of the run (the
              ``ru_maxrss`` that ``os.wait4`` gives for the child: the command,
              or one of its reading processes if one ever grew larger);
  tree peak   the largest sum of resident sets of the command and its reading
              processes at once, sampled from /proc every 0.2 s (Linux; shared
              copy-on-write pages count once per process, so this overstates);
  json        the size of the output, and its SHA-256.

With ``--baseline-rev REV`` the same command is first run from the package as
it is at git revision REV (``git archive`` into a temporary directory, put
first on PYTHONPATH), then from the working tree, in the same run: the
figures side by side, the ratios new / baseline, and whether the two JSON
documents are byte-identical. Asserts nothing; skips (exit 0, a message) when
the file is absent.

    .venv/bin/python bench/analyze_memory.py [--pgn FILE] [--baseline-rev REV]
        [--workers N] [--keep-json DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_PGN = ROOT.parent / "shared/data/lichess-rapid/lichess-rapid-dev.pgn.gz"


@dataclass
class Run:
    label: str
    wall: float
    cpu: float
    peak_rss: int  # bytes
    tree_peak: int  # bytes
    json_bytes: int
    sha256: str


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


class _TreeSampler(threading.Thread):
    """The largest sum of the resident sets of a process and its children."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            total = _rss(self.pid) + sum(_rss(c) for c in _children(self.pid))
            self.peak = max(self.peak, total)


def measure(label: str, argv: list[str], out: Path, env: dict[str, str] | None = None) -> Run:
    """One run of ``argv``, its stdout to ``out``."""
    t0 = time.perf_counter()
    with out.open("wb") as fh:
        # run from the output's directory: ``python -m`` puts the working
        # directory first on sys.path, before PYTHONPATH's package
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.PIPE, env=env, cwd=out.parent)
        sampler = _TreeSampler(proc.pid)
        sampler.start()
        assert proc.stderr is not None
        err = proc.stderr.read()  # the command's warnings; read so it never blocks
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"{label}: exit {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
    digest = hashlib.sha256()
    with out.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return Run(
        label,
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss * 1024,
        sampler.peak,
        out.stat().st_size,
        digest.hexdigest(),
    )


def baseline_tree(rev: str, into: Path) -> Path:
    """The package (and its shipped config) as at ``rev``, unpacked under ``into``."""
    archive = into / "baseline.tar"
    with archive.open("wb") as fh:
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "livegain", "config"], stdout=fh, check=True
        )
    tree = into / "baseline"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB"


def report(run: Run) -> None:
    print(
        f"{run.label:>9}: wall {run.wall:6.1f} s, cpu {run.cpu:6.1f} s, "
        f"peak rss {_gb(run.peak_rss)}, tree peak {_gb(run.tree_peak)}, "
        f"json {_gb(run.json_bytes)} (sha256 {run.sha256[:12]})",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgn", type=Path, default=DEFAULT_PGN)
    ap.add_argument("--baseline-rev", default=None, metavar="REV")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--keep-json", type=Path, default=None, metavar="DIR")
    args = ap.parse_args()
    if not args.pgn.exists():
        print(f"skipped: {args.pgn} not present (the shared data beside the checkout)")
        return
    argv = [sys.executable, "-m", "livegain.cli", "analyze", str(args.pgn), "--evals", "pgn"]
    argv.append("--json")
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; python {platform.python_version()}"
    )
    print("command: livegain " + " ".join(argv[3:]) + " > JSON", flush=True)
    with tempfile.TemporaryDirectory(prefix="lg-analyze-memory-") as tmp:
        work = Path(tmp)
        runs: list[Run] = []
        if args.baseline_rev:
            tree = baseline_tree(args.baseline_rev, work)
            env = {**os.environ, "PYTHONPATH": str(tree)}
            runs.append(measure("baseline", argv, work / "baseline.json", env))
            report(runs[-1])
            shutil.rmtree(tree)
            if args.keep_json is None:
                (work / "baseline.json").unlink()
        runs.append(
            measure("now", argv, work / "now.json", {**os.environ, "PYTHONPATH": str(ROOT)})
        )
        report(runs[-1])
        if args.keep_json is not None:
            args.keep_json.mkdir(parents=True, exist_ok=True)
            for path in work.glob("*.json"):
                shutil.move(str(path), args.keep_json / path.name)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if len(runs) == 2:
        base, now = runs
        print(
            f"now / baseline ({args.baseline_rev}): wall {now.wall / base.wall:.2f}x, "
            f"cpu {now.cpu / base.cpu:.2f}x, peak rss {now.peak_rss / base.peak_rss:.3f}x, "
            f"tree peak {now.tree_peak / max(base.tree_peak, 1):.3f}x; JSON "
            + ("byte-identical" if now.sha256 == base.sha256 else "DIFFERENT")
        )


if __name__ == "__main__":
    main()
