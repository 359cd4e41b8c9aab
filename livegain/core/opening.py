"""The opening prior: the rating of the players who walked into the same opening.

Which moves a player chooses in the opening says something about his rating
before any engine looks at them: beginners and masters play different
openings. On rated games not used to fit it, the opening prior combined with
the moves' evidence reads lichess ratings closer than the moves alone, also
for players in no game of the fit (docs/validity.md, "The opening a player
chose").

The *key* of a player's opening after some plies is the game's moves from the
standard start up to and including the player's last move within the table's
first ``plies`` plies, with the player's side: White's and Black's tables
are apart (``w|e2e4 c7c5 g1f3``, ``b|e2e4 c7c5``). Each key's estimate was
fitted on rated games: the mean rating of the games through that prefix,
shrunk toward the estimate of the prefix one ply shorter (``n / (n + m)``),
down to the side's mean at the empty prefix. A table keeps the keys with
enough games; an opening it does not hold is read at its longest prefix that
it does hold.

The prior is a rating with a spread ``sd`` (the fit's residual standard
deviation of the ratings around the cross-fitted estimates): what
:meth:`~livegain.core.perceived.PerceivedModel.estimate` combines with the
moves' evidence. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: The longest prefix a table reads by default (plies), and the fewest games
#: a prefix needs to be kept in a fitted table.
DEFAULT_PLIES = 12
MIN_COUNT = 3


def opening_keys(
    white: bool, first_mover_is_white: bool, moves: Sequence[str], plies: int
) -> list[str]:
    """The keys of a player's opening from the empty prefix (the side's root)
    to the moves up to and including the player's last move within the first
    ``plies`` of ``moves`` (UCI, from the standard start)."""
    n = min(plies, len(moves))
    last = 0
    for j in range(1, n + 1):
        if (j % 2 == 1) == (first_mover_is_white == white):
            last = j
    side = "w" if white else "b"
    return [f"{side}|{' '.join(moves[:j])}" for j in range(last + 1)]


@dataclass(frozen=True)
class OpeningPrior:
    """What an opening says of its player's rating: ``rating`` with spread
    ``sd``; ``plies`` is how many plies of the key the table held."""

    rating: float
    sd: float
    plies: int


@dataclass(frozen=True)
class OpeningTable:
    """A fitted opening table with its provenance.

    ``estimates`` maps a key (:func:`opening_keys`) to its estimate; both
    sides' roots (``w|`` and ``b|``) are always there. ``plies``: the longest
    prefix read; ``m``: the shrinkage weight it was fitted with; ``sd``: the
    spread of the ratings around the estimates; ``scale``: the rating scale
    of the games it was fitted on; ``file``: the file name it was read from
    (as a model file names it)."""

    name: str
    scale: str
    plies: int
    m: float
    sd: float
    estimates: Mapping[str, float]
    provenance: dict[str, str] = field(default_factory=dict, compare=False)
    file: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for root in ("w|", "b|"):
            if root not in self.estimates:
                raise ValueError(f"opening table {self.name!r}: no estimate for the root {root!r}")
        if self.plies < 1 or self.sd <= 0:
            raise ValueError(f"opening table {self.name!r}: plies and sd must be positive")

    def prior(self, white: bool, first_mover_is_white: bool, moves: Sequence[str]) -> OpeningPrior:
        """The prior of the player of ``white``'s side after ``moves`` (UCI,
        from the standard start): the estimate of the longest prefix held."""
        keys = opening_keys(white, first_mover_is_white, moves, self.plies)
        for depth in range(len(keys) - 1, -1, -1):
            rating = self.estimates.get(keys[depth])
            if rating is not None:
                return OpeningPrior(rating, self.sd, depth)
        raise AssertionError("unreachable: the roots are always held")  # pragma: no cover
