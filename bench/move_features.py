"""Reading more from each move: multi-PV evaluations and a first ablation.

The steps, each its own subcommand:

``evaluate``: every position of the held-out FIDE games (by default
``fide-otb-dev-d10``; :func:`livegain.batch.validity.split_part`), in the
fixed pseudo-random order of ``livegain validate --games``
(:func:`~livegain.batch.validity.sample_order`), searched by Stockfish with
MultiPV 3 at depth 10 (Threads 1, Hash 16, ``ucinewgame`` before every
position, as the pool searches), into an SQLite file: each position's
candidate lines (move, score from the side to move, mate), and each game once
all its positions are in. Resumable: a rerun skips the positions and games
already there, so it can be stopped and restarted at will. Run it in the
background at the lowest priority (the machine is shared)::

    nice -n 19 .venv/bin/python bench/move_features.py evaluate \\
        --cache /tmp/lg-fide-mpv3-d10.sqlite --workers 2 --games 600

``ablate``: the games the cache holds whole, player-game features
(:mod:`livegain.batch.move_features`), a ridge regression of the rating on
them fitted on part of the games (split by event) and measured on the rest:
Spearman and MAE against the constant guess, for today's perceived rating
(the shipped model read on the file's own depth-10 annotations, as
``livegain validate`` computes it), today's features, each new feature added
alone, all of them; and a learning curve::

    .venv/bin/python bench/move_features.py ablate --cache /tmp/lg-fide-mpv3-d10.sqlite

``--perceived cache`` reads today's perceived rating from the cache's best
lines instead of the file's annotations (the service's view at the cache's
engine and depth, with the model the service picks for it), ``--perceived
PATH`` from another cache's (a multi-PV search's best line is not a
single-line search's value: e.g. the service's own cache at the same depth); ``--priors
FILE`` adds the opening prior of each player-game
(``bench/opening_prior.py --write-priors``). The same steps run on the
lichess file (``--pgn``; a lichess game is its own split group). ``--cache``
may also be the service's own evaluation cache (``livegain validate --evals
engine --cache FILE``): one line per position, read as a MultiPV 1 cache. At
the service's settings, one line at depth 12::

    nice -n 19 .venv/bin/livegain validate \\
        ../shared/data/lichess-rapid/lichess-rapid-dev.pgn.gz --evals engine \\
        --depth 12 --workers 2 --games 700 --cache /tmp/lg-lichess-d12.sqlite
    .venv/bin/python bench/opening_prior.py --data lichess --plies 12 \\
        --write-priors /tmp/lichess-priors-k12.json
    .venv/bin/python bench/move_features.py ablate \\
        --pgn ../shared/data/lichess-rapid/lichess-rapid-dev.pgn.gz \\
        --cache /tmp/lg-lichess-d12.sqlite --perceived cache \\
        --priors /tmp/lichess-priors-k12.json

``compare``: two caches (e.g. MultiPV 3 at depth 10 and one line at depth
16, ``evaluate --depth 16 --multipv 1``) read over the games both hold whole,
with the same splits and regressions: the sets a single line can feed, from
each, and their paired difference split by split::

    .venv/bin/python bench/move_features.py compare \\
        --cache /tmp/lg-fide-mpv3-d10.sqlite --against /tmp/lg-fide-mpv1-d16.sqlite

``combine``: the candidates of one cache (MultiPV 3 at depth 10) and the
losses of a deeper one (one line at depth 16) read together, over the games
both hold whole: whether the two gains add, the depth shift (how far the
positions' values move between the two depths), a learning curve::

    .venv/bin/python bench/move_features.py combine \\
        --cache /tmp/lg-fide-mpv3-d10.sqlite --deep /tmp/lg-fide-mpv1-d16.sqlite

Prints figures; asserts nothing. Skips (exit 0, a message) when the shared
data are absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.engine
import chess.pgn
import numpy as np
from scipy.stats import spearmanr

from livegain.batch.annotated import AnnotatedGame
from livegain.batch.engine_analysis import annotate, game_positions
from livegain.batch.move_features import MoveRecord, fit_temperature, move_features, move_records
from livegain.batch.validity import game_key, player_game_key, sample_order, split_part
from livegain.core.perceived import CLASS_CLIP_CP

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/fide-otb/fide-otb-dev-d10.pgn.gz"
ENGINE = "/usr/games/stockfish"
MULTIPV = 3
DEPTH = 10
HASH_MB = 16


# ---------------------------------------------------------------------------
# the cache


class MultiPvCache:
    """SQLite: ``positions(fen, lines)`` with ``lines`` a JSON list of
    ``[uci, cp, mate]`` (cp from the side to move, a mate +/-3900), best
    first; ``games(key)`` for each game whose positions are all in; ``meta``
    the engine and settings (a file is never reused for other settings)."""

    def __init__(self, path: str, engine_key: str) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS positions (fen TEXT PRIMARY KEY, lines TEXT) WITHOUT ROWID"
        )
        self.db.execute("CREATE TABLE IF NOT EXISTS games (key TEXT PRIMARY KEY, n INTEGER)")
        row = self.db.execute("SELECT v FROM meta WHERE k = 'engine'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('engine', ?)", (engine_key,))
            self.db.commit()
        elif engine_key and row[0] != engine_key:
            raise SystemExit(f"{path}: holds {row[0]!r}, not {engine_key!r}")

    @property
    def setting(self) -> tuple[str, str]:
        """(engine, limit) the file was searched with, e.g. ("Stockfish
        15.1", "depth 12")."""
        row = self.db.execute("SELECT v FROM meta WHERE k = 'engine'").fetchone()
        engine, limit, *_ = str(row[0]).split("|")
        return engine, limit

    @property
    def setting_depth(self) -> int:
        return int(self.setting[1].removeprefix("depth "))

    def lines(self, fen: str) -> list[tuple[str, int, int | None]] | None:
        row = self.db.execute("SELECT lines FROM positions WHERE fen = ?", (fen,)).fetchone()
        return None if row is None else [tuple(x) for x in json.loads(row[0])]

    def has(self, fen: str) -> bool:
        return (
            self.db.execute("SELECT 1 FROM positions WHERE fen = ?", (fen,)).fetchone() is not None
        )

    def put(self, fen: str, lines: list[tuple[str, int, int | None]]) -> None:
        self.db.execute("INSERT OR REPLACE INTO positions VALUES (?, ?)", (fen, json.dumps(lines)))

    def done_games(self) -> set[str]:
        return {k for (k,) in self.db.execute("SELECT key FROM games")}

    def mark(self, key: str, n: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO games VALUES (?, ?)", (key, n))
        self.db.commit()


class EvalTableCache:
    """The service's own evaluation cache (``livegain validate --evals engine
    --cache FILE``, :mod:`livegain.engine.eval_table`) read as a one-line
    :class:`MultiPvCache`: each position's best move and its score from the
    side to move. Holds one engine key (the first there, by name)."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path)
        row = self.db.execute("SELECT MIN(engine) FROM evals").fetchone()
        if row is None or row[0] is None:
            raise SystemExit(f"{path}: no evaluation kept")
        self.engine_key = str(row[0])

    @property
    def setting(self) -> tuple[str, str]:
        engine, limit, *_ = self.engine_key.split("|")
        return engine, limit

    @property
    def setting_depth(self) -> int:
        return int(self.setting[1].removeprefix("depth "))

    def lines(self, fen: str) -> list[tuple[str, int, int | None]] | None:
        row = self.db.execute(
            "SELECT cp, mate, best FROM evals WHERE engine = ? AND fen = ?", (self.engine_key, fen)
        ).fetchone()
        if row is None:
            return None
        cp, mate, best = row  # White's view
        sign = 1 if fen.split()[1] == "w" else -1
        return [(best or "", sign * cp, None if mate is None else sign * mate)]

    def done_games(self) -> None:
        """None: which games are whole is known only by reading them."""
        return None


Cache = MultiPvCache | EvalTableCache


def open_cache(path: str) -> Cache:
    """The bench's multi-PV cache, or the service's evaluation cache."""
    db = sqlite3.connect(path)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    return EvalTableCache(path) if "evals" in tables else MultiPvCache(path, "")


def game_id(game: chess.pgn.Game) -> str:
    """A game's identity in the cache: its tags and its moves' count."""
    h = game.headers
    tags = ("Event", "Site", "Date", "Round", "White", "Black", "Result", "PlyCount")
    return "|".join(h.get(k, "?") for k in tags)


def held_out_games(path: Path) -> list[chess.pgn.Game]:
    """The held-out games of the file, in the fixed sample order."""
    from livegain.batch.pgnio import read_pgn_games

    games = [g for g in read_pgn_games(path) if split_part(dict(g.headers)) == "held-out"]
    return sorted(games, key=lambda g: sample_order(dict(g.headers)))


# ---------------------------------------------------------------------------
# evaluate


def search_lines(
    engine: chess.engine.SimpleEngine, board: chess.Board, depth: int, multipv: int
) -> list[tuple[str, int, int | None]]:
    """The candidate lines of one position, best first: (move, cp from the
    side to move clipped to +/-3900, mate or None)."""
    infos = engine.analyse(board, chess.engine.Limit(depth=depth), multipv=multipv, game=object())
    out: list[tuple[str, int, int | None]] = []
    for info in infos:
        pv = info.get("pv")
        score = info.get("score")
        if not pv or score is None:
            continue
        rel = score.relative
        mate = rel.mate()
        cp = (3900 if mate > 0 else -3900) if mate is not None else rel.score()
        assert cp is not None
        out.append((pv[0].uci(), max(-3900, min(3900, cp)), mate))
    return out


def to_search(game: chess.pgn.Game) -> list[tuple[str, chess.Board]]:
    """(FEN, board) of every position of a game that the rules do not score
    and that has a move to play: those whose candidates are needed."""
    pos = game_positions(game)
    return [
        (f, b)
        for f, b, r in zip(pos.fens, pos.boards, pos.ruled, strict=True)
        if r is None and not b.is_game_over()
    ]


def run_evaluate(args: argparse.Namespace) -> None:
    games = held_out_games(Path(args.pgn))[: args.games]
    probe = chess.engine.SimpleEngine.popen_uci(args.engine)
    name = str(probe.id.get("name", args.engine))
    probe.quit()
    key = f"{name}|depth {args.depth}|multipv {args.multipv}|hash={HASH_MB}|threads=1"
    cache = MultiPvCache(args.cache, key)
    done = cache.done_games()
    todo = [g for g in games if game_id(g) not in done]
    print(
        f"{key}: {len(games)} held-out games chosen, {len(games) - len(todo)} cached, "
        f"{len(todo)} to search; {args.workers} workers, nice {os.nice(0)}",
        flush=True,
    )
    jobs: queue.Queue[tuple[int, list[tuple[str, chess.Board]]] | None] = queue.Queue()
    results: queue.Queue[tuple[int, str, list[tuple[str, int, int | None]]] | None] = queue.Queue()

    def worker() -> None:
        with chess.engine.SimpleEngine.popen_uci(args.engine) as engine:
            engine.configure({"Threads": 1, "Hash": HASH_MB})
            while (job := jobs.get()) is not None:
                k, positions = job
                for fen, board in positions:
                    results.put((k, fen, search_lines(engine, board, args.depth, args.multipv)))
                results.put((k, "", []))  # the game's end

    # one game ahead per worker: games finish roughly in order, and a stop
    # loses at most the games in flight
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.workers)]
    for t in threads:
        t.start()
    pending: dict[int, int] = {}
    it: Iterator[tuple[int, chess.pgn.Game]] = iter(enumerate(todo))
    t0 = time.perf_counter()
    searched = finished = 0

    def feed() -> bool:
        nxt = next(it, None)
        if nxt is None:
            return False
        k, g = nxt
        positions = [(f, b) for f, b in to_search(g) if not cache.has(f)]
        pending[k] = len(positions)
        jobs.put((k, positions))
        return True

    for _ in range(2 * args.workers):
        feed()
    while pending:
        item = results.get()
        assert item is not None
        k, fen, lines = item
        if fen:
            cache.put(fen, lines)
            searched += 1
            continue
        del pending[k]
        cache.mark(game_id(todo[k]), len(todo[k].end().board().move_stack))
        finished += 1
        if finished % 10 == 0 or not pending:
            dt = time.perf_counter() - t0
            print(
                f"{finished}/{len(todo)} games, {searched} positions searched in {dt:.0f} s "
                f"({searched / dt:.1f}/s)",
                flush=True,
            )
        feed()
    for _ in threads:
        jobs.put(None)
    for t in threads:
        t.join()


# ---------------------------------------------------------------------------
# ablate


@dataclass
class PlayerGame:
    """One rated player in one evaluated game."""

    rating: float
    group: str
    order: str
    game: str
    moves: list[MoveRecord]
    perceived: float | None
    deep: list[MoveRecord] | None = None
    """The same moves read from a second cache (``combine``: one line at a
    greater depth), or None."""
    prior: float | None = None
    """The opening prior of the player-game (``--priors``), or None."""


def side_records(game: chess.pgn.Game, cache: Cache) -> dict[bool, list[MoveRecord]] | None:
    """Each side's move records (True: White) from the cached candidates;
    None when a position the engine must search is not in the cache."""
    pos = game_positions(game)
    values: list[int] = []
    candidates: list[list[tuple[str, int]]] = []
    for fen_, board, ruled in zip(pos.fens, pos.boards, pos.ruled, strict=True):
        lines = cache.lines(fen_) if ruled is None and not board.is_game_over() else None
        if lines:
            values.append(lines[0][1])
            candidates.append([(m, cp) for m, cp, _mate in lines])
        elif ruled is not None:
            values.append(ruled.cp if board.turn == chess.WHITE else -ruled.cp)
            candidates.append([])
        else:
            return None
    n = len(pos.ucis)
    legal = [b.legal_moves.count() for b in pos.boards[:n]]
    records = move_records(list(range(1, n + 1)), values, candidates[:n], pos.ucis, legal)
    first_white = pos.boards[0].turn == chess.WHITE
    out: dict[bool, list[MoveRecord]] = {True: [], False: []}
    for i, r in enumerate(records):
        out[(i % 2 == 0) == first_white].append(r)
    return out


def perceived_by_side(game: chess.pgn.Game, cache: Cache | None = None) -> dict[bool, float]:
    """Today's perceived rating at the end of the game, per rated side, with
    the shipped model the service picks for the evaluations on the game's
    rating scale (what ``livegain validate`` computes for the same game):
    from the file's own annotations, or with a ``cache`` from its best lines
    (the service's view at the cache's engine and depth). Empty when a
    position is missing from the cache."""
    from livegain.batch.eval_source import (
        EvalSource,
        default_engine_rating,
        eval_source,
        perceived_model,
    )
    from livegain.batch.pgn_evals import annotated_from_pgn_evals
    from livegain.batch.validity import validity_rows
    from livegain.core.perceived import scale_of_tags

    if cache is None:
        ag = annotated_from_pgn_evals(game)
        source = eval_source("pgn", ag.headers)
    else:
        found = annotated_from_cache(game, cache)
        if found is None:
            return {}
        ag = found
        source = EvalSource("engine", *cache.setting)
    scale = scale_of_tags(ag.headers)
    if (source, scale) not in _MODEL:
        model, _why = perceived_model(source, scale=scale)
        assert model is not None, f"no shipped perceived model on the {scale} scale"
        _MODEL[source, scale] = (model, default_engine_rating(source)[0])
    model, r_e = _MODEL[source, scale]
    rows = validity_rows([ag], model, r_e)
    white = game.headers.get("White", "")
    black = game.headers.get("Black", "")
    out: dict[bool, float] = {}
    for row in rows:
        if row.player == white and True not in out:
            out[True] = row.perceived.rating
        elif row.player == black:
            out[False] = row.perceived.rating
    return out


_MODEL: dict[tuple[Any, str], tuple[Any, float]] = {}


def annotated_from_cache(game: chess.pgn.Game, cache: Cache) -> AnnotatedGame | None:
    """The game annotated with each position's best line from the cache (the
    rules' scores where they decide), as the pool would annotate it; None
    when a position is missing."""
    from livegain.core.evaluation import Evaluation

    pos = game_positions(game)
    evaluations = []
    for fen_, board, ruled in zip(pos.fens, pos.boards, pos.ruled, strict=True):
        if ruled is not None:
            evaluations.append(ruled)
            continue
        lines = cache.lines(fen_)
        if not lines:
            return None
        _move, cp, mate = lines[0]
        sign = 1 if board.turn == chess.WHITE else -1
        evaluations.append(
            Evaluation(
                cp=sign * cp, mate=None if mate is None else sign * mate, depth=cache.setting_depth
            )
        )
    return annotate(pos, evaluations)


def load_player_games(args: argparse.Namespace) -> list[PlayerGame]:
    cache = open_cache(args.cache)
    done = cache.done_games()
    games = [
        g
        for g in held_out_games(Path(args.pgn))[: args.games]
        if done is None or game_id(g) in done
    ]
    priors: dict[str, float] = {}
    if getattr(args, "priors", None):
        priors = json.loads(Path(args.priors).read_text())["priors"]
    source = getattr(args, "perceived", "pgn")
    perceived_cache: Cache | None = None
    if source == "cache":
        perceived_cache = cache
    elif source != "pgn":
        if not Path(source).exists():
            raise SystemExit(f"--perceived {source}: no such cache")
        perceived_cache = open_cache(source)
    out: list[PlayerGame] = []
    for g in games:
        sides = side_records(g, cache)
        if sides is None:
            continue
        if source == "pgn":
            perceived = perceived_by_side(g)
        elif not (perceived := perceived_by_side(g, perceived_cache)):
            continue  # a position the other cache lacks: the game is not read
        headers = dict(g.headers)
        for white, tag in ((True, "WhiteElo"), (False, "BlackElo")):
            elo = headers.get(tag, "")
            if elo.isdigit() and sides[white]:
                out.append(
                    PlayerGame(
                        float(elo),
                        game_key(headers),
                        sample_order(headers),
                        game_id(g),
                        sides[white],
                        perceived.get(white),
                        prior=priors.get(player_game_key(headers, white)),
                    )
                )
    return out


#: The feature sets of the ablation: today's, each new one added alone, all.
TODAY = ("loss_open", "loss_middle", "loss_end")
NEW = (
    "win_loss",
    "best_gap",
    "only_move_found",
    "log_likelihood",
    "difficulty",
    "excess_loss",
    "legal_moves",
)
#: Today's perceived rating refitted by the same regression (the control: what
#: a new line alone gains, e.g. where the model reads a depth it was not fitted at).
REFITTED = "(a2) perceived, refitted"
SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (REFITTED, ("perceived",)),
    ("(b) today: cp loss by phase", TODAY),
    *((f"(c) today + {name}", (*TODAY, name)) for name in NEW),
    ("(d) all", (*TODAY, *NEW)),
    # the fair comparison: the new features on top of the shipped model's own reading
    ("(e) perceived + log_likelihood", ("perceived", "log_likelihood")),
    ("(f) perceived + all", ("perceived", *TODAY, *NEW)),
    # legal moves need no engine: the live service could read them today
    ("(g) perceived + legal_moves", ("perceived", "legal_moves")),
)
#: The centipawns lost by phase read from the deeper cache (``combine``).
DEEP = ("deep_loss_open", "deep_loss_middle", "deep_loss_end")
#: The sets ``combine`` adds: the deeper search's losses, alone, beside
#: today's perceived rating, and beside everything the candidates give;
#: and how far the position's value moves between the two depths.
COMBINED_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("(h) cp loss by phase, deep", DEEP),
    ("(i) perceived + deep cp loss", ("perceived", *DEEP)),
    ("(j) perceived + log_likelihood + deep cp loss", ("perceived", "log_likelihood", *DEEP)),
    ("(k) perceived + all + deep cp loss", ("perceived", *TODAY, *NEW, *DEEP)),
    ("(l) (k) + depth shift", ("perceived", *TODAY, *NEW, *DEEP, "depth_shift")),
)


def feature_rows(rows: list[PlayerGame], temperature: float) -> list[dict[str, float | None]]:
    out = []
    for r in rows:
        f = move_features(r.moves, temperature)
        out.append(
            {
                "loss_open": f.loss_by_phase[0],
                "loss_middle": f.loss_by_phase[1],
                "loss_end": f.loss_by_phase[2],
                "loss": f.loss,
                "win_loss": f.win_loss,
                "best_gap": f.best_gap,
                "only_move_found": f.only_move_found,
                "log_likelihood": f.log_likelihood,
                "difficulty": f.difficulty,
                "excess_loss": f.excess_loss,
                "legal_moves": f.legal_moves,
                "perceived": r.perceived,
                "opening_prior": r.prior,
                **deep_features(r),
            }
        )
    return out


#: The sets ``--priors`` adds: the opening a player chose (bench/opening_prior.py).
PRIOR_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("(m) perceived + opening prior", ("perceived", "opening_prior")),
    (
        "(n) perceived + opening prior + log_likelihood",
        ("perceived", "opening_prior", "log_likelihood"),
    ),
    ("(o) perceived + all + opening prior", ("perceived", *TODAY, *NEW, "opening_prior")),
)


def deep_features(r: PlayerGame) -> dict[str, float | None]:
    """The features of the deeper reading of the same moves: centipawns lost
    by phase, and the depth shift, the mean distance (clipped centipawns)
    between the two depths' values of the positions the player moved from
    (a position whose value moves with depth is one a shallow search
    misreads: a difficulty the candidates of one depth do not show)."""
    if r.deep is None:
        return {}
    f = move_features(r.deep, 100.0)  # the temperature is not read: no candidates
    shift = [
        abs(_clip_cp(d.before) - _clip_cp(m.before)) for m, d in zip(r.moves, r.deep, strict=True)
    ]
    return {
        "deep_loss_open": f.loss_by_phase[0],
        "deep_loss_middle": f.loss_by_phase[1],
        "deep_loss_end": f.loss_by_phase[2],
        "deep_loss": f.loss,
        "depth_shift": float(np.mean(shift)),
    }


def _clip_cp(cp: int) -> int:
    return max(-CLASS_CLIP_CP, min(CLASS_CLIP_CP, cp))


def design(
    feats: list[dict[str, float | None]], names: tuple[str, ...], fill: dict[str, float]
) -> np.ndarray:
    """The feature matrix; a missing loss by phase reads the player's overall
    loss, any other missing value the training mean."""
    m = np.empty((len(feats), len(names)))
    for i, f in enumerate(feats):
        for j, n in enumerate(names):
            v = f[n]
            if v is None:
                if n.startswith(("loss_", "deep_loss_")):
                    v = f[n.removesuffix("_open").removesuffix("_middle").removesuffix("_end")]
                else:
                    v = fill[n]
            m[i, j] = v
    return m


def ridge_predict(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, alpha: float = 1.0
) -> np.ndarray:
    """Ridge regression on standardised features (intercept free)."""
    mu, sd = x_train.mean(axis=0), x_train.std(axis=0)
    sd[sd == 0] = 1.0
    a, b = (x_train - mu) / sd, (x_test - mu) / sd
    lhs = a.T @ a + alpha * np.eye(a.shape[1])
    coef = np.linalg.solve(lhs, a.T @ (y_train - y_train.mean()))
    return np.asarray(y_train.mean() + b @ coef)


def in_test_part(group: str, seed: int) -> bool:
    """40 % of events are the test part of split ``seed``."""
    return int(hashlib.sha1(f"{seed}|{group}".encode()).hexdigest()[:8], 16) % 10 < 4


def scores(pred: np.ndarray, truth: np.ndarray, guess: float) -> tuple[float, float]:
    """(Spearman, MAE / MAE of the constant guess)."""
    rho = float(spearmanr(pred, truth).statistic)
    return rho, float(np.abs(pred - truth).mean() / np.abs(guess - truth).mean())


def evaluate_split(
    rows: list[PlayerGame],
    seed: int,
    train_games: int | None = None,
    sets: tuple[tuple[str, tuple[str, ...]], ...] = SETS,
) -> dict[str, tuple[float, ...]]:
    """Every feature set's (Spearman, MAE ratio) on the test part of split
    ``seed``, fitted on its training part (its first ``train_games`` games in
    sample order when given)."""
    train = [r for r in rows if not in_test_part(r.group, seed)]
    test = [r for r in rows if in_test_part(r.group, seed)]
    if train_games is not None:
        chosen = set(sorted({(r.order, r.game) for r in train})[:train_games])
        train = [r for r in train if (r.order, r.game) in chosen]
    try:
        temperature = fit_temperature([m for r in train for m in r.moves])
    except ValueError:  # no candidates searched (MultiPV 1): their features are all None
        temperature = 100.0
    f_train, f_test = feature_rows(train, temperature), feature_rows(test, temperature)
    y_train = np.array([r.rating for r in train])
    y_test = np.array([r.rating for r in test])
    guess = float(np.median(y_train))
    fill = {
        n: float(np.mean([f[n] for f in f_train if f[n] is not None] or [0.0])) for n in f_train[0]
    }
    out: dict[str, tuple[float, ...]] = {"temperature": (temperature, 0.0)}
    with_p = [(r.perceived, r.rating) for r in test if r.perceived is not None]
    if with_p:
        p, t = np.array(with_p).T
        out[TODAY_PERCEIVED] = scores(p, t, guess)
    for label, names in sets:
        pred = ridge_predict(design(f_train, names, fill), y_train, design(f_test, names, fill))
        out[label] = scores(pred, y_test, guess)
    out["sizes"] = (float(len(train)), float(len(test)), float(len({r.game for r in train})))
    return out


def run_ablate(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    rows = load_player_games(args)
    if not describe(rows, args.cache, t0):
        return
    with_priors = sum(r.prior is not None for r in rows)
    sets = SETS
    curve_sets: tuple[str, ...] = ("(b) today: cp loss by phase", "(d) all", "(f) perceived + all")
    if with_priors:
        print(f"opening priors ({args.priors}) for {with_priors} of {len(rows)} player-games")
        sets = (*SETS, *PRIOR_SETS)
        curve_sets = ("(f) perceived + all", "(m) perceived + opening prior", PRIOR_SETS[-1][0])
    splits = [evaluate_split(rows, seed, sets=sets) for seed in range(args.splits)]
    train_games = describe_splits(splits)
    print_sets(splits)
    print_paired(splits, "(b) today: cp loss by phase", ("(c)", "(d)", "(e)", "(f)", "(g)"))
    print_paired(splits, TODAY_PERCEIVED, ("(a2)", "(e)", "(f)", "(g)", "(m)", "(n)", "(o)"))
    print_paired(splits, REFITTED, ("(e)", "(f)", "(g)", "(m)", "(n)", "(o)"))
    print_paired(splits, "(m) perceived + opening prior", ("(n)", "(o)"))
    print_curve(rows, sets, curve_sets, args.splits, train_games)
    print(f"\n({time.perf_counter() - t0:.0f} s)")


def run_combine(args: argparse.Namespace) -> None:
    """The candidates of one cache and the losses of a deeper one, read
    together over the games both hold whole: do the two gains add?"""
    t0 = time.perf_counter()
    rows = load_player_games(args)
    # a player-game is its game and the ply of its first move (the side)
    deep = {
        (r.game, r.moves[0].ply): r.moves
        for r in load_player_games(argparse.Namespace(**{**vars(args), "cache": args.deep}))
    }
    both = []
    for r in rows:
        moves = deep.get((r.game, r.moves[0].ply))
        if moves is not None and [m.played for m in moves] == [m.played for m in r.moves]:
            r.deep = moves
            both.append(r)
    print(f"deeper reading: {args.deep}")
    if not describe(both, args.cache, t0):
        return
    sets = (*SETS, *COMBINED_SETS)
    splits = [evaluate_split(both, seed, sets=sets) for seed in range(args.splits)]
    train_games = describe_splits(splits)
    print_sets(splits)
    print_paired(splits, TODAY_PERCEIVED, ("(a2)", "(e)", "(f)", "(i)", "(j)", "(k)", "(l)"))
    print_paired(splits, REFITTED, ("(e)", "(f)", "(i)", "(j)", "(k)", "(l)"))
    print_paired(splits, "(f) perceived + all", ("(k)", "(l)"))
    print_paired(splits, "(b) today: cp loss by phase", ("(h)",))
    print_curve(
        both,
        sets,
        (
            "(f) perceived + all",
            "(i) perceived + deep cp loss",
            "(k) perceived + all + deep cp loss",
        ),
        args.splits,
        train_games,
    )
    print(f"\n({time.perf_counter() - t0:.0f} s)")


TODAY_PERCEIVED = "(a) today's perceived (shipped model)"


def describe(rows: list[PlayerGame], cache: str, t0: float) -> bool:
    """Print what the rows hold; False when too few games for splits."""
    games = len({r.game for r in rows})
    events = len({r.group for r in rows})
    print(
        f"{cache}: {games} games whose every position is evaluated, {len(rows)} rated "
        f"player-games, {events} events (read in {time.perf_counter() - t0:.0f} s)"
    )
    if games < 40:
        print("too few games for an ablation")
        return False
    with_p = np.array([(r.perceived, r.rating) for r in rows if r.perceived is not None])
    rho = float(spearmanr(with_p[:, 0], with_p[:, 1]).statistic)
    print(
        f"today's perceived over all of them: Spearman {rho:.3f}, mean {with_p[:, 0].mean():.0f} "
        f"(ratings {with_p[:, 1].mean():.0f}); `livegain validate FILE --games {games}` reads "
        "the same games"
    )
    return True


def describe_splits(splits: list[dict[str, tuple[float, ...]]]) -> int:
    """Print the splits' sizes and temperatures; the mean training games."""
    train_games = int(np.mean([s["sizes"][2] for s in splits]))
    n_train = np.mean([s["sizes"][0] for s in splits])
    n_test = np.mean([s["sizes"][1] for s in splits])
    temps = [s["temperature"][0] for s in splits]
    print(
        f"\n{len(splits)} splits by event (40 % of events tested): on average {train_games} "
        f"training games, {n_train:.0f} training and {n_test:.0f} test player-games; "
        f"temperature {np.mean(temps):.0f} cp "
        f"({min(temps):.0f}-{max(temps):.0f})"
    )
    return train_games


def labels_of(splits: list[dict[str, tuple[float, ...]]]) -> list[str]:
    return [k for k in splits[0] if k not in ("temperature", "sizes")]


def print_sets(splits: list[dict[str, tuple[float, ...]]]) -> None:
    print("\n| features | Spearman | MAE / constant guess |")
    print("|---|---:|---:|")
    for label in labels_of(splits):
        rho = np.array([s[label][0] for s in splits])
        ratio = np.array([s[label][1] for s in splits])
        print(
            f"| {label} | {rho.mean():.3f} (sd {rho.std():.3f}) "
            f"| {ratio.mean():.3f} (sd {ratio.std():.3f}) |"
        )


def print_paired(
    splits: list[dict[str, tuple[float, ...]]], base: str, prefixes: tuple[str, ...]
) -> None:
    """Each set whose label starts with one of ``prefixes`` against ``base``,
    split by split."""
    if base not in splits[0]:
        return
    short = base.split(")")[0] + ")"
    print(f"\nPaired against {short}, mean over splits (splits where the set is better):")
    for label in labels_of(splits):
        if label.startswith(prefixes) and label != base:
            d_rho = np.array([s[label][0] - s[base][0] for s in splits])
            d_ratio = np.array([s[label][1] - s[base][1] for s in splits])
            print(
                f"  {label}: Spearman {d_rho.mean():+.3f} ({(d_rho > 0).sum()}/{len(splits)}), "
                f"MAE ratio {d_ratio.mean():+.3f} ({(d_ratio < 0).sum()}/{len(splits)})"
            )


def print_curve(
    rows: list[PlayerGame],
    sets: tuple[tuple[str, tuple[str, ...]], ...],
    curve_sets: tuple[str, ...],
    n_splits: int,
    train_games: int,
) -> None:
    """The learning curve of ``curve_sets`` and its extrapolation."""
    print(
        "\nLearning curve (test part fixed per split; its first N training games in sample order):"
    )
    print(
        "\n| training games | "
        + " | ".join(f"{c[:3]} Spearman | {c[:3]} MAE ratio" for c in curve_sets)
        + " |"
    )
    print("|---:|" + "---:|---:|" * len(curve_sets))
    sizes = [n for n in (25, 50, 100, 200, 400, 800, 1600) if n < train_games] + [train_games]
    curve: dict[str, list[tuple[int, float, float]]] = {c: [] for c in curve_sets}
    for n in sizes:
        runs = [evaluate_split(rows, seed, n, sets) for seed in range(n_splits)]
        cells = []
        for c in curve_sets:
            v = np.array([r[c] for r in runs])
            curve[c].append((n, float(v[:, 0].mean()), float(v[:, 1].mean())))
            cells.append(f"{v[:, 0].mean():.3f} | {v[:, 1].mean():.3f}")
        print(f"| {n} | " + " | ".join(cells) + " |")
    print(
        "\nExtrapolated (least squares of y = y_inf + k / sqrt(N) over the curve's points"
        " from 50 training games on): what these features, read by this regression, would"
        " reach with unlimited training games:"
    )
    for c in curve_sets:
        points = [(n, rho, ratio) for n, rho, ratio in curve[c] if n >= 50]
        if len(points) < 3:
            print(f"  {c}: too few points")
            continue
        x = np.array([[1.0, 1.0 / np.sqrt(n)] for n, _, _ in points])
        rho_inf = float(np.linalg.lstsq(x, np.array([p[1] for p in points]), rcond=None)[0][0])
        ratio_inf = float(np.linalg.lstsq(x, np.array([p[2] for p in points]), rcond=None)[0][0])
        print(f"  {c}: Spearman {rho_inf:.3f}, MAE ratio {ratio_inf:.3f}")


#: The sets a single-line search can read (no candidates needed), compared
#: across two caches by ``compare``.
SINGLE_LINE_SETS = (
    "(b) today: cp loss by phase",
    "(c) today + win_loss",
    "(c) today + legal_moves",
)


def run_compare(args: argparse.Namespace) -> None:
    """The same games, splits and regressions read from two caches (e.g. depth
    10 and depth 16): each set's figures from each, and their paired difference."""
    t0 = time.perf_counter()
    rows_a = load_player_games(argparse.Namespace(**{**vars(args), "cache": args.cache}))
    rows_b = load_player_games(argparse.Namespace(**{**vars(args), "cache": args.against}))
    common = {r.game for r in rows_a} & {r.game for r in rows_b}
    rows_a = [r for r in rows_a if r.game in common]
    rows_b = [r for r in rows_b if r.game in common]
    print(
        f"A {args.cache}, B {args.against}: {len(common)} games held whole by both, "
        f"{len(rows_a)} rated player-games; {args.splits} splits by event"
    )
    if len(common) < 40:
        print("too few games for a comparison")
        return
    splits_a = [evaluate_split(rows_a, seed) for seed in range(args.splits)]
    splits_b = [evaluate_split(rows_b, seed) for seed in range(args.splits)]
    print(
        "\n| features | A: Spearman | A: MAE ratio | B: Spearman | B: MAE ratio "
        "| B - A: Spearman (splits B better) | B - A: MAE ratio (splits B better) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label in (TODAY_PERCEIVED, *SINGLE_LINE_SETS):
        a = np.array([s[label] for s in splits_a])
        b = np.array([s[label] for s in splits_b])
        d = b - a
        print(
            f"| {label} | {a[:, 0].mean():.3f} | {a[:, 1].mean():.3f} | {b[:, 0].mean():.3f} "
            f"| {b[:, 1].mean():.3f} | {d[:, 0].mean():+.3f} ({(d[:, 0] > 0).sum()}/{len(d)}) "
            f"| {d[:, 1].mean():+.3f} ({(d[:, 1] < 0).sum()}/{len(d)}) |"
        )
    print(f"\n((a) reads the file's own evaluations in both; {time.perf_counter() - t0:.0f} s)")


PERCEIVED_HELP = (
    "where today's perceived rating reads its evaluations: pgn (the file's own annotations), "
    "cache (the cache's best lines) or the path of another cache (e.g. the service's own, "
    "one line at the same depth)"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="multi-PV evaluations of held-out games into a cache")
    ev.add_argument("--pgn", default=str(DATA))
    ev.add_argument("--cache", default="/tmp/lg-fide-mpv3-d10.sqlite")
    ev.add_argument("--games", type=int, default=600)
    ev.add_argument("--workers", type=int, default=2)
    ev.add_argument("--depth", type=int, default=DEPTH)
    ev.add_argument("--multipv", type=int, default=MULTIPV)
    ev.add_argument("--engine", default=ENGINE)
    ab = sub.add_parser("ablate", help="features, regression, ablation, learning curve")
    ab.add_argument("--pgn", default=str(DATA))
    ab.add_argument("--cache", default="/tmp/lg-fide-mpv3-d10.sqlite")
    ab.add_argument("--splits", type=int, default=20)
    ab.add_argument("--perceived", default="pgn", help=PERCEIVED_HELP)
    ab.add_argument(
        "--priors", default=None, help="opening priors (bench/opening_prior.py --write-priors)"
    )
    ab.add_argument(
        "--games",
        type=int,
        default=None,
        help="only the first N held-out games in sample order (those the cache holds whole): "
        "two caches read over the same games",
    )
    cmp = sub.add_parser("compare", help="two caches over the same games and splits")
    cmp.add_argument("--pgn", default=str(DATA))
    cmp.add_argument("--cache", default="/tmp/lg-fide-mpv3-d10.sqlite", help="A")
    cmp.add_argument("--against", default="/tmp/lg-fide-mpv1-d16.sqlite", help="B")
    cmp.add_argument("--splits", type=int, default=20)
    cmp.add_argument("--games", type=int, default=None)
    cb = sub.add_parser("combine", help="one cache's candidates and a deeper cache's losses")
    cb.add_argument("--pgn", default=str(DATA))
    cb.add_argument("--cache", default="/tmp/lg-fide-mpv3-d10.sqlite", help="the candidates")
    cb.add_argument("--deep", default="/tmp/lg-fide-mpv1-d16.sqlite", help="the deeper reading")
    cb.add_argument("--splits", type=int, default=20)
    cb.add_argument("--perceived", default="pgn", help=PERCEIVED_HELP)
    cb.add_argument("--games", type=int, default=None)
    args = ap.parse_args()
    if not Path(args.pgn).exists():
        print(f"skipped: {args.pgn} is absent")
        return 0
    if args.command == "evaluate":
        run_evaluate(args)
    elif args.command == "compare":
        run_compare(args)
    elif args.command == "combine":
        run_combine(args)
    else:
        run_ablate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
