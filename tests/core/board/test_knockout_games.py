"""A knockout's mini-match from one plain PGN feed: the same two players meet
several times in one round (games R.1, R.2, R.3, ...), each game its own board,
while a board the feed merely renumbers stays the same board."""

from __future__ import annotations

from core.board.test_game import OPERA
from livegain.core.board.registry import BoardRegistry
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

A = PlayerInfo("Aronian, Levon", rating=2813)
B = PlayerInfo("So, Wesley", rating=2744)


def game(
    board: int, white: PlayerInfo, black: PlayerInfo, n: int, result: str = "*"
) -> GameSnapshot:
    return GameSnapshot(
        source="pgn",
        white=white,
        black=black,
        moves=tuple(OPERA[:n]),
        result=result,
        event="Cup",
        round="1",
        board=board,
    )


def test_each_game_of_a_mini_match_is_a_board_of_its_own() -> None:
    reg = BoardRegistry(PAPER_ENGINE_RATING)
    reg.apply(game(1, A, B, len(OPERA), "1/2-1/2"))
    reg.apply(game(2, B, A, len(OPERA), "1/2-1/2"))
    # game 3, the first rapid game: A has White again, as in game 1
    reg.apply(game(3, A, B, 4))
    boards = sorted((g.board, g.white.name, g.plies, g.result) for g in reg.boards.values())
    assert boards == [
        (1, A.name, len(OPERA), "1/2-1/2"),
        (2, B.name, len(OPERA), "1/2-1/2"),
        (3, A.name, 4, "*"),
    ]
    # game 3 goes on, on its own board
    reg.apply(game(3, A, B, 6))
    assert sorted(g.plies for g in reg.boards.values()) == [6, len(OPERA), len(OPERA)]


def test_a_renumbered_board_is_still_the_same_board() -> None:
    reg = BoardRegistry(PAPER_ENGINE_RATING)
    reg.apply(game(1, A, B, 6))
    reg.apply(game(4, A, B, 8))  # the feed moved the game in progress to board 4
    assert [(g.plies) for g in reg.boards.values()] == [8]
    # a finished game renumbered comes with all its moves: still one board
    reg.apply(game(4, A, B, len(OPERA), "1-0"))
    reg.apply(game(2, A, B, len(OPERA), "1-0"))
    assert [(g.plies, g.result) for g in reg.boards.values()] == [(len(OPERA), "1-0")]
