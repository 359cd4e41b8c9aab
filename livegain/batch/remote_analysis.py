"""Engine analysis of whole games by remote workers (``livegain analyze
--broker``): the same positions as the local batch (:mod:`.engine_analysis`),
searched by the workers through the broker (:mod:`livegain.remote`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess.pgn

from livegain.batch.engine_analysis import annotate_all, game_positions, to_search
from livegain.engine.cache import EvalCache
from livegain.engine.search import SearchLimit
from livegain.mqtt.address import BrokerAddress
from livegain.remote.evaluator import RemoteEvaluator
from livegain.remote.protocol import DEFAULT_PREFIX


async def analyse_games_remote(
    games: Sequence[chess.pgn.Game],
    broker: BrokerAddress,
    limit: SearchLimit,
    *,
    cache_path: str | Path | None = None,
    prefix: str = DEFAULT_PREFIX,
    engine_name: str | None = None,
    job_timeout: float = 30.0,
    wait_for_workers: float = 30.0,
) -> tuple[list[Any], str, RemoteEvaluator]:
    """Every position of every game evaluated by the workers: the annotated
    games (as :func:`.engine_analysis.analyse_games` makes them), the
    engine's name, and the (closed) evaluator with its counts.

    The positions the rules score with the game's history (a threefold
    repetition, the 50-move rule, insufficient material) are scored here and
    never sent to a worker, exactly as the local batch does
    (:func:`.engine_analysis.to_search`): a repetition is a draw on
    both paths, whatever a search of its bare FEN would say."""
    cache = EvalCache(cache_path) if cache_path is not None else None
    ev = RemoteEvaluator(
        broker,
        limit,
        prefix=prefix,
        engine_name=engine_name,
        cache=cache,
        job_timeout=job_timeout,
        wait_for_workers=wait_for_workers,
    )
    try:
        async with ev:
            prepared = [game_positions(g) for g in games]
            boards, _ = to_search(prepared)
            # All at once: the evaluator keeps the most urgent out and the rest
            # queued; the first failure ends the run.
            searched = await asyncio.gather(*(ev.evaluate(b) for b in boards))
            annotated = annotate_all(prepared, searched)
    finally:
        if cache is not None:
            cache.close()
    return annotated, ev.engine_name, ev
