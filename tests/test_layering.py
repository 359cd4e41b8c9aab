"""The layering of livegain, read from its imports (lazy ones too):

- ``core`` is pure: it imports nothing of livegain outside ``core``;
- the parts the service is built of (``feeds``, ``engine``, ``remote``,
  ``mqtt``, ``publish``) import neither the service (``app``), nor the
  batch side (``batch``), nor the command line (``cli``);
- the relays (``relay``: the sources ``livegain replay``, the demo and the
  tests serve) sit beside the command line: they write the feeds' formats with
  ``feeds``' parsers and ``mqtt``'s client, over ``core``, import none of
  ``app``, ``batch``, ``cli``, ``engine``, ``remote`` and ``publish``, and
  only the command line imports them;
- nothing imports a private module (``_name``) of another package;
- nothing reads another module's private names: no ``from x import _name``
  from another module, and a private attribute (``obj._name``) is read only
  on ``self`` / ``cls`` or on a parameter annotated with the enclosing class
  (another instance of the same class); the standard library's documented
  ``sys._current_frames`` and ``os._exit`` aside;
- nothing under ``publish`` calls into ``app``, not even through a callback
  set on it: its classes declare no public callback slot to be filled in
  later (``self.x: Callable[...] | None = None``; what they need from the program
  that runs them is handed to them at construction, as a protocol), and no
  module outside ``publish`` sets an ``on_*`` attribute on another object.

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
    **{
        part: frozenset({"app", "batch", "cli", "service"})
        for part in ("feeds", "engine", "remote", "mqtt", "publish")
    },
    "relay": frozenset({"app", "batch", "cli", "service", "engine", "remote", "publish"}),
}

#: package -> the only top-level packages (or modules) of livegain that may import it
ONLY_FROM: dict[str, frozenset[str]] = {"relay": frozenset({"cli", "relay"})}


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
            if len(mine) > 1 and mine[1] not in ONLY_FROM.get(parts[1], frozenset({mine[1]})):
                broken.append(f"only {' and '.join(sorted(ONLY_FROM[parts[1]]))} import {parts[1]}")
            for i, part in enumerate(parts[1:], start=1):
                if part.startswith("_") and not part.startswith("__"):
                    if mine[:i] != parts[:i]:
                        broken.append(f"a private module of {'.'.join(parts[:i])}")
                    break
            for rule in broken:
                out.setdefault((rel, line, rule), f"{rel}:{line}: imports {target} ({rule})")
    return list(out.values())


def made_up(tmp_path: Path, *packages: str) -> Path:
    """A made-up ``livegain`` with these empty packages, to try a checker on."""
    pkg = tmp_path / "livegain"
    for d in packages:
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    return pkg


def test_the_checker_sees_each_kind_of_forbidden_import(tmp_path: Path) -> None:
    pkg = made_up(tmp_path, "core", "feeds", "publish", "remote", "cli", "relay")
    (pkg / "remote" / "_wire.py").write_text("X = 1\n")
    (pkg / "core" / "maths.py").write_text("from livegain.feeds import pgn\n")
    (pkg / "publish" / "hub.py").write_text("def f():\n    from livegain.cli import main\n")
    (pkg / "publish" / "gate.py").write_text("from livegain.remote._wire import X\n")
    (pkg / "remote" / "ok.py").write_text("from . import _wire\nfrom livegain.core import maths\n")
    (pkg / "relay" / "round.py").write_text(
        "from livegain.feeds import pgn\nfrom livegain.publish import hub\n"
    )
    (pkg / "feeds" / "pgn.py").write_text("def f():\n    from livegain.relay import round\n")
    found = violations(pkg)
    assert len(found) == 5, found
    assert any("core/maths.py" in v and "core imports only core" in v for v in found)
    assert any("publish/hub.py" in v and "must not import cli" in v for v in found)
    assert any("publish/gate.py" in v and "private module of livegain.remote" in v for v in found)
    assert any("feeds/pgn.py" in v and "only cli and relay import relay" in v for v in found)
    assert any("relay/round.py" in v and "relay must not import publish" in v for v in found)


@pytest.mark.skipif(not ROOT.is_dir(), reason="no livegain package beside the tests")
def test_livegain_keeps_its_layers() -> None:
    assert violations(ROOT) == []


def callback_slots(root: Path) -> list[str]:
    """Callbacks set on ``publish`` objects from outside: a slot declared in
    ``publish`` (a public attribute annotated as a ``Callable`` and set to
    None, to be filled in later), or an ``on_*`` attribute set on another object
    outside ``publish``."""
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        mine = module_name(root, path).split(".")
        rel = str(path.relative_to(root.parent))
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if mine[1:2] == ["publish"]:
                if (
                    isinstance(node, ast.AnnAssign)
                    and isinstance(node.target, ast.Attribute)
                    and not node.target.attr.startswith("_")  # its own, unseen outside
                    and "Callable" in ast.unparse(node.annotation)
                    and isinstance(node.value, ast.Constant)
                    and node.value.value is None
                ):
                    out.append(f"{rel}:{node.lineno}: a callback slot {node.target.attr}")
                continue
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets = [node.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and t.attr.startswith("on_")
                    and not (isinstance(t.value, ast.Name) and t.value.id == "self")
                ):
                    out.append(f"{rel}:{node.lineno}: sets {ast.unparse(t)}")
    return out


def test_the_checker_sees_callbacks_set_on_publish_objects(tmp_path: Path) -> None:
    pkg = made_up(tmp_path, "app", "publish")
    (pkg / "publish" / "server.py").write_text(
        "from collections.abc import Callable\n"
        "class S:\n"
        "    def __init__(self, f: Callable[[], int] | None = None) -> None:\n"
        "        self.f = f\n"
        "        self.on_x: Callable[[str], bool] | None = None\n"
        "        self._own: Callable[[], int] | None = None\n"
    )
    (pkg / "app" / "service.py").write_text(
        "class A:\n"
        "    def __init__(self, server):\n"
        "        self.on_y = None\n"
        "        server.on_x = self.remove\n"
    )
    found = callback_slots(pkg)
    assert len(found) == 2, found
    assert any("publish/server.py:5" in v and "slot on_x" in v for v in found)
    assert any("app/service.py:4" in v and "sets server.on_x" in v for v in found)


@pytest.mark.skipif(not ROOT.is_dir(), reason="no livegain package beside the tests")
def test_nothing_sets_callbacks_on_publish_objects() -> None:
    assert callback_slots(ROOT) == []


#: private names of the standard library that are its documented API
STDLIB_PRIVATE = frozenset({"sys._current_frames", "os._exit"})


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_attributes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, ``obj._name``) of each private attribute read on something not
    known to be of the enclosing class (see :func:`private_reads`)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, own: frozenset[str]) -> None:
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                visit(child, frozenset({"self", "cls"}) | {node.name})
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            classes = {n for n in own if n not in ("self", "cls")} | {"Self", "cls"}
            same = {
                a.arg
                for a in args
                if a.annotation is not None and ast.unparse(a.annotation).strip("'\"") in classes
            }
            for sub in ast.walk(node):  # made here, or checked to be, of the class
                if (
                    isinstance(sub, ast.Assign)
                    and len(sub.targets) == 1
                    and isinstance(sub.targets[0], ast.Name)
                    and isinstance(sub.value, ast.Call)
                    and ast.unparse(sub.value.func) in classes
                ):
                    same.add(sub.targets[0].id)
                if (
                    isinstance(sub, ast.Call)
                    and ast.unparse(sub.func) == "isinstance"
                    and len(sub.args) == 2
                    and isinstance(sub.args[0], ast.Name)
                    and ast.unparse(sub.args[1]) in classes
                ):
                    same.add(sub.args[0].id)
            own = own | same
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            receiver = ast.unparse(node.value)
            if receiver not in own and f"{receiver}.{node.attr}" not in STDLIB_PRIVATE:
                found.append((node.lineno, f"{receiver}.{node.attr}"))
        for child in ast.iter_child_nodes(node):
            visit(child, own)

    visit(tree, frozenset())
    return found


def private_reads(root: Path) -> list[str]:
    """Reads of another module's private names: ``from x import _name`` (a
    private module is the previous rule's), and ``obj._name`` where ``obj`` is
    not ``self``, ``cls``, nor, in a method, a parameter annotated with the
    enclosing class, a name bound to a new instance of it, or a name checked
    to be one (``isinstance``)."""
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = str(path.relative_to(root.parent))
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level:
                for alias in node.names:
                    sub = root.parent.joinpath(*(node.module or "").split("."), alias.name)
                    is_module = sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file()
                    if _is_private(alias.name) and not is_module:
                        out.append(f"{rel}:{node.lineno}: imports {node.module}.{alias.name}")

        out.extend(f"{rel}:{line}: reads {what}" for line, what in private_attributes(tree))
    return out


def test_the_checker_sees_private_names_read_across_modules(tmp_path: Path) -> None:
    pkg = made_up(tmp_path, "app", "core")
    (pkg / "core" / "hist.py").write_text(
        "class H:\n"
        "    def __init__(self) -> None:\n"
        "        self._n = 0\n"
        "    def add(self, other: H) -> int:\n"
        "        return self._n + other._n\n"
        "    def copy(self) -> H:\n"
        "        new = H()\n"
        "        new._n = self._n\n"
        "        return new\n"
        "    def __eq__(self, other: object) -> bool:\n"
        "        return isinstance(other, H) and other._n == self._n\n"
        "    def leak(self, other: object) -> int:\n"
        "        return other._n\n"
        "def _helper() -> int:\n"
        "    return 1\n"
    )
    (pkg / "app" / "health.py").write_text(
        "import sys\n"
        "from livegain.core.hist import _helper\n"
        "def report(service, h):\n"
        "    sys._current_frames()\n"
        "    return service._evaluator, h.add(h), _helper()\n"
    )
    found = private_reads(pkg)
    assert len(found) == 3, found
    assert any("core/hist.py:13" in v and "reads other._n" in v for v in found)
    assert any("app/health.py:2" in v and "imports livegain.core.hist._helper" in v for v in found)
    assert any("app/health.py:5" in v and "reads service._evaluator" in v for v in found)


@pytest.mark.skipif(not ROOT.is_dir(), reason="no livegain package beside the tests")
def test_no_module_reads_another_modules_private_names() -> None:
    assert private_reads(ROOT) == []
