"""Batch analysis of whole games: from per-position scores to per-game, per-player
and per-tournament reports (Algorithms 1, 2, 3 and 4).

The per-game figures come from the same :class:`~livegain.core.ledger.GameLedger`
that the live service feeds ply by ply, so a finished live game and a batch
analysis of it agree exactly. docs/analyze.md documents the JSON keys and
docs/maths.md the methods.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import chess
import numpy as np

from livegain.batch.annotated import AnnotatedGame as AnnotatedGame
from livegain.core.accuracy import (
    Phase,
    PlayerAccuracy,
    game_accuracy,
    mean_accuracy,
    phases_from_fens,
)
from livegain.core.evaluation import CLIP_CP, Evaluation
from livegain.core.histogram import GainHistogram
from livegain.core.human_wdl import CLASSICAL_OTB, HumanWdlModel
from livegain.core.ledger import GameLedger
from livegain.core.perceived import CalibratedRating, MoveClasses, PerceivedModel
from livegain.core.rating import (
    MIN_GAMES_FOR_BOOTSTRAP,
    HeadToHead,
    PerceivedRating,
    bootstrap_p_interval,
    cluster_p_interval,
    head_to_head,
    perceived_from_p,
    rating_difference,
    wilson_interval,
)
from livegain.core.student import t_quantile
from livegain.core.tournament import (
    EngineStrength,
    TournamentFit,
    engine_strength,
    pairing_components,
    perceived_tournament,
    tournament_estimates,
)
from livegain.core.wdl import Wdl, position_wdl

PairMethod = Literal["aggregate", "pair"]
IntervalMethod = Literal["cluster", "bootstrap"]

#: The W/D/L model of a game from its PGN tags: (kind of game, the human
#: model of that kind, None to show today's W/D/L: the engine's, else the
#: win-chance curve of ``core.wdl``).
WdlChooser = Callable[[Mapping[str, str]], tuple[str, HumanWdlModel | None]]


# ---------------------------------------------------------------------------
# report types


@dataclass(frozen=True)
class TraceEntry:
    """The mover's perceived rating right after one of his moves (Figure 6)."""

    ply: int
    move: str
    gain: int
    perceived: PerceivedRating
    calibrated: CalibratedRating | None = None


@dataclass
class PlayerGame:
    """One player in one game: Algorithm 4 over his moves of that game
    (``perceived``) and the calibrated estimate (``calibrated``, with a model)."""

    name: str
    color: Literal["white", "black"]
    elo: int | None
    perceived: PerceivedRating
    mean_gain: float | None
    trace: list[TraceEntry]
    histogram: GainHistogram
    score_sum: float
    effective_moves: float
    calibrated: CalibratedRating | None = None
    move_classes: list[int] = field(default_factory=list)
    #: the sum of his moves' scores, hundredths of a point (0 without a model)
    centi_sum: int = 0
    #: his official rating updated by his moves of this game (None without a
    #: rating or a model with forward lines)
    form: CalibratedRating | None = None
    #: his accuracy (lichess's method), overall and by phase
    accuracy: PlayerAccuracy | None = None


@dataclass
class PlyRow:
    """One ply: ``wdl`` is the W/D/L shown after it (the human model's when
    there is one, else the engine's, else the win-chance curve's),
    ``engine_wdl`` the engine's own (None when it gave none); both per mille,
    White's view."""

    ply: int
    move: str
    mover: Literal["white", "black"]
    score: int
    gain: int | None
    wdl: Wdl = (0, 1000, 0)
    engine_wdl: Wdl | None = None


@dataclass
class GameReport:
    number: int
    headers: dict[str, str]
    white: PlayerGame
    black: PlayerGame
    head_to_head: HeadToHead
    plies: list[PlyRow]
    start_score: int | None
    #: the kind of game its W/D/L is read as, and the human model's name
    #: (None: no human model, today's W/D/L)
    kind: str = CLASSICAL_OTB
    wdl_model: str | None = None


@dataclass
class PlayerReport:
    """All games of one player pooled."""

    name: str
    elo: float | None
    games: int
    histogram: GainHistogram
    perceived: PerceivedRating
    interval_method: str
    mean_gain: float | None
    tournament: float | None = None
    tournament_relative: float | None = None
    tournament_low: float | None = None
    tournament_high: float | None = None
    calibrated: CalibratedRating | None = None
    form: CalibratedRating | None = None
    #: the mean of his games' accuracies (:func:`~livegain.core.accuracy.mean_accuracy`)
    accuracy: PlayerAccuracy | None = None


@dataclass(frozen=True)
class PairReport:
    a: str
    b: str
    games: int
    head_to_head: HeadToHead


@dataclass
class TournamentReport:
    method: PairMethod
    pairs: list[PairReport]
    fit: TournamentFit
    engine_by_elo: EngineStrength | None
    engine_by_estimate: EngineStrength | None


@dataclass
class AnalysisReport:
    engine_rating: float
    engine_model: str
    games: list[GameReport]
    players: list[PlayerReport]
    tournament: TournamentReport | None
    skipped: list[str] = field(default_factory=list)
    engine_name: str | None = None
    model: PerceivedModel | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": {
                "rating": _r(self.engine_rating),
                "model": self.engine_model,
                "name": self.engine_name,
            },
            "calibration": model_json(self.model),
            "games": [_game_json(g, self.model) for g in self.games],
            "players": [_player_json(p, self.model) for p in self.players],
            "tournament": _tournament_json(self.tournament) if self.tournament else None,
            "skipped": list(self.skipped),
        }

    def player(self, name: str) -> PlayerReport:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)


# ---------------------------------------------------------------------------
# analysis


def game_move_classes(game: AnnotatedGame, classes: MoveClasses) -> dict[str, list[int]]:
    """The classes of each side's counted moves (for fitting a model)."""
    out: dict[str, list[int]] = {"white": [], "black": []}
    skip = max(game.counted_from_ply, 1) - 1
    white = game.first_mover_is_white
    for ply in range(1, len(game.sans) + 1):
        if ply > skip:
            sign = 1 if white else -1
            before, after = sign * game.scores[ply - 1], sign * game.scores[ply]
            out["white" if white else "black"].append(classes.of(ply, before, after))
        white = not white
    return out


def _pgn_evaluation(score: int) -> Evaluation:
    """A ``[%eval]`` score as an evaluation: +/-39.00 (a mate, or more than all
    the material) is decisive, as an engine's mate score is."""
    if abs(score) >= CLIP_CP:
        return Evaluation(cp=score, mate=1 if score > 0 else -1)
    return Evaluation(cp=score)


def game_phases(game: AnnotatedGame) -> list[Phase] | None:
    """The phase of each move (:func:`~livegain.core.accuracy.phase_of`),
    from the positions the game's moves reach; None when a move cannot be read."""
    variant = game.headers.get("Variant", "").lower()
    try:
        board = chess.Board(
            game.start_fen or chess.STARTING_FEN,
            chess960="960" in variant or "fischer" in variant,
        )
        fens = []
        for uci in game.ucis:
            fens.append(board.fen())
            board.push(chess.Move.from_uci(uci))
    except (ValueError, IndexError, AssertionError):
        return None
    return phases_from_fens(fens) if len(fens) == len(game.sans) else None


def analyze_game(
    game: AnnotatedGame,
    engine_rating: float,
    engine: GainHistogram | None = None,
    number: int = 1,
    model: PerceivedModel | None = None,
    wdl_model: HumanWdlModel | None = None,
    kind: str = CLASSICAL_OTB,
) -> GameReport:
    """Algorithms 1 and 4 for one game, with the move-by-move traces, the
    calibrated estimate and form when a ``model`` is given, and the W/D/L
    after every ply: ``wdl_model``'s (the human model, from the evaluation,
    the ply and the players' Elo tags) when given, else the engine's, else
    the win-chance curve's (:func:`~livegain.core.wdl.position_wdl`)."""
    if len(game.scores) != len(game.sans) + 1:
        raise ValueError(
            f"game {number}: {len(game.scores)} scores for {len(game.sans)} moves "
            "(need one per position, the start included)"
        )
    skip = max(game.counted_from_ply, 1) - 1
    # the ledger starts at the first counted ply
    first_white = game.first_mover_is_white == (skip % 2 == 0)
    ledger = GameLedger(
        engine_rating,
        engine=engine,
        first_mover_is_white=first_white,
        model=model,
        first_ply=skip + 1,
    )
    ledger.set_start(game.scores[skip])
    traces: dict[str, list[TraceEntry]] = {"white": [], "black": []}
    plies: list[PlyRow] = []
    white = game.first_mover_is_white
    evaluations = game.evaluations
    white_elo, black_elo = game.white_elo, game.black_elo
    for ply in range(1, len(game.sans) + 1):
        mover: Literal["white", "black"] = "white" if white else "black"
        g: int | None = None
        if ply > skip:
            step = ledger.push(game.scores[ply])
            g = step.gain
            traces[mover].append(
                TraceEntry(ply, game.move_label(ply), g, step.perceived, step.calibrated)
            )
        # the position after this ply: the other side is to move
        ev = evaluations[ply] if evaluations is not None else _pgn_evaluation(game.scores[ply])
        shown = (
            wdl_model.wdl(ev, ply, white_elo, black_elo, white_to_move=not white)
            if wdl_model is not None
            else position_wdl(ev)
        )
        plies.append(PlyRow(ply, game.move_label(ply), mover, game.scores[ply], g, shown, ev.wdl))
        white = not white

    phases = game_phases(game)
    accuracy = game_accuracy(
        game.scores[skip:], first_white, None if phases is None else phases[skip:]
    )

    def side(color: Literal["white", "black"]) -> PlayerGame:
        hist = ledger.histogram(color).copy()
        s1, denom = ledger.score_sum(color)
        classes = ledger.move_classes(color)
        elo = game.white_elo if color == "white" else game.black_elo
        centi = sum(model.centi_score(c) for c in classes) if model is not None else 0
        return PlayerGame(
            name=game.white if color == "white" else game.black,
            color=color,
            elo=elo,
            perceived=ledger.perceived(color),
            mean_gain=hist.mean() if hist.n else None,
            trace=traces[color],
            histogram=hist,
            score_sum=s1 / denom,
            effective_moves=ledger.effective_moves(color),
            calibrated=ledger.calibrated(color),
            move_classes=classes,
            centi_sum=centi,
            form=model.form([(len(classes), centi)], elo) if model is not None else None,
            accuracy=accuracy.of(color),
        )

    return GameReport(
        number=number,
        headers=dict(game.headers),
        white=side("white"),
        black=side("black"),
        head_to_head=ledger.head_to_head(),
        plies=plies,
        start_score=game.scores[0] if skip == 0 else None,
        kind=kind,
        wdl_model=None if wdl_model is None else wdl_model.name,
    )


def analyze(
    games: Sequence[AnnotatedGame],
    engine_rating: float,
    engine: GainHistogram | None = None,
    *,
    pairing: PairMethod = "aggregate",
    interval: IntervalMethod = "cluster",
    bootstrap_samples: int = 2000,
    seed: int = 0,
    engine_name: str | None = None,
    model: PerceivedModel | None = None,
    wdl: WdlChooser | None = None,
) -> AnalysisReport:
    """Per game, per player (all games pooled) and per tournament.

    With a ``model``, every player-game and player also gets the calibrated
    perceived rating and form (a player's over all his games:
    :meth:`PerceivedModel.perceived` and :meth:`PerceivedModel.form`).
    ``wdl`` picks each game's kind and human W/D/L model from its tags
    (None: classical over the board, today's W/D/L).

    ``pairing`` chooses the d_ij fed to Algorithm 2: ``"aggregate"`` (seed 002
    Table 1: Algorithm 1 between the two players' whole-event histograms, for
    each pair that met) or ``"pair"`` (Table 3: Algorithm 1 between the
    histograms of the pair's own games only).

    ``interval`` chooses the 95 % interval of a player's aggregate over several
    games: ``"cluster"`` (the union of a cluster-robust t-interval over games
    and the Wilson interval over the summed effective sizes) or
    ``"bootstrap"`` (percentile bootstrap over games, ``seed``; from 5 games).
    A single game always uses the Wilson interval. docs/maths.md compares them.
    """
    reports = []
    for k, g in enumerate(games, start=1):
        kind, wdl_model = wdl(g.headers) if wdl is not None else (CLASSICAL_OTB, None)
        reports.append(
            analyze_game(
                g,
                engine_rating,
                engine,
                number=int(g.extra.get("game_number", k)),
                model=model,
                wdl_model=wdl_model,
                kind=kind,
            )
        )

    # pool by player name
    per_player: dict[str, list[PlayerGame]] = defaultdict(list)
    for rep in reports:
        per_player[rep.white.name].append(rep.white)
        per_player[rep.black.name].append(rep.black)

    players: list[PlayerReport] = []
    for name, entries in per_player.items():
        hist = GainHistogram()
        for e in entries:
            hist.merge(e.histogram)
        elos = [e.elo for e in entries if e.elo is not None]
        elo = sum(elos) / len(elos) if elos else None
        counted = [e for e in entries if e.histogram.n > 0]
        if hist.n == 0:
            perceived = perceived_from_p(0.5, 0, engine_rating)
            method = "none"
        else:
            p = hist.expected_score_vs_engine(engine)
            scores = [e.score_sum for e in counted]
            moves = [e.histogram.n for e in counted]
            n_eff = sum(e.effective_moves for e in counted)
            if interval == "cluster" and len(counted) >= 2:
                ct = cluster_p_interval(scores, moves)
                wi = wilson_interval(p, n_eff)
                both = (min(ct[0], wi[0]), max(ct[1], wi[1]))
                perceived = perceived_from_p(p, hist.n, engine_rating, interval_p=both)
                method = "games-cluster"
            elif interval == "bootstrap" and len(counted) >= MIN_GAMES_FOR_BOOTSTRAP:
                boot = bootstrap_p_interval(scores, moves, samples=bootstrap_samples, seed=seed)
                perceived = perceived_from_p(p, hist.n, engine_rating, interval_p=boot)
                method = "bootstrap-games"
            else:
                perceived = perceived_from_p(p, hist.n, engine_rating, n_eff=n_eff)
                method = "wilson"
        players.append(
            PlayerReport(
                name=name,
                elo=elo,
                games=len(entries),
                histogram=hist,
                perceived=perceived,
                interval_method=method,
                mean_gain=hist.mean() if hist.n else None,
                accuracy=mean_accuracy([e.accuracy for e in entries if e.accuracy is not None]),
            )
        )
    # best first; players without a counted move (forfeits only) last
    players.sort(key=lambda p: (p.perceived.moves == 0, -p.perceived.rating))

    if model is not None:
        _pool_calibrated(reports, players, model)
    tournament = _tournament(reports, players, pairing) if len(players) >= 2 else None
    return AnalysisReport(
        engine_rating=engine_rating,
        engine_model="single peak at 0" if engine is None else f"histogram of {engine.n} gains",
        games=reports,
        players=players,
        tournament=tournament,
        engine_name=engine_name,
        model=model,
    )


def _pool_calibrated(
    reports: Sequence[GameReport], players: list[PlayerReport], model: PerceivedModel
) -> None:
    """Each player's perceived rating and form over all his games of the
    file (:meth:`PerceivedModel.perceived`, :meth:`PerceivedModel.form`; a
    model without forward lines: the estimate over all his moves pooled)."""
    games: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for rep in reports:
        for pg in (rep.white, rep.black):
            games[pg.name].append((len(pg.move_classes), pg.centi_sum))
    for p in players:
        mine = games.get(p.name, [])
        pooled = model.perceived(mine)
        if pooled is None:
            pooled = model.estimate(sum(n for n, _ in mine), sum(c for _, c in mine))
        p.calibrated = pooled
        p.form = model.form(mine, p.elo)


def _tournament(
    reports: Sequence[GameReport], players: list[PlayerReport], method: PairMethod
) -> TournamentReport | None:
    by_name = {p.name: p for p in players}
    pair_hists: dict[tuple[str, str], tuple[GainHistogram, GainHistogram, int]] = {}
    for rep in reports:
        a, b = sorted((rep.white.name, rep.black.name))
        if a == b:
            continue
        ha, hb, n = pair_hists.get((a, b), (GainHistogram(), GainHistogram(), 0))
        mine_a = rep.white if rep.white.name == a else rep.black
        mine_b = rep.black if mine_a is rep.white else rep.white
        ha.merge(mine_a.histogram)
        hb.merge(mine_b.histogram)
        pair_hists[(a, b)] = (ha, hb, n + 1)

    pairs: list[PairReport] = []
    edges: list[tuple[str, str, float]] = []
    for (a, b), (ha, hb, n) in sorted(pair_hists.items()):
        if method == "aggregate":
            ha, hb = by_name[a].histogram, by_name[b].histogram
        if ha.n == 0 or hb.n == 0:
            continue
        h2h = head_to_head(ha, hb)
        pairs.append(PairReport(a, b, n, h2h))
        edges.append((a, b, h2h.difference))
    if not edges:
        return None
    if not any(p.elo is not None for p in players):
        fit = perceived_tournament([p.name for p in players], {}, edges)
    else:
        fit = perceived_tournament(
            [p.name for p in players], {p.name: p.elo for p in players}, edges
        )
    for p in players:
        tr = fit.ratings[p.name]
        p.tournament = tr.estimated
        p.tournament_relative = tr.relative if tr.opponents else None
    for name, (lo, hi) in _jackknife(reports, players, method).items():
        by_name[name].tournament_low = lo
        by_name[name].tournament_high = hi

    rated = [p for p in players if p.elo is not None and p.histogram.n > 0]
    by_elo = (
        engine_strength((p.elo, p.perceived.difference) for p in rated if p.elo is not None)
        if rated
        else None
    )
    estimated = [p for p in players if p.tournament is not None and p.histogram.n > 0]
    by_estimate = (
        engine_strength(
            (p.tournament, p.perceived.difference) for p in estimated if p.tournament is not None
        )
        if estimated
        else None
    )
    return TournamentReport(method, pairs, fit, by_elo, by_estimate)


#: The delete-a-group jackknife of Algorithm 2 uses at most this many groups of games.
JACKKNIFE_GROUPS = 200


#: More than the range of gains (+/-7800): histograms placed this far apart
#: make one sorted array.
_STRIDE = 1 << 20


class _Stack:
    """Gain histograms stacked in one sorted array (the k-th shifted by k times
    :data:`_STRIDE`), to compute Algorithm 1 between many of them at once."""

    def __init__(self, hists: Sequence[GainHistogram]) -> None:
        gains: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        counts: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        for k, hist in enumerate(hists):
            bins = hist.counts()
            values = np.fromiter(bins, dtype=np.int64, count=len(bins))
            order = np.argsort(values)
            gains.append(values[order] + k * _STRIDE)
            counts.append(np.fromiter(bins.values(), dtype=np.int64, count=len(bins))[order])
        lengths = np.array([len(g) for g in gains[1:]], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.gains = np.concatenate(gains)
        self.counts = np.concatenate(counts)
        self.cum = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        #: moves of each histogram
        self.n = self.cum[self.starts[1:]] - self.cum[self.starts[:-1]]

    def u2(self, xs: np.ndarray, other: _Stack, ys: np.ndarray) -> np.ndarray:
        """``2U`` of histogram ``xs[k]`` over histogram ``ys[k]`` of ``other``
        for each k: the sum over x's moves of twice the moves of y below plus
        those equal (Algorithm 1's p is ``2U / (2 n m)``). Integers below 2**53,
        exact in the float64 returned."""
        lengths = self.starts[xs + 1] - self.starts[xs]
        owner = np.repeat(np.arange(len(xs)), lengths)
        first = np.repeat(self.starts[xs] - (np.cumsum(lengths) - lengths), lengths)
        pos = first + np.arange(int(lengths.sum()))
        y = ys[owner]
        keys = self.gains[pos] + (y - xs[owner]) * _STRIDE
        twice = (
            other.cum[np.searchsorted(other.gains, keys, "left")]
            + other.cum[np.searchsorted(other.gains, keys, "right")]
            - 2 * other.cum[other.starts[y]]
        )
        return np.bincount(
            owner, weights=(self.counts[pos] * twice).astype(float), minlength=len(xs)
        )


def _rating_differences(u2: np.ndarray, n: np.ndarray, m: np.ndarray) -> list[float]:
    """``rating_difference(p).value`` for ``p = 2U / (2 n m)``, NaN where a side
    has no move: the same floats as ``GainHistogram.expected_score`` gives
    (integer operands, one correctly rounded division)."""
    return [
        rating_difference(u / (2.0 * x * y)).value if x and y else math.nan
        for u, x, y in zip(
            u2.tolist(), n.astype(float).tolist(), m.astype(float).tolist(), strict=True
        )
    ]


def _jackknife(
    reports: Sequence[GameReport], players: list[PlayerReport], method: PairMethod
) -> dict[str, tuple[float, float]]:
    """95 % intervals of the Algorithm 2 estimates by a delete-a-group jackknife
    over games: the whole pipeline (histograms, d_ij, fit, shift) is rerun
    without each group of games (one game per group up to 200 games);
    ``est +/- t_{K-1} sqrt((K-1)/K sum (est_(k) - mean)^2)``. Players whose
    estimate disappears without some group (e.g. a single game) get none.

    Rerunning only what a group changes keeps this linear in the number of
    games: the moves of the group are subtracted from the histograms they
    belong to, the d_ij of the pairs whose histograms lost moves are
    recomputed, and only the components of the pairing graph holding a player
    of the group are fitted again; the others keep the estimates of the full
    fit (Algorithm 2 fits each component on its own)."""
    names = [p.name for p in players]
    index = {name: i for i, name in enumerate(names)}
    known = np.array([np.nan if p.elo is None else float(p.elo) for p in players])
    counted = [r for r in reports if r.white.histogram.n or r.black.histogram.n]
    k = min(len(counted), JACKKNIFE_GROUPS)
    if k < 3:
        return {}
    pair_base: dict[tuple[str, str], tuple[GainHistogram, GainHistogram]] = {}
    pair_games: dict[tuple[str, str], int] = defaultdict(int)
    for rep in counted:
        a, b = sorted((rep.white.name, rep.black.name))
        if a == b:
            continue
        pair_games[(a, b)] += 1
        ha, hb = pair_base.setdefault((a, b), (GainHistogram(), GainHistogram()))
        ha.merge((rep.white if rep.white.name == a else rep.black).histogram)
        hb.merge((rep.black if rep.white.name == a else rep.white).histogram)

    # the full fit, with the pairs in the order the replicates use. Each pair
    # compares two histograms of a stack: the two players' (aggregate) or the
    # pair's own two (pair)
    pairs = list(pair_base)
    pair_index = {pair: q for q, pair in enumerate(pairs)}
    pa = np.array([index[a] for a, _ in pairs], dtype=np.int64)
    pb = np.array([index[b] for _, b in pairs], dtype=np.int64)
    if method == "aggregate":
        stack = _Stack([p.histogram for p in players])
        ea, eb = pa, pb
    else:
        stack = _Stack([h for pair in pair_base.values() for h in pair])
        ea = 2 * np.arange(len(pairs), dtype=np.int64)
        eb = ea + 1
    u2_base = stack.u2(ea, stack, eb)
    pd = np.array(_rating_differences(u2_base, stack.n[ea], stack.n[eb]), dtype=float)
    live = np.flatnonzero(~np.isnan(pd))
    n = len(names)
    base_est = tournament_estimates(n, pa[live], pb[live], pd[live], known)
    comp = pairing_components(n, pa[live], pb[live])
    by_comp = np.argsort(comp, kind="stable")
    comp_starts = np.concatenate([[0], np.cumsum(np.bincount(comp))])
    live_comp = comp[pa[live]]
    pairs_by_comp = live[np.argsort(live_comp, kind="stable")]
    pair_starts = np.concatenate(
        [[0], np.cumsum(np.bincount(live_comp, minlength=len(comp_starts) - 1))]
    )
    incident: dict[int, list[int]] = defaultdict(list)  # histogram -> its live pairs
    for q in live.tolist():
        incident[int(ea[q])].append(q)
        incident[int(eb[q])].append(q)

    replicates = np.empty((k, n))
    for group in range(k):
        removed = counted[group::k]
        movers: set[int] = set()
        gone: dict[int, GainHistogram] = {}  # histogram of the stack -> its moves removed
        games_gone: dict[int, int] = defaultdict(int)
        for rep in removed:
            movers.update((index[rep.white.name], index[rep.black.name]))
            a, b = sorted((rep.white.name, rep.black.name))
            q = pair_index.get((a, b), -1)
            if a != b:
                games_gone[q] += 1
            mine_a = rep.white if rep.white.name == a else rep.black
            mine_b = rep.black if mine_a is rep.white else rep.white
            if method == "aggregate":
                sides = [(index[a], mine_a), (index[b], mine_b)]
            else:
                sides = [(2 * q, mine_a), (2 * q + 1, mine_b)] if a != b else []
            for h, side in sides:
                if side.histogram.n:
                    gone.setdefault(h, GainHistogram()).merge(side.histogram)
        # the d_ij this group changes (NaN drops the pair), from the full
        # file's 2U: 2U is bilinear, so (A - Ga) over (B - Gb) is
        # 2U(A,B) - 2U(Ga,B) - (2 n_A n_Gb - 2U(Gb,A)) + 2U(Ga,Gb)
        todo = np.array(sorted({q for h in gone for q in incident[h]}), dtype=np.int64)
        holes = list(gone)
        lost = _Stack([gone[h] for h in holes])
        where = np.full(len(stack.n), -1, dtype=np.int64)
        where[holes] = np.arange(len(holes))
        xa, xb = ea[todo], eb[todo]
        ga, gb = where[xa], where[xb]
        u2 = u2_base[todo].copy()
        n_a, n_b = stack.n[xa].copy(), stack.n[xb].copy()
        sel = ga >= 0
        u2[sel] -= lost.u2(ga[sel], stack, xb[sel])
        n_a[sel] -= lost.n[ga[sel]]
        sel = gb >= 0
        u2[sel] -= 2.0 * stack.n[xa[sel]] * lost.n[gb[sel]] - lost.u2(gb[sel], stack, xa[sel])
        n_b[sel] -= lost.n[gb[sel]]
        sel = (ga >= 0) & (gb >= 0)
        u2[sel] += lost.u2(ga[sel], lost, gb[sel])
        changed = dict(zip(todo.tolist(), _rating_differences(u2, n_a, n_b), strict=True))
        for q, count in games_gone.items():
            if pair_games[pairs[q]] == count:
                changed[q] = math.nan
        # refit the components this group touches
        touched = np.unique(comp[sorted(movers)])
        nodes = np.sort(
            np.concatenate([by_comp[comp_starts[c] : comp_starts[c + 1]] for c in touched])
        )
        sub = np.sort(
            np.concatenate([pairs_by_comp[pair_starts[c] : pair_starts[c + 1]] for c in touched])
        )
        d = pd[sub]
        if changed:
            moved = np.array(list(changed), dtype=np.int64)
            inside = np.isin(moved, sub)  # a pair already dropped from the full fit stays out
            d[np.searchsorted(sub, moved[inside])] = np.array(list(changed.values()))[inside]
        keep = ~np.isnan(d)
        est = tournament_estimates(
            len(nodes),
            np.searchsorted(nodes, pa[sub][keep]),
            np.searchsorted(nodes, pb[sub][keep]),
            d[keep],
            known[nodes],
        )
        row = base_est.copy()
        row[nodes] = est
        replicates[group] = row
    t = t_quantile(k - 1, 0.975)
    mean = replicates.mean(axis=0)
    se = np.sqrt((k - 1) / k * ((replicates - mean) ** 2).sum(axis=0))
    complete = np.all(~np.isnan(replicates), axis=0).tolist()
    out: dict[str, tuple[float, float]] = {}
    for i, p in enumerate(players):
        if not complete[i] or p.tournament is None:
            continue
        half = t * float(se[i])
        out[p.name] = (p.tournament - half, p.tournament + half)
    return out


# ---------------------------------------------------------------------------
# JSON


def _r(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(float(x), digits)


def perceived_json(p: PerceivedRating) -> dict[str, Any]:
    return {
        "rating": _r(p.rating),
        "low": _r(p.low),
        "high": _r(p.high),
        "difference": _r(p.difference),
        "expected": _r(p.expected, 4),
        "moves": p.moves,
        "bounded": p.bounded,
    }


def calibrated_json(c: CalibratedRating | None) -> dict[str, Any] | None:
    """The calibrated estimate: ``rating``, ``low``, ``high`` (95 %), ``moves``,
    ``early`` (too few moves to show a number), ``score`` and ``model``."""
    if c is None:
        return None
    return {
        "rating": _r(c.rating),
        "low": _r(c.low),
        "high": _r(c.high),
        "moves": c.moves,
        "early": c.early,
        "score": _r(c.score),
        "model": c.model,
    }


def estimate_json(
    c: CalibratedRating | None, model: PerceivedModel | None, rating: float | None
) -> dict[str, Any] | None:
    """:func:`calibrated_json` with ``label`` (the model's
    :meth:`~PerceivedModel.range_label` of ``rating``: None inside the range
    it was fitted on, ``extrapolated`` above, its below-label under it) and
    ``scale`` (the model's rating scale, ``fide`` or ``lichess``)."""
    out = calibrated_json(c)
    if out is None or model is None:
        return out
    out["label"] = model.range_label(rating)
    out["scale"] = model.scale
    return out


def perceived_label_json(
    c: CalibratedRating | None, model: PerceivedModel | None
) -> dict[str, Any] | None:
    """The perceived rating, labelled by where its own value lies."""
    return estimate_json(c, model, None if c is None else c.rating)


def wdl_json(w: Wdl | None) -> dict[str, int] | None:
    """W/D/L in the wire's shape: per mille, White's view."""
    if w is None:
        return None
    return {"win": w[0], "draw": w[1], "loss": w[2]}


def model_json(m: PerceivedModel | None) -> dict[str, Any] | None:
    """Which calibrated model the report used, and where it came from."""
    if m is None:
        return None
    return {
        "model": m.name,
        "min_moves": m.min_moves,
        "rating_low": m.rating_low,
        "rating_high": m.rating_high,
        "scale": m.scale,
        **dict(m.provenance),
    }


def head_to_head_json(h: HeadToHead) -> dict[str, Any]:
    return {
        "expected": _r(h.expected, 4),
        "expected_other": _r(h.expected_other, 4),
        "difference": _r(h.difference),
        "low": _r(h.low),
        "high": _r(h.high),
        "bounded": h.bounded,
    }


def accuracy_json(a: PlayerAccuracy | None) -> dict[str, Any] | None:
    """A player's accuracy in percent (None: no move counted)."""
    if a is None or a.moves == 0:
        return None
    return {
        "overall": a.overall,
        "moves": a.moves,
        "opening": a.opening,
        "middlegame": a.middlegame,
        "endgame": a.endgame,
    }


def _player_game_json(p: PlayerGame, model: PerceivedModel | None) -> dict[str, Any]:
    return {
        "name": p.name,
        "elo": p.elo,
        "accuracy": accuracy_json(p.accuracy),
        "perceived": perceived_label_json(p.calibrated, model),
        "form": estimate_json(p.form, model, p.elo),
        "algorithm4": perceived_json(p.perceived),
        "mean_gain": _r(p.mean_gain, 2),
        "effective_moves": _r(p.effective_moves, 2),
        "trace": [
            {
                "ply": t.ply,
                "move": t.move,
                "gain": t.gain,
                "perceived": calibrated_json(t.calibrated),
                "algorithm4": perceived_json(t.perceived),
            }
            for t in p.trace
        ],
    }


def _game_json(g: GameReport, model: PerceivedModel | None = None) -> dict[str, Any]:
    h = g.headers
    return {
        "number": g.number,
        "event": h.get("Event"),
        "site": h.get("Site"),
        "date": h.get("Date"),
        "round": h.get("Round"),
        "result": h.get("Result"),
        "start_score": g.start_score,
        "kind": g.kind,
        "wdl_model": g.wdl_model,
        "white": _player_game_json(g.white, model),
        "black": _player_game_json(g.black, model),
        "head_to_head": head_to_head_json(g.head_to_head),
        "plies": [
            {
                "ply": r.ply,
                "move": r.move,
                "mover": r.mover,
                "score": r.score,
                "gain": r.gain,
                "wdl": {"win": r.wdl[0], "draw": r.wdl[1], "loss": r.wdl[2]},
                "engine_wdl": wdl_json(r.engine_wdl),
            }
            for r in g.plies
        ],
    }


def _player_json(p: PlayerReport, model: PerceivedModel | None = None) -> dict[str, Any]:
    return {
        "name": p.name,
        "elo": _r(p.elo),
        "games": p.games,
        "accuracy": accuracy_json(p.accuracy),
        "perceived": perceived_label_json(p.calibrated, model),
        "form": estimate_json(p.form, model, p.elo),
        "algorithm4": perceived_json(p.perceived),
        "interval_method": p.interval_method,
        "mean_gain": _r(p.mean_gain, 2),
        "tournament": _r(p.tournament),
        "tournament_low": _r(p.tournament_low),
        "tournament_high": _r(p.tournament_high),
        "tournament_relative": _r(p.tournament_relative),
    }


def _engine_json(e: EngineStrength | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"rating": _r(e.rating), "low": _r(e.low), "high": _r(e.high), "players": e.players}


def _tournament_json(t: TournamentReport) -> dict[str, Any]:
    return {
        "pairing": t.method,
        "pairs": [
            {"a": p.a, "b": p.b, "games": p.games, **head_to_head_json(p.head_to_head)}
            for p in t.pairs
        ],
        "ratings": {
            name: {
                "actual": _r(r.actual),
                "estimated": _r(r.estimated),
                "relative": _r(r.relative),
                "component": r.component,
                "anchored": r.anchored,
                "opponents": r.opponents,
            }
            for name, r in t.fit.ratings.items()
        },
        "converged": t.fit.converged,
        "components": t.fit.components,
        "engine_by_elo": _engine_json(t.engine_by_elo),
        "engine_by_estimate": _engine_json(t.engine_by_estimate),
    }


# ---------------------------------------------------------------------------
# CSV

CSV_COLUMNS = (
    "player",
    "elo",
    "games",
    "moves",
    "perceived",
    "low",
    "high",
    "early",
    "algorithm4",
    "algorithm4_low",
    "algorithm4_high",
    "expected",
    "difference",
    "bounded",
    "interval_method",
    "mean_gain",
    "tournament",
    "tournament_low",
    "tournament_high",
    "form",
    "form_low",
    "form_high",
    "perceived_label",
    "form_label",
    "scale",
)


def _opt(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"


def csv_rows(report: AnalysisReport) -> list[list[str]]:
    """One row per player (header first): the calibrated perceived rating,
    then Algorithm 4's, the tournament estimate, then form and the labels."""
    rows: list[list[str]] = [list(CSV_COLUMNS)]
    model = report.model
    for p in report.players:
        pr = p.perceived
        c = p.calibrated
        f = p.form
        labels = (
            ("", "", "")
            if model is None
            else (
                (model.range_label(c.rating) if c else None) or "",
                (model.range_label(p.elo) if f else None) or "",
                model.scale,
            )
        )
        rows.append(
            [
                p.name,
                "" if p.elo is None else f"{p.elo:.0f}",
                str(p.games),
                str(pr.moves),
                _opt(c.rating if c else None),
                _opt(c.low if c else None),
                _opt(c.high if c else None),
                "" if c is None else ("true" if c.early else "false"),
                f"{pr.rating:.1f}",
                f"{pr.low:.1f}",
                f"{pr.high:.1f}",
                f"{pr.expected:.4f}",
                f"{pr.difference:.1f}",
                "true" if pr.bounded else "false",
                p.interval_method,
                "" if p.mean_gain is None else f"{p.mean_gain:.2f}",
                _opt(p.tournament),
                _opt(p.tournament_low),
                _opt(p.tournament_high),
                _opt(f.rating if f else None),
                _opt(f.low if f else None),
                _opt(f.high if f else None),
                *labels,
            ]
        )
    return rows
