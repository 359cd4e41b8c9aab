"""Generate livegain/data/demo-round.pgn: a round of engine games for `livegain demo`.

Stockfish plays itself at a small node budget, at a different "Skill Level"
for each (fictional) player, from varied openings, so that the players'
gains, and so their perceived ratings, differ. Clocks are simulated
(90 min + 30 s per move) and written as ``[%clk]`` comments. One player
(``TIME_TROUBLE``: White on board 3) thinks long in the middlegame and falls
into time trouble (under 5 minutes, the classical threshold of
livegain.core.timeuse) around move 38, then plays on the increment, so that the
demo shows a time-trouble moment. Deterministic for a given seed and engine
build:

    .venv/bin/python bench/make_demo_games.py [--seed 2026] [--out livegain/data/demo-round.pgn]

``--retime`` only applies the time trouble to the games already in ``--out``
(the moves kept; no engine needed).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import chess
import chess.engine
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent

# (name, title, federation, rating, skill level): a club Open, ratings
# 1600-2150 by skill level, inside the range the shipped perceived-rating
# models are validated for (docs/validity.md)
PLAYERS = [
    ("Varga, Lenke", "FM", "HUN", 2150, 20),
    ("Okafor, Chidi", "CM", "NGR", 2050, 16),
    ("Lindqvist, Elin", "", "SWE", 1900, 12),
    ("Moreau, Bastien", "CM", "FRA", 2000, 15),
    ("Tanaka, Haruto", "", "JPN", 1750, 9),
    ("Rocha, Marina", "", "BRA", 1850, 11),
    ("Kowalczyk, Piotr", "FM", "POL", 2100, 18),
    ("Haddad, Yasmin", "", "LBN", 1700, 7),
    ("Ivanova, Darya", "WFM", "BUL", 1950, 14),
    ("Brennan, Liam", "", "IRL", 1800, 10),
    ("Achebe, Nkem", "", "ENG", 1650, 6),
    ("Szabo, Rita", "", "HUN", 1600, 5),
]

OPENINGS = [
    "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6",  # Sicilian Najdorf
    "d4 Nf6 c4 e6 Nc3 Bb4",  # Nimzo-Indian
    "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7",  # Ruy Lopez
    "c4 e5 Nc3 Nf6 g3 d5 cxd5 Nxd5",  # English, reversed Sicilian
    "d4 d5 c4 c6 Nf3 Nf6 Nc3 dxc4",  # Slav
    "e4 e6 d4 d5 Nc3 Bb4 e5 c5",  # French Winawer
]


INCREMENT = 30
# (board, colour, his move where the long thinks start, his move where he is
# under 5 minutes): White on board 3 spends his time from move 14 on and is in
# time trouble from move 38 on.
TIME_TROUBLE = (3, chess.WHITE, 14, 38)
TROUBLE_CLOCK = 270  # seconds left after the move that puts him in time trouble
LOW_CLOCK = (45, 295)  # where his clock stays afterwards


def clk(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def play(
    engine: chess.engine.SimpleEngine,
    rng: random.Random,
    white: tuple[str, str, str, int, int],
    black: tuple[str, str, str, int, int],
    opening: str,
    board_no: int,
    nodes: int,
    max_plies: int,
) -> chess.pgn.Game:
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = "livegain Demo Open 2026"
    h["Site"] = "Demo Hall"
    h["Date"] = "2026.03.14"
    h["Round"] = f"5.{board_no}"
    h["Board"] = str(board_no)
    for side, p in (("White", white), ("Black", black)):
        h[side] = p[0]
        if p[1]:
            h[f"{side}Title"] = p[1]
        h[f"{side}Elo"] = str(p[3])
        h[f"{side}Fed"] = p[2]
    h["TimeControl"] = "5400+30"
    h["GameId"] = f"demo-r5-b{board_no}"
    board = chess.Board()
    node: chess.pgn.GameNode = game
    clocks = {chess.WHITE: 5400.0, chess.BLACK: 5400.0}
    result = "*"
    for ply, san in enumerate(opening.split()):
        move = board.parse_san(san)
        spent = rng.uniform(3, 40)
        clocks[board.turn] = clocks[board.turn] - spent + 30
        node = node.add_variation(move)
        node.comment = f"[%clk {clk(clocks[board.turn])}]"
        board.push(move)
        del ply
    while not board.is_game_over(claim_draw=True) and board.ply() < max_plies:
        player = white if board.turn == chess.WHITE else black
        engine.configure({"Skill Level": player[4]})
        info = engine.play(board, chess.engine.Limit(nodes=nodes), info=chess.engine.INFO_SCORE)
        move = info.move
        assert move is not None
        mover = board.turn
        spent = rng.lognormvariate(4.0, 0.8)  # median ~55 s, long tail
        spent = min(spent, clocks[mover] - 5)
        clocks[mover] = clocks[mover] - spent + 30
        node = node.add_variation(move)
        node.comment = f"[%clk {clk(clocks[mover])}]"
        board.push(move)
        score = info.info.get("score")
        if score is not None:
            cp = score.white().score(mate_score=10000)
            if cp is not None and abs(cp) > 900 and board.ply() > 40:
                result = "1-0" if cp > 0 else "0-1"  # resignation
                break
    if board.is_game_over(claim_draw=True):
        result = board.result(claim_draw=True)
    elif result == "*":
        result = "1/2-1/2"  # agreed draw at the ply limit
    h["Result"] = result
    return game


def retime(game: chess.pgn.Game, color: chess.Color, start: int, trouble: int, seed: int) -> None:
    """Rewrite ``color``'s clocks from his move ``start`` on: long thinks until his
    move ``trouble``, after which his clock is ``TROUBLE_CLOCK``, then about the
    increment per move, his clock kept within ``LOW_CLOCK``."""
    rng = random.Random(seed)
    nodes = [n for n in game.mainline() if n.parent is not None and n.parent.turn() == color]
    if len(nodes) < trouble:
        raise ValueError(f"the game has {len(nodes)} moves of that side, fewer than {trouble}")
    clock = nodes[start - 2].clock() if start > 1 else 5400.0
    assert clock is not None
    weights = [rng.lognormvariate(0.0, 0.5) for _ in range(start, trouble + 1)]
    budget = clock + INCREMENT * len(weights) - TROUBLE_CLOCK
    for node, w in zip(nodes[start - 1 : trouble], weights, strict=True):
        clock = clock - budget * w / sum(weights) + INCREMENT
        node.comment = f"[%clk {clk(clock)}]"
    clock = float(TROUBLE_CLOCK)
    for node in nodes[trouble:]:
        spent = INCREMENT + rng.uniform(-10.0, 18.0)  # a little more than he gets
        clock = min(LOW_CLOCK[1], max(LOW_CLOCK[0], clock - spent + INCREMENT))
        node.comment = f"[%clk {clk(clock)}]"


def time_trouble(games: list[chess.pgn.Game], seed: int) -> None:
    board, color, start, trouble = TIME_TROUBLE
    retime(games[board - 1], color, start, trouble, seed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--boards", type=int, default=6)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--max-plies", type=int, default=120)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument("--out", type=Path, default=ROOT / "livegain" / "data" / "demo-round.pgn")
    ap.add_argument(
        "--retime", action="store_true", help="only apply the time trouble to --out's games"
    )
    args = ap.parse_args()
    if args.retime:
        with args.out.open() as f:
            games = []
            while (g := chess.pgn.read_game(f)) is not None:
                games.append(g)
        time_trouble(games, args.seed)
        args.out.write_text("\n\n".join(str(g) for g in games) + "\n")
        print(f"retimed {args.out}")
        return 0
    rng = random.Random(args.seed)
    players = PLAYERS[: 2 * args.boards]
    rng.shuffle(players)
    games = []
    with chess.engine.SimpleEngine.popen_uci(args.engine) as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        for b in range(args.boards):
            white, black = players[2 * b], players[2 * b + 1]
            opening = OPENINGS[b % len(OPENINGS)]
            games.append(
                play(engine, rng, white, black, opening, b + 1, args.nodes, args.max_plies)
            )
            print(f"board {b + 1}: {white[0]} - {black[0]} {games[-1].headers['Result']}")
    time_trouble(games, args.seed)
    text = "\n\n".join(str(g) for g in games) + "\n"
    args.out.write_text(text)
    print(f"wrote {args.out} ({len(games)} games)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
