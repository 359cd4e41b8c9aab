"""What a command prints: JSON on stdout for machines, readable tables for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported when a table is printed, not at start-up
    from rich.console import Console
    from rich.table import Table


def print_json(data: Any) -> None:
    """Print machine-readable JSON on stdout."""
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A readable table for people; numbers right-aligned."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(_cell(v) for v in row))
    return t


def show(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A heading line, then a readable table."""
    out = console()
    out.print(title, soft_wrap=True, markup=False)
    out.print(table(None, columns, rows))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return str(value)
