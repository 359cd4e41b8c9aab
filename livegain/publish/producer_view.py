"""The producer's ranking from what the server shows: each board's published
state and its event's standings, read into :class:`core.producer.BoardLook`
and ranked by :func:`core.producer.rank_boards` (docs/producer.md)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from livegain.core.producer import BoardLook, rank_boards
from livegain.feeds.json_bounds import loads_bounded
from livegain.publish import schema


def shown_chance(ev: schema.EvalInfo | None) -> float | None:
    """White's expected score of the W/D/L shown (the engine's when no other)."""
    if ev is None:
        return None
    w = ev.wdl or ev.engine_wdl
    if w is None:
        return None
    total = w.win + w.draw + w.loss
    return (w.win + w.draw / 2.0) / total if total > 0 else None


def first_place_odds(standings: Iterable[schema.Standings]) -> dict[tuple[str, str], float]:
    """(event, player name or 'fide:ID') -> chance of finishing first."""
    out: dict[tuple[str, str], float] = {}
    for st in standings:
        for row in st.rows:
            if row.win is None:
                continue
            out[(st.event, row.name)] = row.win
            if row.fide_id:
                out[(st.event, f"fide:{row.fide_id}")] = row.win
    return out


def _odds(
    odds: dict[tuple[str, str], float], event: str | None, player: schema.Player
) -> float | None:
    if event is None:
        return None
    if player.fide_id and (event, f"fide:{player.fide_id}") in odds:
        return odds[(event, f"fide:{player.fide_id}")]
    return odds.get((event, player.name))


def look(
    state: schema.BoardState,
    odds: dict[tuple[str, str], float],
    ended_ago: float | None,
) -> BoardLook:
    """What the ranking sees of one published board."""
    chances = [c for c in (shown_chance(m.eval) for m in state.moves) if c is not None]
    now = shown_chance(state.eval)
    if now is not None and (not chances or chances[-1] != now):
        chances.append(now)
    c = state.clocks
    return BoardLook(
        board_id=state.board_id,
        live=state.result == "*",
        chances=tuple(chances),
        white_time_trouble=c.white_time_trouble,
        black_time_trouble=c.black_time_trouble,
        white_clock=c.white,
        black_clock=c.black,
        white_first=_odds(odds, state.tournament, state.white),
        black_first=_odds(odds, state.tournament, state.black),
        white=state.white.name,
        black=state.black.name,
        result=state.result,
        ended_ago=ended_ago,
    )


def standings_of(raw: Iterable[bytes]) -> list[schema.Standings]:
    """The hub's standings messages (JSON bytes) as models; unreadable ones skipped."""
    out: list[schema.Standings] = []
    for data in raw:
        try:
            out.append(schema.Standings.model_validate(loads_bounded(data)))
        except ValueError:
            continue
    return out


def ranking(
    states: Iterable[schema.BoardState],
    standings: Iterable[schema.Standings],
    ended_ago: dict[str, float],
    at_ms: int,
) -> schema.ProducerRanking:
    """Every board ranked; ``ended_ago``: board id -> seconds since its end was seen."""
    odds = first_place_odds(standings)
    by_id = {s.board_id: s for s in states}
    ranked = rank_boards(look(s, odds, ended_ago.get(s.board_id)) for s in by_id.values())
    rows = []
    for r in ranked:
        s = by_id[r.board_id]
        rows.append(
            schema.ProducerRow(
                board_id=r.board_id,
                rank=r.rank,
                score=r.score,
                reason=r.reason,
                terms=[
                    schema.ProducerTerm(name=t.name, points=round(t.points, 3), reason=t.reason)
                    for t in r.terms
                ],
                tournament=s.tournament,
                round=s.round,
                board=s.board,
                white=s.white.name,
                black=s.black.name,
                result=s.result,
                overlay=f"/overlay/board?board={quote(r.board_id, safe='')}",
            )
        )
    return schema.ProducerRanking(at_ms=at_ms, boards=rows)
