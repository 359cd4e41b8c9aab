"""The service picks each board's models: the human win/draw/loss model by
kind of game (configured per feed or event, else the game's TimeControl tag,
else classical over the board) and the perceived-rating model by rating scale
(per feed or event, else FIDE), and says which and why in /healthz."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import chess
from toy_human import forward_model, toy_prior, toy_wdl_model

from livegain.app.service import Service
from livegain.core.evaluation import Evaluation
from livegain.models.perceived import store_perceived_model
from livegain.models.wdl import store_wdl

from .conftest import running, settings_for

ENGINE = {"evals": "engine", "engine": "Material", "limit": "depth 6"}


class Material:
    """A material count: the engine, without a process (no W/D/L of its own)."""

    engine_key = "material"
    engine_name = "Material"

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        await asyncio.sleep(0.001)
        cp = sum(
            {1: 100, 2: 300, 3: 300, 4: 500, 5: 900}.get(p.piece_type, 0)
            * (1 if p.color == chess.WHITE else -1)
            for p in board.piece_map().values()
        )
        return Evaluation(cp=cp, depth=6)

    def describe(self) -> str:
        return "Material depth 6"


def game(white: str, black: str, board: int, tc: str | None = None) -> str:
    tags = [
        '[Event "Open"]',
        '[Round "1"]',
        f'[Board "{board}"]',
        f'[White "{white}"]',
        f'[Black "{black}"]',
        '[WhiteElo "2450"]',
        '[BlackElo "2380"]',
        '[Result "*"]',
    ]
    if tc is not None:
        tags.append(f'[TimeControl "{tc}"]')
    moves = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 *"
    return "\n".join(tags) + "\n\n" + moves + "\n\n"


def model_files(tmp: Path) -> tuple[Path, Path]:
    wdl = tmp / "wdl.toml"
    for kind, name in (("classical-otb", "otb-human"), ("online-rapid", "rapid-human")):
        m = dataclasses.replace(toy_wdl_model(kind, name), provenance=dict(ENGINE))
        store_wdl(toy_prior(kind), m, wdl)
    perceived = tmp / "perceived.toml"
    fide = dataclasses.replace(forward_model("fide-toy"), provenance=dict(ENGINE))
    lichess = dataclasses.replace(
        forward_model("lichess-toy"), scale="lichess", provenance=dict(ENGINE)
    )
    store_perceived_model(fide, perceived)
    store_perceived_model(lichess, perceived)
    return wdl, perceived


def get(service: Service, path: str) -> Any:
    with urllib.request.urlopen(f"{service.url}{path}", timeout=5) as r:
        return json.loads(r.read())


async def test_models_per_feed_and_time_control(tmp_path: Path) -> None:
    wdl, perceived = model_files(tmp_path)
    otb = tmp_path / "otb.pgn"
    blitz = game("Gamma, Gil", "Delta, Dan", 2, "180+2")
    otb.write_text(game("Alpha, Ann", "Beta, Bob", 1) + blitz)
    online = tmp_path / "online.pgn"
    online.write_text(game("Eps, Eve", "Zeta, Zoe", 3))
    settings = settings_for(
        tmp_path,
        engine={"wdl_model": str(wdl), "perceived_model": str(perceived)},
        persist=False,
        feeds=[
            {"type": "file", "name": "otb", "path": str(otb), "interval": 0.1},
            {
                "type": "file",
                "name": "online",
                "path": str(online),
                "interval": 0.1,
                "kind": "online-rapid",
                "scale": "lichess",
            },
        ],
    )
    assert settings.feed_models_of(1).kind == "online-rapid"
    service = Service(settings, evaluator=Material())
    async with running(service):
        async with asyncio.timeout(30):
            while True:
                detail = await asyncio.to_thread(get, service, "healthz/boards")
                boards = detail["board_status"]
                if len(boards) == 3 and all(b["evaluated"] == 14 for b in boards.values()):
                    break
                await asyncio.sleep(0.05)
        by_white = {}
        for bid in boards:
            state = await asyncio.to_thread(get, service, f"api/boards/{urllib.parse.quote(bid)}")
            by_white[state["white"]["name"]] = (bid, state)
        health = await asyncio.to_thread(get, service, "healthz")
    # over the board, no TimeControl: classical, FIDE scale, the model fitted for it
    bid, st = by_white["Alpha, Ann"]
    assert st["eval"]["wdl_model"] == "otb-human" and st["eval"]["wdl_fallback"] is False
    assert st["eval"]["engine_wdl"] is None and st["eval"]["wdl"] is not None
    assert all(m["eval"]["wdl_model"] == "otb-human" for m in st["moves"])
    assert st["white_perceived"]["model"] == "fide-toy"
    assert st["white_perceived"]["scale"] == "fide"
    assert st["white_form"] is not None and st["white_form"]["model"] == "fide-toy"
    assert boards[bid]["wdl_model"] == "otb-human" and not boards[bid]["wdl_fallback"]
    # a blitz TimeControl: the nearer fitted kind (rapid), said to be a fallback
    bid, st = by_white["Gamma, Gil"]
    assert st["eval"]["wdl_model"] == "rapid-human" and st["eval"]["wdl_fallback"] is True
    assert "TimeControl 180+2" in boards[bid]["wdl_why"]
    # the online feed: its configured kind and scale
    bid, st = by_white["Eps, Eve"]
    assert st["eval"]["wdl_model"] == "rapid-human" and st["eval"]["wdl_fallback"] is False
    assert st["white_perceived"]["model"] == "lichess-toy"
    assert st["white_perceived"]["scale"] == "lichess"
    # /healthz names each kind's and scale's model and why
    assert health["wdl_model"]["model"] == "otb-human"
    assert health["wdl_models"]["online-rapid"]["model"] == "rapid-human"
    assert "rapid-human" in health["wdl_models"]["online-rapid"]["why"]
    assert health["perceived_models"]["lichess"]["model"] == "lichess-toy"
    assert health["perceived_model"]["model"] == "fide-toy"


async def test_without_a_wdl_model_the_engine_s_chances_are_shown(tmp_path: Path) -> None:
    pgn = tmp_path / "otb.pgn"
    pgn.write_text(game("Alpha, Ann", "Beta, Bob", 1))
    settings = settings_for(
        tmp_path,
        engine={"wdl_model": str(tmp_path / "none.toml")},
        persist=False,
        feeds=[{"type": "file", "name": "otb", "path": str(pgn), "interval": 0.1}],
    )
    service = Service(settings, evaluator=Material())
    async with running(service):
        async with asyncio.timeout(30):
            while True:
                detail = await asyncio.to_thread(get, service, "healthz/boards")
                boards = detail["board_status"]
                if boards and all(b["evaluated"] == 14 for b in boards.values()):
                    break
                await asyncio.sleep(0.05)
        (bid,) = boards
        state = await asyncio.to_thread(get, service, f"api/boards/{urllib.parse.quote(bid)}")
        health = await asyncio.to_thread(get, service, "healthz")
    assert health["wdl_model"]["model"] is None
    assert "no human W/D/L model" in health["wdl_model"]["why"]
    assert state["eval"]["wdl_model"] is None and state["eval"]["wdl"] is not None
    assert "engine's own" in service.wdl_model_line()
