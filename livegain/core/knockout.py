"""A knockout mini-match: the chance of going through, tie-breaks included.

A knockout round (the FIDE World Cup) is a mini-match of a few classical
games; when it is level, tie-break stages follow in order (the World Cup's:
two rapid games, two faster rapid games, two blitz games), each a mini-match
of its own that ends the tie when it is not level; when every stage is level,
an **Armageddon** game decides: a draw sends its Black player through.

Given the score of the stage being played, the game in progress (its
win/draw/loss), the games left in that stage and the stages after it, each
game's chances from player A's view (so that colours, a White advantage and
each stage's own time control are the caller's: :class:`Stage` holds one
:class:`~livegain.core.odds.GameOdds` per game), the chance that A goes
through is exact: for each stage, the distribution of the score difference
over its games left (each game moves it by +1, 0 or -1) gives P(A ahead),
P(level) and P(B ahead) at its end (:func:`outcome`: the same figures as
:func:`livegain.core.odds.match_odds_games`, in plain Python, faster for the
few games of a stage: a bracket asks for thousands of mini-matches), and

    P(A through) = P(A ahead) + P(level) x P(A through the stages after).

Without an Armageddon, a tie after the last stage is settled by the last
stage played again until it is not level (a geometric series:
``P(ahead) / (P(ahead) + P(behind))``).

Colours drawn by lot: the World Cup draws the colours of each tie-break
stage's first game (and of the Armageddon) anew, so before a stage starts its
colours are unknown. A stage (``lot``) or an Armageddon (``other``) can carry
A's chances with the other colours too: each order then counts with chance
1/2, exactly (the lot is independent of the games).

The format of a knockout round (which games make which stage:
:class:`StageRule`, :data:`WORLD_CUP_STAGES`, :class:`KnockoutRules`) is
here too: :mod:`livegain.core.knockout_table` reads the boards with it.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from livegain.core.human_wdl import CLASSICAL_OTB
from livegain.core.odds import GameOdds

BracketOrder = Literal["adjacent", "folded"]
"""Who meets whom in the next round (:mod:`livegain.core.bracket`):
``adjacent``, the winners of a round's matches 2j and 2j+1 (in board order);
``folded``, the winners of matches i and n-1-i (boards in seeding order:
1 v 64, 2 v 63, ...)."""


@dataclass(frozen=True)
class Stage:
    """A stage of the mini-match: its name and each of its games' chances, A's view.

    ``lot``: the same games with the colours the other way round, when the
    colours are drawn by lot (each order with chance 1/2); None: as given."""

    name: str
    games: tuple[GameOdds, ...]
    lot: tuple[GameOdds, ...] | None = None


@dataclass(frozen=True)
class Armageddon:
    """The last game: A's chances in it, and whether A has Black (a draw sends
    Black through). ``other``: A's chances with the other colour, when the
    colours are drawn by lot (each with chance 1/2); None: as given."""

    odds: GameOdds
    a_black: bool
    other: GameOdds | None = None

    def a_through(self) -> float:
        given = self.odds.win + (self.odds.draw if self.a_black else 0.0)
        if self.other is None:
            return given
        flipped = self.other.win + (0.0 if self.a_black else self.other.draw)
        return 0.5 * (given + flipped)


@dataclass(frozen=True)
class Knockout:
    """Where a mini-match stands: the stage being played (its score, the game in
    progress and the games left in it) and the stages after it."""

    stage: Stage
    """The stage being played; its ``games`` are the games not started in it."""
    score_a: float = 0.0
    score_b: float = 0.0
    current: GameOdds | None = None
    """A game of the stage in progress (its chances, A's view), if any."""
    later: tuple[Stage, ...] = ()
    armageddon: Armageddon | None = None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Through:
    """A's chance of going through, and where it is decided."""

    a: float
    """A goes through."""
    in_stage: float
    """Decided in the stage being played (either way)."""
    by_stage: tuple[tuple[str, float], ...]
    """Per later stage (and "Armageddon"): the chance the mini-match reaches it."""

    @property
    def b(self) -> float:
        return 1.0 - self.a


def outcome(games: Sequence[GameOdds], lead: float = 0.0) -> tuple[float, float, float]:
    """P(A ahead), P(level), P(B ahead) after ``games`` (A's view), A leading
    by ``lead`` points before them: the distribution of the difference, each
    game adding +1 (A wins), 0 or -1."""
    dist: dict[float, float] = {lead: 1.0}
    for g in games:
        step: dict[float, float] = {}
        for d, p in dist.items():
            for move, q in ((1.0, g.win), (0.0, g.draw), (-1.0, g.loss)):
                if q > 0.0:
                    step[d + move] = step.get(d + move, 0.0) + p * q
        dist = step
    ahead = sum(p for d, p in dist.items() if d > 0)
    behind = sum(p for d, p in dist.items() if d < 0)
    return ahead, dist.get(0.0, 0.0), behind


def _level_after(stage: Stage) -> tuple[float, float, float]:
    """A ahead, level, B ahead at the end of a stage played from its start
    (the mean of both colour orders when they are drawn by lot)."""
    one = outcome(stage.games)
    if stage.lot is None:
        return one
    other = outcome(stage.lot)
    return (
        0.5 * (one[0] + other[0]),
        0.5 * (one[1] + other[1]),
        0.5 * (one[2] + other[2]),
    )


def through(k: Knockout) -> Through:
    """The exact chance that A goes through (see the module docstring)."""
    left = ([k.current] if k.current is not None else []) + list(k.stage.games)
    a_now, reach, b_now = outcome(left, k.score_a - k.score_b)
    a = a_now  # reach: the chance of reaching the next stage
    by_stage: list[tuple[str, float]] = []
    last: tuple[float, float, float] | None = None
    for stage in k.later:
        by_stage.append((stage.name, reach))
        ahead, level, behind = _level_after(stage)
        a += reach * ahead
        reach *= level
        last = (ahead, level, behind)
    if reach > 1e-15:
        if k.armageddon is not None:
            by_stage.append(("Armageddon", reach))
            a += reach * k.armageddon.a_through()
        elif last is not None and last[0] + last[2] > 0.0:
            # the last stage again, until it is not level
            a += reach * last[0] / (last[0] + last[2])
        else:
            raise ValueError("the mini-match can end level with nothing to break the tie")
    return Through(a=min(1.0, max(0.0, a)), in_stage=a_now + b_now, by_stage=tuple(by_stage))


def alternating(
    first_a_white: bool, white: GameOdds, black: GameOdds, n: int
) -> tuple[GameOdds, ...]:
    """``n`` games with colours alternating, A White in the first when
    ``first_a_white``: ``white`` are A's chances with White, ``black`` with Black."""
    return tuple(white if (i % 2 == 0) == first_a_white else black for i in range(n))


@dataclass(frozen=True)
class StageRule:
    """One stage of a knockout round's format: its name, its number of games,
    the kind of game whose ratings-only W/D/L its games not started take
    (:data:`livegain.core.human_wdl.KINDS`), the PGN ``TimeControl`` its games
    carry (a game with that tag is of this stage, whatever its number), and
    whether it is the Armageddon (one game; a draw sends Black through)."""

    name: str
    games: int
    kind: str = CLASSICAL_OTB
    time_control: str | None = None
    armageddon: bool = False

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a knockout stage needs a name")
        if self.games < 1:
            raise ValueError(f"stage {self.name!r}: games must be at least 1, got {self.games}")
        if self.armageddon and self.games != 1:
            raise ValueError(f"stage {self.name!r}: an Armageddon is one game, got {self.games}")


WORLD_CUP_STAGES: tuple[StageRule, ...] = (
    StageRule("classical", 2, time_control="40/5400+30:1800+30"),
    StageRule("rapid 25+10", 2, time_control="1500+10"),
    StageRule("rapid 10+10", 2, time_control="600+10"),
    StageRule("blitz 5+3", 2, time_control="300+3"),
    StageRule("Armageddon", 1, armageddon=True),
)
"""The FIDE World Cup's (2011, 2013): games 1-2 classical, 3-4 rapid (25+10),
5-6 rapid (10+10), 7-8 blitz (5+3), 9 the Armageddon. Every stage's games not
started take the classical over-the-board ratings-only model
(docs/standings.md §8: the only fitted model on FIDE ratings)."""


def check_stages(stages: tuple[StageRule, ...], where: str) -> None:
    """ValueError naming ``where`` unless ``stages`` is a usable format: at
    least one stage, and an Armageddon only last."""
    if not stages:
        raise ValueError(f"{where}: a knockout needs at least one stage")
    for s in stages[:-1]:
        if s.armageddon:
            raise ValueError(f"{where}: the Armageddon {s.name!r} must be the last stage")


@dataclass(frozen=True)
class KnockoutRules:
    """A knockout event's format: the stages of its rounds (``round_stages``:
    round number -> stages, for rounds played otherwise, such as a final of
    four classical games), and the bracket order of the rounds not yet paired
    (None: read from the rounds already paired, else ``adjacent``)."""

    stages: tuple[StageRule, ...] = WORLD_CUP_STAGES
    round_stages: tuple[tuple[int, tuple[StageRule, ...]], ...] = ()
    bracket: BracketOrder | None = None

    def __post_init__(self) -> None:
        check_stages(self.stages, "stages")
        for rnd, stages in self.round_stages:
            check_stages(stages, f"round_stages of round {rnd}")

    def stages_of(self, rnd: int | None) -> tuple[StageRule, ...]:
        """The stages of round ``rnd`` (None: the event's)."""
        for r, stages in self.round_stages:
            if r == rnd:
                return stages
        return self.stages


def stage_rule(stages: tuple[StageRule, ...], index: int) -> StageRule | None:
    """The ``index``-th stage a mini-match can reach (from 0): the configured
    ones, then, without an Armageddon, the last one again and again (named
    ``"blitz 5+3 (2)"``, ...); None past an Armageddon."""
    if index < len(stages):
        return stages[index]
    last = stages[-1]
    if last.armageddon:
        return None
    return StageRule(
        f"{last.name} ({index - len(stages) + 2})", last.games, last.kind, last.time_control
    )


def stage_of_game(stages: tuple[StageRule, ...], game: int) -> int | None:
    """The index of the stage (:func:`stage_rule`) that game number ``game``
    (from 1) of a mini-match belongs to; None past an Armageddon."""
    if game < 1:
        return None
    index, first = 0, 1
    while True:
        rule = stage_rule(stages, index)
        if rule is None:
            return None
        if game < first + rule.games:
            return index
        first += rule.games
        index += 1


def stage_of_time_control(stages: tuple[StageRule, ...], time_control: str | None) -> int | None:
    """The index of the only configured stage whose ``time_control`` is the
    tag ``time_control`` (spaces ignored); None when none or several are."""
    if not time_control:
        return None
    tag = "".join(time_control.split())
    found = [i for i, s in enumerate(stages) if "".join((s.time_control or "").split()) == tag]
    return found[0] if len(found) == 1 else None
