"""The batch pairing (livegain.core.swiss_batch): its invariants over many
random Swiss states, brute force on small ones, agreement with
``swiss_pairing.pair_round`` on simple hand cases, and rows of a batch paired
independently of each other."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from livegain.core.swiss_batch import pair_batch, pair_round_batch
from livegain.core.swiss_pairing import ABSOLUTE, Entrant, Pairing, pair_round, preference

State = tuple[list[Entrant], list[tuple[str, str]]]


def _event(n: int, rounds: int, rng: random.Random) -> list[State]:
    """The states before each round of a Swiss paired with ``pair_round_batch``,
    random results (a point for a bye)."""
    keys = [f"P{i:02d}" for i in range(n)]
    points = dict.fromkeys(keys, 0.0)
    colours = dict.fromkeys(keys, "")
    byes: set[str] = set()
    met: list[tuple[str, str]] = []
    states: list[State] = []
    for _ in range(rounds):
        entrants = [Entrant(k, points[k], colours[k], k in byes) for k in keys]
        states.append((entrants, list(met)))
        pairing = pair_round_batch(entrants, met)
        for w, b in pairing.games:
            x = rng.choice((1.0, 0.5, 0.0))
            points[w] += x
            points[b] += 1.0 - x
            colours[w] += "W"
            colours[b] += "B"
            met.append((w, b))
        if pairing.bye is not None:
            points[pairing.bye] += 1.0
            byes.add(pairing.bye)
            colours[pairing.bye] += "-"
    return states


def _broken(entrants: Sequence[Entrant], met: set[frozenset[str]], a: str, b: str) -> bool:
    """A rematch, or two players with the same absolute colour preference."""
    if frozenset((a, b)) in met:
        return True
    by = {e.key: e for e in entrants}
    ca, sa = preference(by[a].colours)
    cb, sb = preference(by[b].colours)
    return sa == ABSOLUTE and sb == ABSOLUTE and ca == cb


def _pairable(players: list[str], ok: set[frozenset[str]]) -> bool:
    if not players:
        return True
    a = players[0]
    return any(
        frozenset((a, b)) in ok and _pairable(players[1:i] + players[i + 1 :], ok)
        for i, b in enumerate(players[1:], start=1)
    )


def _check_basic(entrants: Sequence[Entrant], pairing: Pairing) -> None:
    keys = [e.key for e in entrants]
    seen = [p for g in pairing.games for p in g] + ([pairing.bye] if pairing.bye else [])
    assert sorted(seen) == sorted(keys)  # everyone paired once, or given the bye
    assert (pairing.bye is not None) == (len(keys) % 2 == 1)
    if pairing.bye is not None:
        by = {e.key: e for e in entrants}
        if not all(e.had_bye for e in entrants):
            assert not by[pairing.bye].had_bye
            # the lowest-ranked player without one
            ranked = sorted(range(len(keys)), key=lambda i: (-entrants[i].points, i))
            free = [keys[i] for i in ranked if not entrants[i].had_bye]
            assert pairing.bye == free[-1]


def test_invariants_over_many_random_events() -> None:
    rng = random.Random(2024)
    for _ in range(40):
        n = rng.randint(12, 40)
        for entrants, met in _event(n, rng.randint(3, 9), rng):
            _check_basic(entrants, pair_round_batch(entrants, met))


def test_no_rematch_nor_colour_clash_when_brute_force_finds_a_pairing() -> None:
    """Small events (4-10 players, up to n/2 + 1 rounds): whenever some
    pairing of the players (but the bye) has no rematch and no two players
    with the same absolute colour preference, the batch pairing has none; then
    nobody gets a colour three times in a row nor a colour difference beyond
    ±2."""
    rng = random.Random(5)
    checked = 0
    for _ in range(400):
        n = rng.randint(4, 10)
        for entrants, met in _event(n, rng.randint(2, n // 2 + 1), rng):
            pairing = pair_round_batch(entrants, met)
            _check_basic(entrants, pairing)
            done = {frozenset(m) for m in met}
            rest = [e.key for e in entrants if e.key != pairing.bye]
            ok = {
                frozenset((a, b))
                for i, a in enumerate(rest)
                for b in rest[i + 1 :]
                if not _broken(entrants, done, a, b)
            }
            if not _pairable(rest, ok):
                continue
            checked += 1
            colours = {e.key: e.colours for e in entrants}
            for w, b in pairing.games:
                assert not _broken(entrants, done, w, b), (entrants, met, pairing)
                colours[w] += "W"
                colours[b] += "B"
            for key, c in colours.items():
                played = c.replace("-", "")
                assert "WWW" not in played[-3:] and "BBB" not in played[-3:], (key, c)
                assert abs(played.count("W") - played.count("B")) <= 2, (key, c)
    assert checked > 1000


def _entrants(rows: Sequence[tuple[float, str]], byes: Sequence[int] = ()) -> list[Entrant]:
    return [Entrant(f"P{i + 1}", pts, cols, i in byes) for i, (pts, cols) in enumerate(rows)]


@pytest.mark.parametrize(
    ("entrants", "met"),
    [
        # round 1: S1 against S2, colours alternating from the top board
        (_entrants([(0.0, "")] * 8), []),
        # round 1, odd: the last player gets the bye
        (_entrants([(0.0, "")] * 7), []),
        # round 2 after 1-8 won, 7-2, 3-6, 5-4 drawn... two score groups
        (
            _entrants(
                [
                    (1.0, "W"),
                    (0.5, "B"),
                    (1.0, "W"),
                    (0.5, "B"),
                    (0.5, "W"),
                    (0.0, "B"),
                    (0.5, "W"),
                    (0.0, "B"),
                ]
            ),
            [("P1", "P5"), ("P6", "P2"), ("P3", "P7"), ("P8", "P4")],
        ),
        # a rematch in S1[0]-S2[0] mended by the next transposition
        (
            _entrants(
                [
                    (1.0, "W"),
                    (1.0, "B"),
                    (1.0, "W"),
                    (1.0, "B"),
                    (0.0, "B"),
                    (0.0, "W"),
                    (0.0, "B"),
                    (0.0, "W"),
                ]
            ),
            [("P1", "P5"), ("P6", "P2"), ("P3", "P7"), ("P8", "P4"), ("P1", "P3")],
        ),
        # round 2, the six winners: S1 prefers Black, White, Black and S2
        # Black, White, Black; one pair must clash; the Dutch order's first
        # transposition with one clash is P1-P10 (clash), P2-P12, P3-P11
        (
            _entrants(
                [
                    (1.0, "W"),
                    (1.0, "B"),
                    (1.0, "W"),
                    (0.0, "B"),
                    (0.0, "W"),
                    (0.0, "B"),
                    (0.0, "B"),
                    (0.0, "W"),
                    (0.0, "B"),
                    (1.0, "W"),
                    (1.0, "B"),
                    (1.0, "W"),
                ]
            ),
            [("P1", "P7"), ("P8", "P2"), ("P3", "P9"), ("P10", "P4"), ("P5", "P11"), ("P12", "P6")],
        ),
        # the bye to the lowest-ranked player who has not had one
        (
            _entrants([(1.0, "W"), (1.0, "B"), (0.5, "W"), (0.5, "B"), (1.0, "-")], byes=[4]),
            [("P1", "P3"), ("P4", "P2")],
        ),
    ],
)
def test_agrees_with_pair_round_on_simple_cases(
    entrants: list[Entrant], met: list[tuple[str, str]]
) -> None:
    assert pair_round_batch(entrants, met) == pair_round(entrants, met)


def test_teams_may_meet_with_the_same_absolute_colour_preference() -> None:
    """A Swiss of teams (``teams=True``): colour is a quality criterion only,
    so S1[i] meets S2[i] even when both have had White twice; the Dutch
    pairing of players keeps them apart."""
    rows = [(1.0, "WW"), (1.0, "BW"), (1.0, "BW"), (1.0, "WW"), (1.0, "WB"), (1.0, "BW")]
    entrants = _entrants(rows)
    met = [("P1", "P2"), ("P3", "P4"), ("P5", "P6"), ("P1", "P3"), ("P2", "P6"), ("P4", "P5")]
    teams = pair_round_batch(entrants, met, teams=True)
    players = pair_round_batch(entrants, met)
    assert {"P1", "P4"} in [set(g) for g in teams.games]
    assert {"P1", "P4"} not in [set(g) for g in players.games]
    for pairing in (teams, players):
        assert not {frozenset(g) for g in pairing.games} & {frozenset(m) for m in met}


def test_each_row_of_a_batch_is_paired_on_its_own() -> None:
    rng = random.Random(9)
    states = [s for _ in range(6) for s in _event(14, 6, rng)]
    n, rounds = 14, 6
    sims = len(states)
    points = np.zeros((sims, n))
    colours = np.zeros((sims, n, rounds), dtype=np.int8)
    had_bye = np.zeros((sims, n), dtype=bool)
    met = np.zeros((sims, n, n), dtype=bool)
    for s, (entrants, pairs) in enumerate(states):
        for i, e in enumerate(entrants):
            points[s, i] = e.points
            had_bye[s, i] = e.had_bye
            colours[s, i, : len(e.colours)] = [{"W": 1, "B": -1, "-": 0}[c] for c in e.colours]
        for a, b in pairs:
            i, j = int(a[1:]), int(b[1:])
            met[s, i, j] = met[s, j, i] = True
    got = pair_batch(points, colours, had_bye, met)
    for s, (entrants, pairs) in enumerate(states):
        alone = pair_round_batch(entrants, pairs)
        games = {
            (f"P{w:02d}", f"P{b:02d}") for w, b in zip(got.white[s], got.black[s], strict=True)
        }
        assert games == set(alone.games)
        assert got.bye[s] == -1 and alone.bye is None


def test_checks() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        pair_round_batch([Entrant("A", 0.0), Entrant("A", 0.0)])
    with pytest.raises(ValueError, match="colours are W, B or -"):
        pair_round_batch([Entrant("A", 0.0, "X"), Entrant("B", 0.0)])
    with pytest.raises(ValueError, match="do not match"):
        pair_batch(
            np.zeros((2, 4)),
            np.zeros((2, 3, 1), np.int8),
            np.zeros((2, 4), bool),
            np.zeros((2, 4, 4), bool),
        )
