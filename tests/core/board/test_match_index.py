"""Matching through the board index finds what a scan of every board finds.

A tournament looks at only the boards that can match a snapshot (those of its
source and event group, or of its players, or of its board number); a scan of
every board, in board order, is the reference. Both are fed the same random
sequence of snapshots from several sources and groups, with renamed players,
unknown players, shifted game ids, missing rounds and board numbers, removals,
takeovers and the board limit, and must give the same answer every time.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

import pytest

from core.board.test_game import OPERA
from livegain.core.board.board import BoardGame
from livegain.core.board.identity import Identity, identity
from livegain.core.board.matching import board_keys
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import Applied
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

# Another line from move 3 on: a source showing it conflicts with OPERA.
OTHER = ["e4", "e5", "Nc3", "Nf6", "f4", "d5", "fxe5", "Nxe4", "Nf3", "Be7"]
PEOPLE = 12
ROUNDS = ("1", "2")
BOARDS = 6


class ScanAll(BoardRegistry):
    """The reference: every board is looked at, in board order."""

    def _candidates(self, src: str, group: str | None, ident: Identity) -> Iterable[BoardGame]:
        return self.boards.values()


def person(rng: random.Random, i: int) -> PlayerInfo:
    """Player ``i`` as one feed may write them: with or without the FIDE id, the
    full name, the surname only or a misspelling, or not entered yet. Players 0
    and 1 share a name (told apart by FIDE id only)."""
    if rng.random() < 0.1:
        return PlayerInfo(rng.choice(["?", "NN", ""]))
    fide = str(4100 + i) if rng.random() < 0.7 else None
    surname = "Same" if i < 2 else f"Player{i}"
    name = rng.choice([f"{surname}, Ann", f"Ann {surname}", surname, f"{surname}x, Ann"])
    return PlayerInfo(name, fide_id=fide)


@dataclass
class Feed:
    rng: random.Random
    pairings: dict[tuple[str, int], tuple[int, int]]
    lines: dict[tuple[str, int], list[str]]

    def snapshot(self, now: float) -> GameSnapshot:
        rng = self.rng
        rnd, board = rng.choice(ROUNDS), rng.randint(1, BOARDS)
        wi, bi = self.pairings[(rnd, board)]
        moves = tuple(self.lines[(rnd, board)][: rng.randint(0, 8)])
        white, black = person(rng, wi), person(rng, bi)
        src = rng.choice(["lcc", "mirror", "solo", "cloud"])
        shown_round: str | None = rnd if rng.random() < 0.9 else rng.choice([None, "?"])
        shown_board: int | None = board if rng.random() < 0.85 else None
        game_id: str | None = None
        group: str | None = None
        priority, after = 0, None
        if src == "lcc":
            group = "ev" if rng.random() < 0.9 else None
            game_id = f"lcc:{rnd}:{board}"
        elif src == "mirror":
            group, priority, after = "ev", 1, 5.0
            game_id = str(900 + 10 * int(rnd) + board) if rng.random() < 0.8 else None
            if shown_round is not None and shown_board is not None:
                shown_round, shown_board = f"{shown_round}.{shown_board}", None
        elif src == "cloud":
            # Positional ids: the pairing index, which moves when the pairings change.
            group = rng.choice(["ev", "ev2", None])
            game_id = f"c{rnd}-{(board + rng.randint(0, 1)) % BOARDS}"
        return GameSnapshot(
            source=src,
            white=white,
            black=black,
            moves=moves,
            game_id=game_id,
            round=shown_round,
            board=shown_board,
            group=group,
            priority=priority,
            takeover_after=after,
            received_at=now,
        )

    def repair(self) -> None:
        """A correction: one game gets other players, or another line."""
        slot = (self.rng.choice(ROUNDS), self.rng.randint(1, BOARDS))
        if self.rng.random() < 0.7:
            self.pairings[slot] = (self.rng.randrange(PEOPLE), self.rng.randrange(PEOPLE))
        else:
            self.lines[slot] = self.rng.choice([OPERA, OTHER])


def outcome(a: Applied) -> tuple[object, ...]:
    return (a.board_id, a.new_board, a.info_changed, a.takeover, [e.message for e in a.errors])


def assert_index_is_current(t: BoardRegistry) -> None:
    assert t._index_keys == {bid: board_keys(g) for bid, g in t.boards.items()}
    filed: dict[object, set[str]] = {}
    for bid, keys in t._index_keys.items():
        for k in keys:
            filed.setdefault(k, set()).add(bid)
    assert {k: set(ids) for k, ids in t._index.items()} == filed


@pytest.mark.parametrize("seed", range(12))
def test_indexed_matching_answers_as_a_scan_of_every_board(seed: int) -> None:
    rng = random.Random(seed)
    limit = rng.choice([None, 14])
    t = BoardRegistry(PAPER_ENGINE_RATING, max_boards=limit)
    ref = ScanAll(PAPER_ENGINE_RATING, max_boards=limit)
    slots = [(r, b) for r in ROUNDS for b in range(1, BOARDS + 1)]
    feed = Feed(
        rng,
        {s: (rng.randrange(PEOPLE), rng.randrange(PEOPLE)) for s in slots},
        {s: OPERA for s in slots},
    )
    now = 0.0
    matched = 0
    for _ in range(300):
        now += rng.uniform(0.0, 3.0)
        action = rng.random()
        if action < 0.7:
            snap = feed.snapshot(now)
            answer = t.match(snap)
            assert answer == ref.match(snap), snap
            matched += answer is not None
            assert outcome(t.apply(snap)) == outcome(ref.apply(snap)), snap
        elif action < 0.8:
            snap = feed.snapshot(now)
            assert t.match(snap) == ref.match(snap), snap
        elif action < 0.88:
            assert [outcome(a) for a in t.tick(now)] == [outcome(a) for a in ref.tick(now)]
        elif action < 0.93 and t.boards:
            bid = rng.choice(list(t.boards))
            assert t.remove(bid) and ref.remove(bid)
        else:
            feed.repair()
        assert list(t.boards) == list(ref.boards)
        assert_index_is_current(t)
    assert matched > 50  # the sequence matches games to boards, not only makes new ones
    for bid, g in t.boards.items():
        r = ref.board(bid)
        assert (g.seen_as, g.game_ids, g.source_active) == (r.seen_as, r.game_ids, r.source_active)


def pgn(k: int, white: str = "White", black: str = "Black", **kw: object) -> GameSnapshot:
    args: dict[str, object] = dict(
        source="pgn",
        white=PlayerInfo(f"{white}, {k}"),
        black=PlayerInfo(f"{black}, {k}"),
        moves=("e4", "e5"),
        round=f"1.{k}",
        game_id=f"g{k}",
    )
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def looked_at(t: BoardRegistry, snap: GameSnapshot) -> list[str]:
    return [g.board_id for g in t._candidates(snap.source, snap.group, identity(snap))]


def test_a_game_is_matched_against_the_boards_it_may_be_not_every_board() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING, max_boards=None)
    ids = [t.apply(pgn(k)).board_id for k in range(1, 201)]
    assert t.match(pgn(201)) is None and looked_at(t, pgn(201)) == []
    assert looked_at(t, pgn(7)) == [ids[6]]
    # A name corrected (the same game id): the board is found under the new name.
    assert t.apply(pgn(7, white="Renamed")).board_id == ids[6]
    assert looked_at(t, pgn(7, white="Renamed", game_id=None)) == [ids[6]]
    assert t.match(pgn(7, white="Renamed", game_id=None)) == ids[6]
    assert looked_at(t, pgn(7, game_id=None)) == [] and t.match(pgn(7, game_id=None)) is None
    # Players not entered yet: only the board with that number can be the game.
    unknown = GameSnapshot(source="pgn", white=PlayerInfo("?"), black=PlayerInfo("?"), round="1.9")
    assert looked_at(t, unknown) == [ids[8]] and t.match(unknown) == ids[8]
    assert t.remove(ids[8])
    assert looked_at(t, unknown) == [] and t.match(unknown) is None
