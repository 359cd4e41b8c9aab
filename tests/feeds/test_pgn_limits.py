"""The PGN reader's limits: plies per game and games per text, refused cheaply."""

from __future__ import annotations

from livegain.feeds.pgn import MAX_PLIES, parse_game, parse_pgn

HEAD = '[Event "Big"]\n[White "A"]\n[Black "B"]\n[Round "3.4"]\n\n'


def shuffle(plies: int) -> str:
    words = []
    for i in range(plies):
        if i % 2 == 0:
            words.append(f"{i // 2 + 1}.")
        words.append(("Nf3", "Nf6", "Ng1", "Ng8")[i % 4])
    return HEAD + " ".join(words) + " *\n"


def test_game_up_to_max_plies_is_read_a_longer_one_refused() -> None:
    ok = parse_game(shuffle(MAX_PLIES))
    assert ok.snapshot is not None and len(ok.snapshot.moves) == MAX_PLIES and ok.issues == ()
    refused = parse_game(shuffle(MAX_PLIES + 1))
    assert refused.snapshot is None
    ((where, message),) = [(i.where, i.message) for i in refused.issues]
    assert where == "game 1 (A - B, round 3.4)"
    assert f"more than {MAX_PLIES} plies" in message and "max_plies" in message
    assert refused.headers[1] == ("White", "A")
    # Any limit, or none.
    assert parse_game(shuffle(20), max_plies=19).snapshot is None
    big = parse_game(shuffle(MAX_PLIES + 1), max_plies=None).snapshot
    assert big is not None and len(big.moves) == MAX_PLIES + 1


def test_a_game_s_move_list_past_the_limit_is_not_read_as_chess() -> None:
    """Refusal reads words only: the illegal move after the limit is never reached."""
    text = shuffle(30).replace(" *\n", " Qxz9 *\n")
    g = parse_game(text, max_plies=30)
    assert g.snapshot is None and "more than 30 plies" in g.issues[0].message
    g = parse_game(text, max_plies=31)
    assert g.snapshot is not None and g.snapshot.moves[-1] == "Qxz9"  # passed on, as ever


def test_games_past_max_games_are_refused_in_one_entry() -> None:
    text = "\n".join(shuffle(4).replace("3.4", f"3.{k}") for k in range(1, 6))
    games = parse_pgn(text, "feed", max_games=3)
    assert [g.snapshot.board for g in games[:3] if g.snapshot] == [1, 2, 3]
    last = games[3]
    assert len(games) == 4 and last.snapshot is None
    assert [(i.where, i.message) for i in last.issues] == [
        ("games 4-5", "5 games in one text, more than the limit of 3 (max_games): 2 refused")
    ]
    assert len(parse_pgn(text, "feed")) == 5  # no limit by default
    one = parse_pgn(text, "feed", max_games=4)[-1]
    assert one.issues[0].where == "game 5"
