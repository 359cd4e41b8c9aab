"""pair_round against bbpPairings, a FIDE-endorsed Dutch engine.

bbpPairings is built outside the project by ``bench/build_bbp.sh`` (found at
``$LIVEGAIN_BBP``, else /work/build/bbpPairings/bbpPairings.exe). CI does not
build it, so these tests skip without it, on CI too: the project does not
depend on it. The states are synthetic and deterministic: a seeded Swiss whose
earlier rounds were paired by ``pair_round`` itself with seeded results, then
the next round paired by both.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from livegain.core.swiss_pairing import Entrant, Pairing, pair_round

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import trf
from swiss_pairing_agreement import state

Rounds = list[list[tuple[str, str, str]]]

MIN_IDENTICAL = 0.88
"""Share of the synthetic rounds that pair_round pairs exactly as bbp (every
pair, its colours and the bye): measured 0.93 (223 of 240) on the states below."""


@pytest.fixture(scope="module")
def bbp() -> Path:
    found = trf.find_bbp()
    if found is None:
        pytest.skip("bbpPairings not built (bench/build_bbp.sh; $LIVEGAIN_BBP)")
    return found


def synthetic(seed: int) -> tuple[list[str], Rounds, list[dict[str, str]], int]:
    """A Swiss of 10-30 players after 1-4 rounds, paired by pair_round, with
    seeded results (the higher-ranked player scores a little more often)."""
    rng = random.Random(seed)
    n = rng.randint(10, 30)
    played = rng.randint(1, 4)
    order = [f"P{k:02d}" for k in range(1, n + 1)]
    rounds: Rounds = []
    byes: list[dict[str, str]] = []
    for _ in range(played):
        entrants, met = state(order, rounds, order, byes)
        pairing = pair_round(entrants, met)
        games = []
        for white, black in pairing.games:
            edge = 0.1 if order.index(white) < order.index(black) else -0.1
            x = rng.random()
            result = "1-0" if x < 0.4 + edge else "1/2-1/2" if x < 0.7 else "0-1"
            games.append((white, black, result))
        rounds.append(games)
        byes.append({pairing.bye: "U"} if pairing.bye else {})
    return order, rounds, byes, max(played + 1, 5)


def both(
    bbp: Path,
    order: list[str],
    rounds: Rounds,
    byes: list[dict[str, str]],
    total: int,
    present: Sequence[str] | None = None,
) -> tuple[Pairing, Pairing]:
    """(pair_round's pairing, bbp's) of the next round."""
    here = order if present is None else present
    entrants, met = state(order, rounds, here, byes)
    paired = trf.pair(bbp, trf.from_rounds(order, rounds, here, total, byes))
    ref = Pairing(
        tuple((order[w - 1], order[b - 1]) for w, b in paired.games),
        None if paired.bye is None else order[paired.bye - 1],
    )
    return pair_round(entrants, met), ref


def same(a: Pairing, b: Pairing) -> bool:
    return set(a.games) == set(b.games) and a.bye == b.bye


def test_pair_round_gives_bbps_pairing_on_most_synthetic_rounds(bbp: Path) -> None:
    seeds = range(240)
    identical = sum(same(*both(bbp, *synthetic(s))) for s in seeds)
    assert identical / len(seeds) >= MIN_IDENTICAL, f"{identical} of {len(seeds)}"


def test_hand_made_rounds_exactly_as_bbp(bbp: Path) -> None:
    # round 2 of eight: winners meet winners, top half of each score group
    # against its bottom half, colours alternate from round 1
    order = list("ABCDEFGH")
    r1 = [("A", "E", "1-0"), ("F", "B", "0-1"), ("C", "G", "1-0"), ("H", "D", "0-1")]
    mine, ref = both(bbp, order, [r1], [{}], 5)
    assert set(ref.games) == {("D", "A"), ("B", "C"), ("E", "H"), ("G", "F")}
    assert same(mine, ref)
    # an odd score group floats its lowest player down to meet the top of the next
    r1 = [("A", "E", "1-0"), ("F", "B", "0-1"), ("C", "G", "1-0"), ("H", "D", "1/2-1/2")]
    mine, ref = both(bbp, order, [r1], [{}], 5)
    assert same(mine, ref)
    # seven players: the lowest-ranked of the lowest score group gets the bye
    order = list("ABCDEFG")
    r1 = [("A", "E", "1-0"), ("F", "B", "0-1"), ("C", "G", "1-0")]
    mine, ref = both(bbp, order, [r1], [{"D": "U"}], 5)
    assert ref.bye == "G"
    assert same(mine, ref)
    # a rematch is avoided by the next player of S2 (a transposition)
    order = list("ABCDEF")
    r1 = [("A", "D", "1/2-1/2"), ("E", "B", "1/2-1/2"), ("C", "F", "1/2-1/2")]
    r2 = [("D", "B", "1/2-1/2"), ("A", "F", "1/2-1/2"), ("E", "C", "1/2-1/2")]
    mine, ref = both(bbp, order, [r1, r2], [{}, {}], 5)
    assert same(mine, ref)
    # a player absent from the round is left out by both
    order = list("ABCDEFGH")
    r1 = [("A", "E", "1-0"), ("F", "B", "0-1"), ("C", "G", "1-0"), ("H", "D", "0-1")]
    mine, ref = both(bbp, order, [r1], [{}], 5, present=list("ABCDEFG"))
    assert ref.bye is not None and "H" not in {p for g in ref.games for p in g}
    assert same(mine, ref)


def test_entrants_and_trf_describe_the_same_state() -> None:
    order = list("ABCDE")
    rounds = [[("A", "C", "1-0"), ("D", "B", "1/2-1/2")]]
    entrants, met = state(order, rounds, ["A", "B", "C", "E"], [{"E": "U"}])
    assert entrants == [
        Entrant("A", 1.0, "W", floats="-"),
        Entrant("B", 0.5, "B", floats="-"),
        Entrant("C", 0.0, "B", floats="-"),
        Entrant("E", 1.0, "-", had_bye=True, floats="D"),
    ]
    rounds.append([("A", "B", "1-0"), ("E", "C", "1/2-1/2"), ("D", "E", "*")][:2])
    entrants, _ = state(order, rounds, ["A", "B", "C", "E"], [{"E": "U"}, {"D": "Z"}])
    assert [e.floats for e in entrants] == ["-D", "-U", "-U", "DD"]
    assert met == [("A", "C"), ("D", "B")]
