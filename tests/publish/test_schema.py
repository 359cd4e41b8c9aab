"""The committed JSON Schema files match the code; the guide's examples are valid."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from livegain.publish import schema

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "docs" / "protocol"


def test_committed_schema_files_match_the_code() -> None:
    for name, text in schema.json_schemas().items():
        path = PROTOCOL / name
        assert path.exists(), f"{path} missing: run python -m livegain.publish.schema"
        assert path.read_text() == text, f"{path} stale: run python -m livegain.publish.schema"
    assert schema.main([str(PROTOCOL), "--check"]) == 0


def test_check_reports_stale_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert schema.main([str(tmp_path), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert schema.main([str(tmp_path)]) == 0
    assert schema.main([str(tmp_path), "--check"]) == 0


def test_guide_examples_are_valid_messages() -> None:
    text = (PROTOCOL / "README.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 8
    server: TypeAdapter[object] = TypeAdapter(schema.ServerMessage)
    client: TypeAdapter[object] = TypeAdapter(schema.ClientMessage)
    kinds = set()
    for block in blocks:
        data = json.loads(block)
        kinds.add(data["type"])
        if data["type"] in (
            "subscribe",
            "unsubscribe",
            "ping",
            "list_boards",
            "subscribe_standings",
            "unsubscribe_standings",
        ):
            client.validate_python(data)
        else:
            server.validate_python(data)
    assert {"hello", "snapshot", "update", "subscribe", "error", "boards", "ping", "pong"} <= kinds
    assert {"boards_diff", "list_boards"} <= kinds
    assert {"subscribe_standings", "standings"} <= kinds
