"""Players are told apart by FIDE id when there is one, not by how a feed spells the name."""

from __future__ import annotations

import pytest

from livegain.core.board.registry import BoardRegistry
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo, normalise_name, player_key
from livegain.core.snapshot import player_key as exported

PRAGG_LCC = PlayerInfo("Praggnanandhaa, R", fide_id="25059530")
PRAGG_PGN = PlayerInfo("Rameshbabu Praggnanandhaa", fide_id="25059530", title="GM")
GUKESH = PlayerInfo("Gukesh, D", fide_id="46616543")


@pytest.mark.parametrize(
    ("player", "key"),
    [
        (PRAGG_LCC, "fide:25059530"),
        (PRAGG_PGN, "fide:25059530"),
        (PlayerInfo("Anybody", fide_id=" 025059530 "), "fide:25059530"),
        (PlayerInfo("Carlsen,  Magnus"), "carlsen magnus"),
        (PlayerInfo("Magnus CARLSEN"), "carlsen magnus"),
        (PlayerInfo("Ĺubojević, Ljubomir"), "ljubomir lubojevic"),
        (PlayerInfo("Ding Liren", fide_id=""), "ding liren"),
    ],
)
def test_player_key(player: PlayerInfo, key: str) -> None:
    assert player_key(player) == key
    assert exported is player_key


def test_normalise_name_ignores_order_case_accents_and_punctuation() -> None:
    assert normalise_name("Firouzja,  Alireza") == normalise_name("alireza FIROUZJA")
    assert normalise_name("Giri, A.") != normalise_name("Giri, Anish")


def game(white: PlayerInfo, black: PlayerInfo, source: str, **kw: object) -> GameSnapshot:
    args: dict[str, object] = dict(
        source=source, white=white, black=black, moves=("e4", "e5"), round="4"
    )
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def test_name_variants_with_one_fide_id_are_one_player_across_sources() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(game(PRAGG_LCC, GUKESH, "lcc", board=2, group="tata"))
    renamed_gukesh = PlayerInfo("Dommaraju Gukesh", fide_id="46616543")
    b = t.apply(game(PRAGG_PGN, renamed_gukesh, "pgn", board=9, group="tata", priority=1))
    assert a.board_id is not None and b.board_id == a.board_id and len(t.boards) == 1


def test_a_renamed_player_with_the_same_fide_id_keeps_his_board() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(game(PRAGG_LCC, GUKESH, "pgn"))
    b = t.apply(game(PRAGG_PGN, GUKESH, "pgn", moves=("e4", "e5", "Nf3")))
    assert b.board_id == a.board_id and len(t.boards) == 1
    assert b.board_id is not None and t.board(b.board_id).white.name == PRAGG_PGN.name


def test_the_same_name_with_other_fide_ids_is_two_players() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    one = PlayerInfo("Sharma, A", fide_id="1")
    two = PlayerInfo("Sharma, A", fide_id="2")
    a = t.apply(game(one, GUKESH, "pgn"))
    b = t.apply(game(two, GUKESH, "pgn"))
    assert a.board_id != b.board_id
    assert player_key(one) != player_key(two)


def test_without_a_fide_id_on_one_side_the_name_decides() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(game(PRAGG_LCC, GUKESH, "lcc", group="tata"))
    same = t.apply(game(PlayerInfo("R Praggnanandhaa"), GUKESH, "pgn", group="tata"))
    other = t.apply(game(PlayerInfo("Rameshbabu Praggnanandhaa"), GUKESH, "pgn", group="tata"))
    assert same.board_id == a.board_id
    assert other.board_id != a.board_id
