"""`livegain serve` (not yet implemented)."""

from __future__ import annotations

import argparse
from typing import Any

from livegain.cli._common import CliError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("serve", help="(not yet implemented)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CliError("not yet implemented", exit_code=3)
