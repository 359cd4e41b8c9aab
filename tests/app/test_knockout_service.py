"""A knockout through the whole service: the boards of a semi-final round
(one match decided in its classical games, the other in its rapid
tie-break with a game in progress) give the event's standings message a
``knockout`` part whose chances are the ones worked by hand here."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from livegain.core.human_wdl import CLASSICAL_OTB
from livegain.engine.pool import EnginePool
from livegain.models.wdl import load_wdl_file

from .conftest import relayed_event

EVENT = "Knockout Test Cup"
MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
DRAWN = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7"
SLOW = "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6"
RATING = {"Ann": 2700, "Bob": 2600, "Cy": 2650, "Dan": 2550}


def game(rnd: str, white: str, black: str, moves: str, result: str) -> str:
    """One game's PGN, with a GameId as broadcasts give (a pair's games of one
    round are told apart by it: docs/standings.md §8)."""
    return (
        f'[Event "{EVENT}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[GameId "{white}-{black}-{rnd}"]\n'
        f'[WhiteElo "{RATING[white]}"]\n[BlackElo "{RATING[black]}"]\n'
        f'[Result "{result}"]\n\n{moves} {result}\n\n'
    )


# Semi-final 1: Ann beats Bob 1.5-0.5 in the classical games. Semi-final 2:
# Cy and Dan 1-1 in the classical games, Cy wins rapid game 3, game 4 (Dan
# White) going on.
PGN = (
    game("1.1", "Ann", "Bob", MATE, "1-0")
    + game("1.2", "Bob", "Ann", DRAWN, "1/2-1/2")
    + game("1.1", "Cy", "Dan", DRAWN, "1/2-1/2")
    + game("1.2", "Dan", "Cy", DRAWN, "1/2-1/2")
    + game("1.3", "Cy", "Dan", MATE, "1-0")
    + game("1.4", "Dan", "Cy", SLOW, "*")
)
STAGES = [
    {"name": "classical", "games": 2},
    {"name": "rapid", "games": 2},
    {"name": "Armageddon", "games": 1, "armageddon": True},
]


def two_games(first: tuple[float, ...], second: tuple[float, ...]) -> tuple[float, float]:
    """(ahead, level) of A after two games, each (win, draw, loss) from A's view."""
    w1, d1, l1 = first
    w2, d2, l2 = second
    ahead = w1 * (w2 + d2) + d1 * w2
    level = w1 * l2 + d1 * d2 + l1 * w2
    return ahead, level


def mini_match(a: str, b: str) -> float:
    """A beats B in a match not started: classical 2, rapid 2 (colours by lot in
    each), then the Armageddon (colours by lot; a draw sends Black through)."""
    prior = next(p for p in load_wdl_file()[0] if p.kind == CLASSICAL_OTB)
    white = prior.probabilities(RATING[a], RATING[b])  # A with White
    w, d, lo = prior.probabilities(RATING[b], RATING[a])
    black = (lo, d, w)  # A with Black, A's view
    one, two = two_games(white, black), two_games(black, white)
    ahead, level = (one[0] + two[0]) / 2, (one[1] + two[1]) / 2
    armageddon = 0.5 * white[0] + 0.5 * (black[0] + black[1])
    return ahead + level * (ahead + level * armageddon)


@pytest.mark.engine
async def test_a_knockout_round_gives_matches_and_a_bracket(
    tmp_path: Path, pool: EnginePool
) -> None:
    events = [{"name": EVENT, "format": "knockout", "kind": CLASSICAL_OTB, "stages": STAGES}]
    async with relayed_event(tmp_path, pool, PGN, events) as (replay, _service, ws):
        await replay.advance_all()

        def ready(m: dict[str, Any]) -> bool:
            ko = m.get("knockout")
            if ko is None or m["finished"] != 5 or len(ko["matches"]) != 2:
                return False
            live = [g for g in ko["matches"][1]["games"] if g["live"]]
            return bool(live) and live[0]["wdl"] is not None

        async with asyncio.timeout(60):
            while True:
                msg = json.loads(await ws.recv())
                if msg["type"] == "standings" and ready(msg):
                    break
        assert msg["format"] == "knockout"
        ko = msg["knockout"]
        assert ko["round"] == 1 and ko["rounds"] == [1, 2]
        first, second = ko["matches"]
        assert (first["a"], first["b"], first["winner"]) == ("Ann", "Bob", "Ann")
        assert (first["stage"], first["through_a"]) == ("classical", 1.0)
        assert [(s["name"], s["score_a"], s["score_b"]) for s in first["stages"]] == [
            ("classical", 1.5, 0.5)
        ]
        assert (second["a"], second["b"], second["stage"], second["winner"]) == (
            "Cy",
            "Dan",
            "rapid",
            None,
        )
        assert [(s["name"], s["played"], s["score_a"], s["score_b"]) for s in second["stages"]] == [
            ("classical", 2, 1.0, 1.0),
            ("rapid", 1, 1.0, 0.0),
        ]
        (live,) = [g for g in second["games"] if g["live"]]
        assert (live["game"], live["white"], live["a_white"]) == (4, "Dan", False)
        # Cy goes through unless Dan wins game 4; then the Armageddon (lot)
        dan_wins = live["wdl"][0] / 1000
        prior = next(p for p in load_wdl_file()[0] if p.kind == CLASSICAL_OTB)
        cy_white = prior.probabilities(RATING["Cy"], RATING["Dan"])
        dan_white = prior.probabilities(RATING["Dan"], RATING["Cy"])
        armageddon = 0.5 * cy_white[0] + 0.5 * (dan_white[2] + dan_white[1])
        cy = 1 - dan_wins + dan_wins * armageddon
        assert second["through_a"] == pytest.approx(cy, abs=1e-3)
        assert second["through_a"] + second["through_b"] == pytest.approx(1.0, abs=1e-4)
        assert second["reach"] == [{"stage": "Armageddon", "p": pytest.approx(dan_wins, abs=1e-3)}]
        # the bracket: Bob is out; the final from the ratings
        wins = {r["name"]: r["win"] for r in ko["bracket"]}
        assert set(wins) == {"Ann", "Cy", "Dan"}
        ann = cy * mini_match("Ann", "Cy") + (1 - cy) * mini_match("Ann", "Dan")
        assert wins["Ann"] == pytest.approx(ann, abs=1e-3)
        assert wins["Cy"] == pytest.approx(cy * (1 - mini_match("Ann", "Cy")), abs=1e-3)
        assert wins["Dan"] == pytest.approx((1 - cy) * (1 - mini_match("Ann", "Dan")), abs=1e-3)
        ann_row = next(r for r in ko["bracket"] if r["name"] == "Ann")
        assert ann_row["round"] == 2 and ann_row["reach"] == []
        # the standings rows: points, no simulated odds
        assert all(r["win"] is None for r in msg["rows"]) and msg["sims"] == 0
