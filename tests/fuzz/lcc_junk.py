"""Seeded generators of bad LiveChess Cloud documents (raw bytes, as a server sends them)."""

from __future__ import annotations

import json
import random
from typing import Any

GAME = ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be2", "e5"]

SPECIAL_NUMBERS = ["1e999", "-1e999", "NaN", "Infinity", "-5", "0", "1e308", "9" * 5000, "-0.0"]
SPECIAL_VALUES: list[Any] = [
    None,
    True,
    -1,
    10**100,
    float("inf"),
    float("nan"),
    "",
    "x" * 300,
    "²",
    "518",
    [],
    {},
    [[[[[]]]]],
    {"white": {"white": {}}},
]
GAME_KEYS = ["moves", "clock", "chess960", "result", "live", "serialNr", "comment"]


def valid_game(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(0, len(GAME))
    moves = [f"{san} {5400 - 7 * i}+{i % 5}" for i, san in enumerate(GAME[:n])]
    return {
        "live": True,
        "chess960": 518,
        "result": rng.choice([None, "WHITEWIN", "DRAW", "*"]),
        "clock": {"white": 5000, "black": 5100, "time": 1714470000000},
        "moves": moves,
    }


def random_value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 3 or r < 0.5:
        return rng.choice([*SPECIAL_VALUES, rng.randint(-(10**6), 10**7), rng.random() * 10000.0])
    if r < 0.75:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [*GAME_KEYS, "white", "black", "fname", "lname", "rating", "fideid", "x"]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def structured_junk(rng: random.Random) -> dict[str, Any]:
    """A game document with some fields replaced by values of any type."""
    doc = valid_game(rng)
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(GAME_KEYS)
        if key == "moves" and isinstance(doc["moves"], list) and doc["moves"]:
            i = rng.randrange(len(doc["moves"]))
            doc["moves"][i] = rng.choice(
                [random_value(rng), f"{GAME[i % len(GAME)]} {rng.choice(SPECIAL_NUMBERS)}"]
            )
        elif key == "clock" and isinstance(doc["clock"], dict):
            doc["clock"][rng.choice(["white", "black"])] = random_value(rng)
        else:
            doc[key] = random_value(rng)
    return doc


def mutate_bytes(rng: random.Random, body: bytes) -> bytes:
    """Text-level damage: special numbers, brackets, cuts, flipped bytes."""
    data = bytearray(body)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randint(0, len(data))
        r = rng.random()
        if r < 0.35:
            data[pos:pos] = rng.choice(SPECIAL_NUMBERS).encode()
        elif r < 0.5:
            data[pos:pos] = rng.choice([b"[", b"{", b'"', b"]", b"}", b",", b":"]) * rng.randint(
                1, 3
            )
        elif r < 0.65:
            del data[pos : pos + rng.randint(1, 20)]
        elif r < 0.8 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        else:
            data[pos:pos] = b"[" * 2000 + b"]" * 2000
    return bytes(data)


def junk_game_body(rng: random.Random) -> bytes:
    """One bad game file: structured junk, damaged text, or a wholly wrong document."""
    r = rng.random()
    if r < 0.45:
        return json.dumps(structured_junk(rng)).encode()  # NaN/Infinity allowed, as LCC might
    if r < 0.85:
        return mutate_bytes(rng, json.dumps(valid_game(rng)).encode())
    return json.dumps(random_value(rng)).encode()


def junk_pairing(rng: random.Random) -> Any:
    """A pairing whose players carry values of the wrong type or range."""
    player = {"fname": "Ann", "lname": "Junk", "title": "GM", "rating": 2500, "fideid": 12}
    for _ in range(rng.randint(1, 3)):
        player[rng.choice([*list(player), "mname", "federation"])] = random_value(rng)
    if rng.random() < 0.1:
        return random_value(rng)
    return {"white": player, "black": rng.choice([player, random_value(rng)]), "result": "*"}
