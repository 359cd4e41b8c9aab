"""Evaluations kept in SQLite: one table layout, ``evals``, for every file that
keeps them (the evaluation cache, :mod:`livegain.engine.cache`, and the
service's store, :mod:`livegain.app.store`).

One row per (engine key, position): the score (``cp``, ``mate``), the
engine's W/D/L (three columns, all null when it gave none), ``depth``,
``nodes``, the best move and the PV (UCI moves, space-separated), and when
it was written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from livegain.core.evaluation import Evaluation

SCHEMA = """
CREATE TABLE IF NOT EXISTS evals (
    engine  TEXT NOT NULL,
    fen     TEXT NOT NULL,
    cp      INTEGER NOT NULL,
    mate    INTEGER,
    wdl_w   INTEGER,
    wdl_d   INTEGER,
    wdl_l   INTEGER,
    depth   INTEGER NOT NULL,
    nodes   INTEGER NOT NULL,
    best    TEXT,
    pv      TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (engine, fen)
) WITHOUT ROWID
"""

INSERT = (
    "INSERT OR REPLACE INTO evals"
    " (engine, fen, cp, mate, wdl_w, wdl_d, wdl_l, depth, nodes, best, pv, created)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

SELECT = (
    "SELECT cp, mate, wdl_w, wdl_d, wdl_l, depth, nodes, best, pv"
    " FROM evals WHERE engine = ? AND fen = ?"
)


def row_of(engine: str, fen: str, ev: Evaluation, now: float) -> tuple[Any, ...]:
    """The row that keeps ``ev`` (for :data:`INSERT`)."""
    return (
        engine,
        fen,
        ev.cp,
        ev.mate,
        *(ev.wdl or (None, None, None)),
        ev.depth,
        ev.nodes,
        ev.best,
        " ".join(ev.pv),
        now,
    )


def evaluation_of(row: Sequence[Any]) -> Evaluation:
    """The evaluation a row (from :data:`SELECT`) keeps; ValueError or TypeError
    when the row is not one this layout writes."""
    cp, mate, w, d, loss, depth, nodes, best, pv = row
    wdl = None if w is None else (int(w), int(d), int(loss))
    return Evaluation(
        cp=int(cp),
        mate=None if mate is None else int(mate),
        wdl=wdl,
        depth=int(depth),
        nodes=int(nodes),
        best=best,
        pv=tuple(pv.split()) if pv else (),
    )
