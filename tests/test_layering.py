"""The layering of livegain, read from its imports (lazy ones too):

- ``core`` is pure: it imports nothing of livegain outside ``core``;
- the parts the service is built of (``feeds``, ``engine``, ``remote``,
  ``mqtt``, ``publish``) import neither the service (``app``), nor the
  batch side (``batch``), nor the command line (``cli``);
- nothing imports a private module (``_name``) of another package.

The checker is tried on a made-up package first, so a rule that could no
longer see a forbidden import fails here too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "livegain"

#: package -> the top-level packages of livegain it must not import
FORBIDDEN: dict[str, frozenset[str]] = {
    part: frozenset({"app", "batch", "cli", "service"})
    for part in ("feeds", "engine", "remote", "mqtt", "publish")
}


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, lazy ones too."""
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # ``from livegain.x import _module``
                sub = root.parent.joinpath(*target.split("."), alias.name)
                if sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file():
                    yield node.lineno, f"{target}.{alias.name}"


def violations(root: Path) -> list[str]:
    """Every import that breaks a rule, once per import statement and rule."""
    top = root.name
    out: dict[tuple[str, int, str], str] = {}
    for path in sorted(root.rglob("*.py")):
        mine = module_name(root, path).split(".")
        rel = str(path.relative_to(root.parent))
        for line, target in imports_of(root, path):
            parts = target.split(".")
            if parts[0] != top or len(parts) < 2:
                continue
            broken: list[str] = []
            if mine[1:2] == ["core"] and parts[1] != "core":
                broken.append("core imports only core")
            if len(mine) > 1 and parts[1] in FORBIDDEN.get(mine[1], frozenset()):
                broken.append(f"{mine[1]} must not import {parts[1]}")
            for i, part in enumerate(parts[1:], start=1):
                if part.startswith("_") and not part.startswith("__"):
                    if mine[:i] != parts[:i]:
                        broken.append(f"a private module of {'.'.join(parts[:i])}")
                    break
            for rule in broken:
                out.setdefault((rel, line, rule), f"{rel}:{line}: imports {target} ({rule})")
    return list(out.values())


def test_the_checker_sees_each_kind_of_forbidden_import(tmp_path: Path) -> None:
    pkg = tmp_path / "livegain"
    for d in ("core", "feeds", "publish", "remote", "cli"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "remote" / "_wire.py").write_text("X = 1\n")
    (pkg / "core" / "maths.py").write_text("from livegain.feeds import pgn\n")
    (pkg / "publish" / "hub.py").write_text("def f():\n    from livegain.cli import main\n")
    (pkg / "publish" / "gate.py").write_text("from livegain.remote._wire import X\n")
    (pkg / "remote" / "ok.py").write_text("from . import _wire\nfrom livegain.core import maths\n")
    found = violations(pkg)
    assert len(found) == 3, found
    assert any("core/maths.py" in v and "core imports only core" in v for v in found)
    assert any("publish/hub.py" in v and "must not import cli" in v for v in found)
    assert any("publish/gate.py" in v and "private module of livegain.remote" in v for v in found)


@pytest.mark.skipif(not ROOT.is_dir(), reason="no livegain package beside the tests")
def test_livegain_keeps_its_layers() -> None:
    assert violations(ROOT) == []
