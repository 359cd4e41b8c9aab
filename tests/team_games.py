"""PGN text of a team event's game, for the tests of team matches."""

from __future__ import annotations


def team_game(
    event: str, rnd: str, white: str, wt: str, black: str, bt: str, moves: str, result: str
) -> str:
    """One game of ``event`` between a player of team ``wt`` (White) and one of ``bt``."""
    return (
        f'[Event "{event}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[WhiteTeam "{wt}"]\n[BlackTeam "{bt}"]\n[WhiteElo "2400"]\n[BlackElo "2400"]\n'
        f'[Result "{result}"]\n\n{moves} {result}\n\n'
    )
