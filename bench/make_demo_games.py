"""Generate livegain/data/demo-round.pgn: a round of engine games for `livegain demo`.

Stockfish plays itself at a small node budget, at a different "Skill Level"
for each (fictional) player, from varied openings, so that the players'
gains, and so their perceived ratings, differ. Clocks are simulated
(90 min + 30 s per move) and written as ``[%clk]`` comments. One player
(``TIME_TROUBLE``: White on board 3) thinks long in the middlegame and falls
into time trouble (under 5 minutes, the classical threshold of
livegain.core.timeuse) around move 38, then plays on the increment, so that the
demo shows a time-trouble moment. The pairings follow from the seed; the
moves, and so the clocks, do not (Stockfish's Skill Level, below):

    .venv/bin/python bench/make_demo_games.py [--seed 2026] [--out livegain/data/demo-round.pgn]

``--retime`` only applies the time trouble to the games already in ``--out``
(the moves kept; no engine needed).

``--event`` writes the whole event instead, rounds 1-5 in one PGN file: rounds
1-4 played here the same way (no time trouble), paired by a Swiss system from
the results as they come, and round 5 the games of demo-round.pgn, copied
unchanged (``--round5``). It prints the crosstable:

    .venv/bin/python bench/make_demo_games.py --event --out livegain/data/demo-event.pgn

``--team`` writes the demo's team event instead (livegain/data/demo-team.pgn
by default): the livegain Demo Team Cup, four teams of four players (ratings
1600-2150 and skill levels as in the Open) in a round robin of 3 rounds, two
matches of 4 boards a round, the first-named team White on boards 1 and 3 of
its match, every game with its ``WhiteTeam``/``BlackTeam`` tags and a round's
boards numbered on from match to match (``Round`` "R.B", ``Board`` B). It
prints the matches and the team crosstable (match points and game points
after each round, the Olympiad's tie-breaks):

    nice .venv/bin/python bench/make_demo_games.py --team

Stockfish's own Skill Level draws its weaker moves from a generator seeded by
the clock, so that the same command plays other moves each run. ``--event``
and ``--team`` make that draw themselves, from ``--seed`` (``skill_move``),
and clear the engine's hash before each game, and so are deterministic for a
given seed and engine build, whatever ``--jobs`` (engines playing games at
once).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue
from typing import Any

import chess
import chess.engine
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
OPEN = "livegain Demo Open 2026"

# (name, title, federation, rating, skill level): a club Open, ratings
# 1600-2150 by skill level, inside the range the shipped perceived-rating
# models are validated for (docs/validity.md)
Player = tuple[str, str, str, int, int]
PLAYERS: list[Player] = [
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
    white: Player,
    black: Player,
    opening: str,
    board_no: int,
    nodes: int,
    max_plies: int,
    *,
    round_no: int = 5,
    date: str = "2026.03.14",
    seeded_skill: bool = False,
    event: str = OPEN,
    game_id: str = "demo",
) -> chess.pgn.Game:
    """One game. ``seeded_skill``: the players' Skill Level moves drawn from ``rng``
    (``skill_move``), not by Stockfish, and the engine's hash cleared first.
    ``game_id``: the ``GameId`` tag's prefix (the round and board follow)."""
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = event
    h["Site"] = "Demo Hall"
    h["Date"] = date
    h["Round"] = f"{round_no}.{board_no}"
    h["Board"] = str(board_no)
    for side, p in (("White", white), ("Black", black)):
        h[side] = p[0]
        if p[1]:
            h[f"{side}Title"] = p[1]
        h[f"{side}Elo"] = str(p[3])
        h[f"{side}Fed"] = p[2]
    h["TimeControl"] = "5400+30"
    h["GameId"] = f"{game_id}-r{round_no}-b{board_no}"
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
        if seeded_skill:
            move, score = skill_move(engine, board, player[4], nodes, rng, game)
        else:
            engine.configure({"Skill Level": player[4]})
            info = engine.play(board, chess.engine.Limit(nodes=nodes), info=chess.engine.INFO_SCORE)
            assert info.move is not None
            move, score = info.move, info.info.get("score")
        mover = board.turn
        spent = rng.lognormvariate(4.0, 0.8)  # median ~55 s, long tail
        spent = min(spent, clocks[mover] - 5)
        clocks[mover] = clocks[mover] - spent + 30
        node = node.add_variation(move)
        node.comment = f"[%clk {clk(clocks[mover])}]"
        board.push(move)
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


def skill_move(
    engine: chess.engine.SimpleEngine,
    board: chess.Board,
    level: int,
    nodes: int,
    rng: random.Random,
    game: object,
) -> tuple[chess.Move, chess.engine.PovScore | None]:
    """The move of a player of Skill Level ``level`` and the engine's score:
    Stockfish's own rule (search.cpp, ``Skill::pick_best``: a MultiPV 4 search to
    depth 1 + level, within ``nodes``, then each line's score pushed up by a
    part that grows with the weakness and a random one, the highest pushed
    score played), the random part drawn from ``rng``. Level 20: the best move."""
    if level >= 20:
        info = engine.analyse(board, chess.engine.Limit(nodes=nodes), game=game)
        return info["pv"][0], info.get("score")
    limit = chess.engine.Limit(nodes=nodes, depth=1 + level)
    lines = [
        i
        for i in engine.analyse(board, limit, multipv=4, game=game)
        if i.get("pv") and "score" in i
    ]
    lines.sort(key=lambda i: -i["score"].relative.score(mate_score=32000))
    scores = [i["score"].relative.score(mate_score=32000) for i in lines]
    top = scores[0]
    delta = min(top - scores[-1], 100)  # at most a pawn
    weakness = 120 - 2 * level
    best, best_score = lines[0]["pv"][0], None
    for line, s in zip(lines, scores, strict=True):
        push = (weakness * (top - s) + delta * rng.randrange(weakness)) // 128
        if best_score is None or s + push >= best_score:
            best, best_score = line["pv"][0], s + push
    return best, lines[0]["score"]


# --- The event (--event): rounds 1-4 paired here, round 5 demo-round.pgn's ---

ROUNDS_BEFORE = 4  # the rounds played here; demo-round.pgn is the one after
POINTS = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}  # half-points
Pair = tuple[int, int]  # (White, Black), indices into PLAYERS


def colours_ok(seq: str) -> bool:
    """A player's colours ("WBW..."): never one colour three times in a row, the
    colour difference (Whites - Blacks) within ±2 after every round."""
    diff = 0
    for i, c in enumerate(seq):
        diff += 1 if c == "W" else -1
        if abs(diff) > 2 or seq[max(0, i - 2) : i + 1] in ("WWW", "BBB"):
            return False
    return True


def preference(seq: str) -> tuple[str, int]:
    """The colour a player with colours ``seq`` is due and how strongly: 3
    (absolute: the same colour twice running, or a difference of 2), 2 (a
    difference of 1), 1 (mild: the other colour than last round's), 0 (none)."""
    if not seq:
        return "", 0
    diff = seq.count("W") - seq.count("B")
    other = "B" if seq[-1] == "W" else "W"
    if len(seq) >= 2 and seq[-1] == seq[-2]:
        return other, 3
    if diff:
        return ("B" if diff > 0 else "W"), 3 if abs(diff) >= 2 else 2
    return other, 1


def colour_options(a: int, b: int, colours: list[str], tails: list[str]) -> list[Pair]:
    """The allocations of a game between a and b that keep both players' colours
    valid, followed by ``tails`` (their colours in the rounds after, if known)."""
    return [
        (w, k)
        for w, k in ((a, b), (b, a))
        if colours_ok(colours[w] + "W" + tails[w]) and colours_ok(colours[k] + "B" + tails[k])
    ]


def allocate(a: int, b: int, colours: list[str], options: list[Pair]) -> Pair:
    """The colours of a game between a and b (a ranked higher), among ``options``:
    both players' preferences where they differ, else the stronger one's, else
    each the other colour than in the last round they had different ones, else
    the higher ranked player's."""
    if len(options) == 1:
        return options[0]
    (ca, sa), (cb, sb) = preference(colours[a]), preference(colours[b])
    if ca != cb:
        gets = (a, ca) if ca else (b, cb)
    elif sa != sb:
        gets = (a, ca) if sa > sb else (b, cb)
    else:
        gets = (a, ca)
        for x, y in zip(reversed(colours[a]), reversed(colours[b]), strict=True):
            if x != y:
                gets = (a, y)
                break
    p, c = gets
    q = b if p == a else a
    return (p, q) if c == "W" else (q, p)


def matchings(players: list[int], met: set[frozenset[int]]) -> Iterator[list[tuple[int, int]]]:
    """Every way to pair all of ``players`` with no pair of ``met`` again."""
    if not players:
        yield []
        return
    a, rest = players[0], players[1:]
    for i, b in enumerate(rest):
        if frozenset((a, b)) not in met:
            for m in matchings(rest[:i] + rest[i + 1 :], met):
                yield [(a, b), *m]


def completable(
    colours: list[str], met: set[frozenset[int]], round_no: int, last: list[str]
) -> bool:
    """Whether rounds ``round_no``..ROUNDS_BEFORE can still be paired: no rematch,
    valid colours, round 5's (``last``) included."""
    if round_no > ROUNDS_BEFORE:
        return True
    tails = last if round_no == ROUNDS_BEFORE else [""] * len(colours)

    def fill(free: list[int], cols: list[str], pairs: list[frozenset[int]]) -> bool:
        if not free:
            return completable(cols, met | set(pairs), round_no + 1, last)
        a = free[0]
        for b in free[1:]:
            if frozenset((a, b)) in met:
                continue
            rest = [p for p in free if p not in (a, b)]
            for w, k in colour_options(a, b, cols, tails):
                new = list(cols)
                new[w] += "W"
                new[k] += "B"
                if fill(rest, new, [*pairs, frozenset((a, b))]):
                    return True
        return False

    return fill(list(range(len(colours))), colours, [])


def pair_round(
    round_no: int, points: list[int], colours: list[str], met: set[frozenset[int]], last: list[str]
) -> list[Pair]:
    """A Swiss round's boards, (White, Black) each. The players ranked by points
    then rating; of all the pairings with no rematch (round 5's pairs counted as
    met) and valid colours that leave the rounds up to 5 pairable, the first by:
    the fewest games between different scores, then the smallest score
    differences (the floats), the fewest colour preferences missed, then, each
    player in rank order, the Dutch system's opponent: in a score group of n
    the player n/2 places down (round 1: top half against bottom half), the
    lowest of a group floating to the top of the next. Boards by the higher
    score, then the players' ranks; round 1's colours alternate by board."""
    n = len(points)
    rank = sorted(range(n), key=lambda p: (-points[p], -PLAYERS[p][3], PLAYERS[p][0]))
    pos = {p: i for i, p in enumerate(rank)}
    group = {p: [q for q in rank if points[q] == points[p]] for p in rank}
    tails = last if round_no == ROUNDS_BEFORE else [""] * n

    def deviation(a: int, b: int) -> int:  # a ranked above b
        ga, gb = group[a], group[b]
        if ga is gb or points[a] == points[b]:
            return abs(ga.index(b) - ga.index(a) - len(ga) // 2)
        return len(ga) - 1 - ga.index(a) + gb.index(b)

    candidates = []
    for m in matchings(rank, met):
        pairs = sorted(
            (min(a, b, key=pos.__getitem__), max(a, b, key=pos.__getitem__)) for a, b in m
        )
        pairs.sort(key=lambda ab: (-points[ab[0]], pos[ab[0]]))
        boards: list[Pair] = []
        for i, (a, b) in enumerate(pairs):
            options = colour_options(a, b, colours, tails)
            if not options:
                break
            if round_no == 1:
                boards.append((a, b) if i % 2 == 0 else (b, a))
            else:
                boards.append(allocate(a, b, colours, options))
        else:
            missed = [
                s
                for w, k in boards
                for p, c in ((w, "W"), (k, "B"))
                for want, s in [preference(colours[p])]
                if s and want != c
            ]
            dev = {p: deviation(a, b) for a, b in pairs for p in (a, b)}
            cost = (
                sum(points[a] != points[b] for a, b in pairs),
                sum((points[a] - points[b]) ** 2 for a, b in pairs),
                len(missed),
                sum(s >= 2 for s in missed),
                tuple(dev[p] for p in rank),
                tuple(pos[b] for a, b in pairs),
            )
            candidates.append((cost, boards))
    candidates.sort(key=lambda c: c[0])
    for _, boards in candidates:
        cols = list(colours)
        for w, k in boards:
            cols[w] += "W"
            cols[k] += "B"
        if completable(cols, met | {frozenset(b) for b in boards}, round_no + 1, last):
            return boards
    raise SystemExit(f"round {round_no} cannot be paired")


@contextlib.contextmanager
def engine_pool(path: str, jobs: int) -> Iterator[Queue[chess.engine.SimpleEngine]]:
    """``jobs`` engines, one game each at a time (taken from the queue, put back)."""
    engines: Queue[chess.engine.SimpleEngine] = Queue()
    try:
        for _ in range(jobs):
            engine = chess.engine.SimpleEngine.popen_uci(path)
            engine.configure({"Threads": 1, "Hash": 16, "Skill Level": 20})
            engines.put(engine)
        yield engines
    finally:
        while not engines.empty():
            engines.get().quit()


def seeded_game(
    engines: Queue[chess.engine.SimpleEngine],
    args: argparse.Namespace,
    seed: str,
    white: Player,
    black: Player,
    round_no: int,
    board_no: int,
    **kwargs: Any,
) -> chess.pgn.Game:
    """One game of ``--event`` or ``--team`` on an engine of the pool: its moves
    drawn from ``seed`` (``seeded_skill``), its opening by round and board."""
    engine = engines.get()
    try:
        return play(
            engine,
            random.Random(seed),
            white,
            black,
            OPENINGS[(board_no - 1 + round_no) % len(OPENINGS)],
            board_no,
            args.nodes,
            args.max_plies,
            round_no=round_no,
            seeded_skill=True,
            **kwargs,
        )
    finally:
        engines.put(engine)


def read_games(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open() as f:
        while (g := chess.pgn.read_game(f)) is not None:
            games.append(g)
    return games


def half_points(x: int) -> str:
    return ("" if x == 1 else str(x // 2)) + ("½" if x % 2 else "")


def crosstable(rounds: list[list[tuple[Pair, str]]]) -> str:
    """Each player's games (opponent's number, colour, result) and points after
    each round, the players numbered by rating, listed by final points."""
    n = len(PLAYERS)
    number = {p: i + 1 for i, p in enumerate(sorted(range(n), key=lambda p: -PLAYERS[p][3]))}
    cells: list[list[str]] = [[] for _ in range(n)]
    after: list[list[int]] = [[] for _ in range(n)]
    for games in rounds:
        for (w, k), result in games:
            for p, q, c, pts in ((w, k, "w", POINTS[result][0]), (k, w, "b", POINTS[result][1])):
                cells[p].append(f"{number[q]:>2}{c}{'0½1'[pts]}")
                after[p].append((after[p][-1] if after[p] else 0) + pts)
    r = range(1, len(rounds) + 1)
    head = f"{'No':>3}  {'Player':<18} {'Rtg':>4}  " + " ".join(f"{'R' + str(i):>4}" for i in r)
    head += "  | points after " + " ".join(f"{'R' + str(i):>3}" for i in r)
    rows = [head]
    for p in sorted(range(n), key=lambda p: (-after[p][-1], number[p])):
        row = f"{number[p]:>3}  {PLAYERS[p][0]:<18} {PLAYERS[p][3]:>4}  " + " ".join(cells[p])
        rows.append(row + "  |              " + " ".join(f"{half_points(x):>3}" for x in after[p]))
    return "\n".join(rows)


def event(args: argparse.Namespace) -> int:
    """--event: rounds 1-4 played and paired here, round 5 copied from --round5."""
    start = time.monotonic()
    index = {p[0]: i for i, p in enumerate(PLAYERS)}
    last_text = args.round5.read_text(encoding="utf-8")
    last_games = read_games(args.round5)
    last_pairs = [(index[g.headers["White"]], index[g.headers["Black"]]) for g in last_games]
    if sorted(p for pair in last_pairs for p in pair) != list(range(len(PLAYERS))):
        raise SystemExit(f"{args.round5}: not one game for each of the {len(PLAYERS)} players")
    h = last_games[0].headers
    if (h["Event"], h["Site"], h["Round"]) != (OPEN, "Demo Hall", "5.1"):
        raise SystemExit(f"{args.round5}: not round 5 of the demo event")
    day5 = datetime.datetime.strptime(h["Date"], "%Y.%m.%d").date()
    last = [""] * len(PLAYERS)
    for w, k in last_pairs:
        last[w], last[k] = "W", "B"
    met = {frozenset(pair) for pair in last_pairs}
    points = [0] * len(PLAYERS)
    colours = [""] * len(PLAYERS)
    rounds: list[list[tuple[Pair, str]]] = []
    games: list[chess.pgn.Game] = []

    def one(round_no: int, board_no: int, white: int, black: int) -> chess.pgn.Game:
        date = day5 - datetime.timedelta(days=5 - round_no)
        return seeded_game(
            engines,
            args,
            f"{args.seed}:{round_no}:{board_no}",
            PLAYERS[white],
            PLAYERS[black],
            round_no,
            board_no,
            date=date.strftime("%Y.%m.%d"),
        )

    with engine_pool(args.engine, args.jobs) as engines, ThreadPoolExecutor(args.jobs) as pool:
        for round_no in range(1, ROUNDS_BEFORE + 1):
            boards = pair_round(round_no, points, colours, met, last)
            played = list(
                pool.map(
                    one,
                    [round_no] * len(boards),
                    range(1, len(boards) + 1),
                    *zip(*boards, strict=True),
                )
            )
            rounds.append([])
            for (w, k), g in zip(boards, played, strict=True):
                result = g.headers["Result"]
                print(
                    f"round {round_no}.{g.headers['Board']}: {g.headers['White']} - "
                    f"{g.headers['Black']} {result} ({g.end().ply()} plies)"
                )
                points[w] += POINTS[result][0]
                points[k] += POINTS[result][1]
                colours[w] += "W"
                colours[k] += "B"
                met.add(frozenset((w, k)))
                rounds[-1].append(((w, k), result))
            games += played
    rounds.append(
        [(pair, g.headers["Result"]) for pair, g in zip(last_pairs, last_games, strict=True)]
    )
    text = "\n\n".join(str(g) for g in games) + "\n\n" + last_text.strip() + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(crosstable(rounds))
    print(
        f"wrote {args.out} ({len(games) + len(last_games)} games, {time.monotonic() - start:.0f} s)"
    )
    return 0


# --- The team event (--team): a 4-team round robin, 4 boards a match ---

TEAM_EVENT = "livegain Demo Team Cup 2026"
TEAM_DAY1 = datetime.date(2026, 4, 10)
SKILL = {p[3]: p[4] for p in PLAYERS}
"""The Open's Skill Level for each rating (1600-2150, 50 apart)."""


def member(name: str, title: str, federation: str, rating: int) -> Player:
    return (name, title, federation, rating, SKILL[rating])


# Four teams of four, board 1 first, ratings 1600-2150 as in the Open.
TEAMS: list[tuple[str, list[Player]]] = [
    (
        "Northgate Rooks",
        [
            member("Falk, Johanna", "FM", "GER", 2150),
            member("Mensah, Kwame", "", "GHA", 1950),
            member("Ortiz, Lucia", "", "ESP", 1800),
            member("Novak, Tomas", "", "CZE", 1700),
        ],
    ),
    (
        "Harbour Knights",
        [
            member("Keller, Anton", "FM", "SUI", 2100),
            member("Nair, Priya", "WFM", "IND", 2000),
            member("Dubois, Claire", "", "FRA", 1850),
            member("Park, Seoyeon", "", "KOR", 1650),
        ],
    ),
    (
        "Riverside Pawns",
        [
            member("Moura, Tiago", "CM", "POR", 2050),
            member("Berg, Ingrid", "", "NOR", 1900),
            member("Adeyemi, Tunde", "", "NGR", 1750),
            member("Walsh, Ciara", "", "IRL", 1650),
        ],
    ),
    (
        "Hilltop Bishops",
        [
            member("Horvat, Luka", "CM", "CRO", 2000),
            member("Sato, Emi", "", "JPN", 1900),
            member("Dlamini, Sipho", "", "RSA", 1800),
            member("Costa, Beatriz", "", "BRA", 1600),
        ],
    ),
]
# The Berger tables of 4 teams: each round's matches, the first-named team
# (White on boards 1 and 3 of the match) first.
TEAM_ROUNDS: list[list[tuple[int, int]]] = [[(0, 3), (1, 2)], [(3, 2), (0, 1)], [(1, 3), (2, 0)]]


def team_boards(a: int, b: int) -> list[tuple[Player, Player, str, str]]:
    """A match's boards, (White, Black, White's team, Black's team) each: team
    ``a`` White on boards 1 and 3, Black on 2 and 4."""
    (ta, pa), (tb, pb) = TEAMS[a], TEAMS[b]
    return [
        (pa[i], pb[i], ta, tb) if i % 2 == 0 else (pb[i], pa[i], tb, ta) for i in range(len(pa))
    ]


def team_crosstable(games: list[chess.pgn.Game]) -> str:
    """The matches round by round, the game points each team scored against each
    other (a match won ``+``, drawn ``=``, lost ``-``), and the standings after
    each round (match points, game points, the Olympiad's tie-breaks:
    livegain.core.team_standings)."""
    from livegain.core.team_standings import TeamGame, TeamStandings, team_matches

    played = [
        TeamGame(
            int(g.headers["Round"].split(".")[0]),
            g.headers["WhiteTeam"],
            g.headers["BlackTeam"],
            g.headers["Result"],
        )
        for g in games
    ]
    matches = team_matches(played)
    names = [t for t, _ in TEAMS]
    width = max(len(t) for t in names)
    lines = []
    for m in matches:
        lines.append(
            f"round {m.round}: {m.a:<{width}} {half_points(round(2 * m.points_a)):>2} - "
            f"{half_points(round(2 * m.points_b)):<2} {m.b}"
        )
    cell: dict[tuple[str, str], str] = {}
    for m in matches:
        for x, y, px, py in (
            (m.a, m.b, m.points_a, m.points_b),
            (m.b, m.a, m.points_b, m.points_a),
        ):
            sign = "+" if px > py else "=" if px == py else "-"
            cell[x, y] = f"{half_points(round(2 * px))}{sign}"
    lines.append("")
    head = f"{'No':>3}  {'Team':<{width}} " + " ".join(f"{n:>4}" for n in range(1, len(names) + 1))
    last = max(m.round for m in matches)
    head += "  | MP, GP after " + " ".join(f"{'R' + str(r):>7}" for r in range(1, last + 1))
    lines.append(head)
    after = [
        TeamStandings.from_matches([m for m in matches if m.round <= r]) for r in range(1, last + 1)
    ]
    for row in after[-1].rows:
        i = names.index(row.team)
        cells = " ".join(f"{cell.get((row.team, o), '*'):>4}" for o in names)
        totals = " ".join(
            f"{half_points(round(2 * s.row(row.team).match_points)):>3} "
            f"{half_points(round(2 * s.row(row.team).game_points)):>3}"
            for s in after
        )
        lines.append(f"{i + 1:>3}  {row.team:<{width}} {cells}  |              {totals}")
    for r, st in enumerate(after, 1):
        ranked = "; ".join(
            f"{row.rank}. {row.team} "
            + ", ".join(f"{n} {v:g}" for n, v in zip(st.tiebreaks, row.tiebreaks, strict=True))
            for row in st.rows
        )
        lines.append(f"ranked after round {r}: {ranked}")
    return "\n".join(lines)


def team(args: argparse.Namespace) -> int:
    """--team: the team event, every round played here."""
    start = time.monotonic()
    jobs = []
    for round_no, matches in enumerate(TEAM_ROUNDS, 1):
        date = (TEAM_DAY1 + datetime.timedelta(days=round_no - 1)).strftime("%Y.%m.%d")
        board_no = 0
        for a, b in matches:
            for white, black, wt, bt in team_boards(a, b):
                board_no += 1  # the boards of a round numbered on, match after match
                jobs.append((round_no, board_no, white, black, wt, bt, date))

    def one(
        round_no: int, board_no: int, white: Player, black: Player, wt: str, bt: str, date: str
    ) -> chess.pgn.Game:
        g = seeded_game(
            engines,
            args,
            f"{args.seed}:team:{round_no}:{board_no}",
            white,
            black,
            round_no,
            board_no,
            date=date,
            event=TEAM_EVENT,
            game_id="demo-team",
        )
        g.headers["WhiteTeam"], g.headers["BlackTeam"] = wt, bt
        return g

    with engine_pool(args.engine, args.jobs) as engines, ThreadPoolExecutor(args.jobs) as pool:
        games = list(pool.map(one, *zip(*jobs, strict=True)))
    for g in games:
        h = g.headers
        print(
            f"round {h['Round']}: {h['White']} ({h['WhiteTeam']}) - {h['Black']} "
            f"({h['BlackTeam']}) {h['Result']} ({g.end().ply()} plies)"
        )
    args.out.write_text("\n\n".join(str(g) for g in games) + "\n", encoding="utf-8")
    print(team_crosstable(games))
    print(f"wrote {args.out} ({len(games)} games, {time.monotonic() - start:.0f} s)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--boards", type=int, default=6)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--max-plies", type=int, default=120)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument(
        "--out",
        type=Path,
        help="the PGN written (default livegain/data/demo-round.pgn; --team: demo-team.pgn)",
    )
    ap.add_argument(
        "--retime", action="store_true", help="only apply the time trouble to --out's games"
    )
    ap.add_argument(
        "--event",
        action="store_true",
        help="write rounds 1-5 of the event to --out: rounds 1-4 played here, round 5 --round5's",
    )
    ap.add_argument("--round5", type=Path, default=ROOT / "livegain" / "data" / "demo-round.pgn")
    ap.add_argument(
        "--team",
        action="store_true",
        help="write the team event (4 teams, a round robin of 3 rounds) to --out",
    )
    ap.add_argument("--jobs", type=int, default=2, help="--event, --team: engines playing at once")
    args = ap.parse_args()
    if args.team and (args.event or args.retime):
        ap.error("--team writes the team event alone: not with --event or --retime")
    if args.out is None:
        args.out = ROOT / "livegain" / "data" / ("demo-team.pgn" if args.team else "demo-round.pgn")
    if args.team:
        return team(args)
    if args.event:
        if args.out.resolve() == args.round5.resolve():
            ap.error("--event needs an --out other than --round5 (livegain/data/demo-event.pgn)")
        return event(args)
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
