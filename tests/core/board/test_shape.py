"""The board's code stays readable in parts: no function or method under
``livegain/core/board/`` is longer than 80 lines (its docstring included),
so each phase of folding a snapshot into a board has a name of its own."""

from __future__ import annotations

import ast
from pathlib import Path

BOARD = Path(__file__).resolve().parents[3] / "livegain" / "core" / "board"
LIMIT = 80


def long_functions(root: Path, limit: int = LIMIT) -> list[str]:
    """``file:line name (n lines)`` for each function of ``root`` over ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    found.append(f"{path.name}:{node.lineno} {node.name} ({n} lines)")
    return found


def test_the_checker_sees_a_long_method(tmp_path: Path) -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(LIMIT - 1))
    head = "class C:\n    def short(self) -> None:\n        pass\n\n    def long(self) -> None:\n"
    (tmp_path / "m.py").write_text(head + body + "        pass\n")
    assert long_functions(tmp_path) == [f"m.py:5 long ({LIMIT + 1} lines)"]


def test_no_function_in_core_board_is_over_80_lines() -> None:
    assert BOARD.is_dir()
    assert long_functions(BOARD) == []
