"""How an event scores its games: points for a win, a draw and a loss, per colour.

Most events score a game 1 / ½ / 0 (:meth:`Scoring.standard`). Others give a
win more weight (3 / 1 / 0, as Norway Chess in its classical games), or give
Black more than White for the same result (a draw worth 1 to White and 1.5 to
Black). A :class:`Scoring` holds the points of each result for each colour;
the loss is usually 0.

A finished game is read first as **game points** (1 a win, ½ a draw, 0 a
loss, :func:`outcome`); the scoring turns each side's game points into the
event's points for that side's colour (:meth:`Scoring.game`,
:meth:`Scoring.points`). A game decided by forfeit scores as the result it
stands for: ``+/-`` is White's win and Black's loss (White gets White's win
points, Black gets Black's loss points), ``-/+`` the reverse, and ``-/-`` (a
double forfeit) a loss for both.

A bye has no colour: it keeps the value it is given, in the event's points,
and the scoring does not change it. For the tie-breaks that look at a round's
result (wins, Sonneborn-Berger) a bye stands for the best result whose points
it reaches (:meth:`Scoring.bye_game_points`).

**Armageddon** (Norway Chess): a classical draw is followed by an
Armageddon game between the same two players; its winner ends the pairing
with :attr:`Armageddon.win` points in all (1.5 at Norway Chess), its loser
with :attr:`Armageddon.loss` (1), and a drawn Armageddon counts as won by the
colour :attr:`Armageddon.draw` names (Black: the draw odds Black plays for).
Those are the totals of the pairing: they replace the classical draw's
points once the Armageddon is over (until then the classical draw counts
alone). :meth:`Scoring.norway` is that rule with 3 / 1 / 0 classical games.

Lichess broadcast rounds carry their scoring as a ``customScoring`` document,
``{"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1.5}}``;
:meth:`Scoring.from_lichess` reads it, and the configuration's ``scoring``
key (the same shape, with an optional ``loss`` and an optional ``armageddon
= {win, loss, draw}``; or a preset name, :data:`PRESETS`, read by
:meth:`Scoring.from_config`). Lichess has no Armageddon entry of its own: an
event that broadcasts its Armageddons as rounds of their own gives those
rounds a ``customScoring`` worth the Armageddon's extra points (winner 0.5,
loser 0, a draw 0.5 to Black and 0 to White);
:meth:`Scoring.with_lichess_armageddon` reads such a document into the rule.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Colour = Literal["white", "black"]

MAX_POINTS = 100.0
"""The most a result may be worth (a larger value is taken for a mistake)."""

EXACT_STEP = 1.0 / 1024.0
"""Points that are all multiples of this add up exactly in binary floating point."""

ROUND_DIGITS = 9
"""Decimals that totals are rounded to when the points are not all multiples of
:data:`EXACT_STEP` (0.1, 1/3...), so that equal totals compare equal whatever
the order in which they were added."""

_GAME_RESULTS: dict[str, tuple[float, float, bool]] = {
    "1-0": (1.0, 0.0, True),
    "0-1": (0.0, 1.0, True),
    "1/2-1/2": (0.5, 0.5, True),
    "+/-": (1.0, 0.0, False),
    "-/+": (0.0, 1.0, False),
    "-/-": (0.0, 0.0, False),
    "+--": (1.0, 0.0, False),
    "--+": (0.0, 1.0, False),
    "---": (0.0, 0.0, False),
}


def outcome(result: str) -> tuple[float, float, bool]:
    """White's and Black's game points (1, ½, 0) of a finished result, and whether
    the game was played over the board.

    ``1-0``, ``0-1``, ``1/2-1/2`` (or ``½-½``); forfeits ``+/-``, ``-/+``,
    ``-/-`` (also ``+--``, ``--+``, ``---``). ValueError for anything else
    (``*`` included).
    """
    found = _GAME_RESULTS.get(result.strip().replace("½", "1/2"))
    if found is None:
        raise ValueError(f"not a finished result: {result!r}")
    return found


def _show(value: object) -> str:
    """``repr(value)``, cut short (a document may come from a feed)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: object, where: str) -> float:
    """``value`` as a float: a real number, not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{where}: expected a number, got {_show(value)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{where}: {_show(value)} is more than {MAX_POINTS:g}") from None


def _points(value: object, where: str) -> float:
    """A number of points: finite, from 0 to :data:`MAX_POINTS`."""
    x = _number(value, where)
    if not math.isfinite(x):
        raise ValueError(f"{where}: {x} is not a finite number")
    if x < 0:
        raise ValueError(f"{where}: {x} is negative")
    if x > MAX_POINTS:
        raise ValueError(f"{where}: {x} is more than {MAX_POINTS:g}")
    return x


@dataclass(frozen=True)
class SidePoints:
    """The points one colour gets for a win, a draw and a loss.

    Each is a number from 0 to :data:`MAX_POINTS`, with loss <= draw <= win
    and loss < win.
    """

    win: float
    draw: float
    loss: float = 0.0

    def __post_init__(self) -> None:
        for name in ("win", "draw", "loss"):
            object.__setattr__(self, name, _points(getattr(self, name), name))
        if not self.loss <= self.draw <= self.win or self.loss == self.win:
            raise ValueError(
                f"expected loss <= draw <= win and loss < win, got win {self.win:g}, "
                f"draw {self.draw:g}, loss {self.loss:g}"
            )

    def of(self, game_points: float) -> float:
        """The points for a result of ``game_points`` (1 a win, ½ a draw, 0 a loss)."""
        if game_points == 1.0:
            return self.win
        if game_points == 0.5:
            return self.draw
        if game_points == 0.0:
            return self.loss
        raise ValueError(f"game points are 0, 0.5 or 1, got {game_points}")

    def as_dict(self) -> dict[str, float]:
        return {"win": self.win, "draw": self.draw, "loss": self.loss}


_STANDARD = SidePoints(1.0, 0.5, 0.0)


@dataclass(frozen=True)
class Armageddon:
    """The Armageddon that follows a classical draw: the points of its winner
    and of its loser **for the whole pairing** (classical draw included), and
    the colour a drawn Armageddon counts as a win for.

    Norway Chess: ``Armageddon(1.5, 1.0, "black")``. Each is a number from 0 to
    :data:`MAX_POINTS`, with loss < win.
    """

    win: float
    loss: float
    draw: Colour = "black"

    def __post_init__(self) -> None:
        for name in ("win", "loss"):
            object.__setattr__(self, name, _points(getattr(self, name), name))
        if not self.loss < self.win:
            raise ValueError(f"expected loss < win, got win {self.win:g}, loss {self.loss:g}")
        if self.draw not in ("white", "black"):
            raise ValueError(f"draw: expected 'white' or 'black', got {_show(self.draw)}")

    def white_wins(self, white_game_points: float) -> bool:
        """Whether the Armageddon's White won it, from his game points (1, ½, 0):
        a draw goes to :attr:`draw`."""
        if white_game_points not in (0.0, 0.5, 1.0):
            raise ValueError(f"game points are 0, 0.5 or 1, got {white_game_points}")
        return white_game_points == 1.0 or (white_game_points == 0.5 and self.draw == "white")

    def as_dict(self) -> dict[str, float | str]:
        return {"win": self.win, "loss": self.loss, "draw": self.draw}

    @classmethod
    def from_doc(cls, doc: object, where: str = "scoring.armageddon") -> Armageddon:
        """``{win, loss, draw}`` (``draw`` optional: ``"black"``); ValueError naming
        the entry."""
        if not isinstance(doc, Mapping):
            raise ValueError(f"{where}: expected a table {{win, loss, draw}}, got {_show(doc)}")
        extra = sorted(str(k) for k in doc if k not in ("win", "loss", "draw"))
        if extra:
            raise ValueError(f"{where}: unknown key {_show(extra[0])} (expected win, loss, draw)")
        for key in ("win", "loss"):
            if key not in doc:
                raise ValueError(f"{where}: no {key!r}")
        draw = doc.get("draw", "black")
        if draw not in ("white", "black"):
            raise ValueError(f'{where}.draw: expected "white" or "black", got {_show(draw)}')
        try:
            return cls(
                _number(doc["win"], f"{where}.win"), _number(doc["loss"], f"{where}.loss"), draw
            )
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class Scoring:
    """Points for a win, a draw and a loss, for White and for Black; with an
    ``armageddon``, the Armageddon that follows a classical draw."""

    white: SidePoints = field(default=_STANDARD)
    black: SidePoints = field(default=_STANDARD)
    armageddon: Armageddon | None = None
    _exact: bool = field(init=False, repr=False, compare=False)
    _standard: bool = field(init=False, repr=False, compare=False)
    _tables: tuple[dict[float, float], dict[float, float]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for colour in ("white", "black"):
            if not isinstance(getattr(self, colour), SidePoints):
                raise TypeError(f"scoring.{colour}: expected SidePoints")
        if self.armageddon is not None and not isinstance(self.armageddon, Armageddon):
            raise TypeError("scoring.armageddon: expected Armageddon")
        values = [*self.white.as_dict().values(), *self.black.as_dict().values()]
        if self.armageddon is not None:
            values += [self.armageddon.win, self.armageddon.loss]
        object.__setattr__(self, "_exact", all((v / EXACT_STEP).is_integer() for v in values))
        object.__setattr__(
            self,
            "_standard",
            self.white == self.black == _STANDARD and self.armageddon is None,
        )
        object.__setattr__(
            self,
            "_tables",
            tuple({g: side.of(g) for g in (0.0, 0.5, 1.0)} for side in (self.white, self.black)),
        )

    @classmethod
    def standard(cls) -> Scoring:
        """1 for a win, ½ for a draw, 0 for a loss, either colour."""
        return cls(_STANDARD, _STANDARD)

    @classmethod
    def symmetric(cls, win: float, draw: float, loss: float = 0.0) -> Scoring:
        """The same points for both colours (``Scoring.symmetric(3, 1)``: 3 / 1 / 0)."""
        side = SidePoints(win, draw, loss)
        return cls(side, side)

    @classmethod
    def norway(cls) -> Scoring:
        """Norway Chess: a classical win 3, a draw 1, a loss 0; a classical draw is
        followed by an Armageddon whose winner ends with 1.5 and loser with 1,
        a drawn Armageddon counting as Black's win."""
        return cls(SidePoints(3.0, 1.0), SidePoints(3.0, 1.0), Armageddon(1.5, 1.0, "black"))

    @classmethod
    def from_config(cls, doc: object) -> Scoring:
        """The configuration's ``scoring``: a preset name (:data:`PRESETS`:
        ``"standard"``, ``"norway"``) or a table in the shape of
        :meth:`from_lichess` (with an optional ``armageddon``)."""
        if isinstance(doc, str):
            preset = PRESETS.get(doc.strip().lower())
            if preset is None:
                raise ValueError(
                    f"scoring: unknown preset {_show(doc)} (expected one of {', '.join(PRESETS)})"
                )
            return preset
        return cls.from_lichess(doc)

    @classmethod
    def from_lichess(cls, doc: object) -> Scoring:
        """A Lichess ``customScoring`` document:
        ``{"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1.5}}``.

        Both colours, each with ``win`` and ``draw``; an optional ``loss``
        (default 0) is accepted too (the configuration's shape). ValueError,
        naming the entry, for anything else: a missing or unknown key, a value
        that is not a number (a bool or a string included), NaN or infinite,
        negative, above :data:`MAX_POINTS`, or points out of order (loss <=
        draw <= win, loss < win).
        """
        if not isinstance(doc, Mapping):
            raise ValueError(
                "scoring: expected a table {white = {win, draw}, black = {win, draw}}, "
                f"got {_show(doc)}"
            )
        unknown = sorted(str(k) for k in doc if k not in ("white", "black", "armageddon"))
        if unknown:
            raise ValueError(
                f"scoring: unknown key {_show(unknown[0])} (expected white, black, armageddon)"
            )
        sides: list[SidePoints] = []
        colour: Colour
        for colour in ("white", "black"):
            if colour not in doc:
                raise ValueError(f"scoring: no {colour!r} entry")
            entry = doc[colour]
            if not isinstance(entry, Mapping):
                raise ValueError(
                    f"scoring.{colour}: expected a table {{win, draw[, loss]}}, got {_show(entry)}"
                )
            extra = sorted(str(k) for k in entry if k not in ("win", "draw", "loss"))
            if extra:
                raise ValueError(
                    f"scoring.{colour}: unknown key {_show(extra[0])} (expected win, draw, loss)"
                )
            for key in ("win", "draw"):
                if key not in entry:
                    raise ValueError(f"scoring.{colour}: no {key!r}")
            values = {
                k: _number(entry[k], f"scoring.{colour}.{k}")
                for k in ("win", "draw", "loss")
                if k in entry
            }
            try:
                sides.append(SidePoints(**values))
            except ValueError as exc:
                raise ValueError(f"scoring.{colour}: {exc}") from None
        arm = doc.get("armageddon")
        return cls(sides[0], sides[1], None if arm is None else Armageddon.from_doc(arm))

    def with_lichess_armageddon(self, doc: object) -> Scoring:
        """This scoring with the Armageddon rule that an Armageddon round's own
        Lichess ``customScoring`` describes: the extra points the Armageddon
        gives, ``{"white": {"win": 0.5, "draw": 0}, "black": {"win": 0.5,
        "draw": 0.5}}`` at Norway Chess. Its winner's total is this scoring's
        draw plus the Armageddon's win, its loser's the draw plus the
        Armageddon's loss; the colour whose draw is worth its win is the one a
        drawn Armageddon favours. ValueError when the document says neither
        (both colours, or neither, get a win's points for a draw), when the two
        colours' wins or losses differ, or when this scoring's draw is not the
        same for both colours."""
        extra = Scoring.from_lichess(doc)
        if self.white.draw != self.black.draw:
            raise ValueError(
                "scoring: an Armageddon needs the same classical draw for both colours"
            )
        if extra.white.win != extra.black.win or extra.white.loss != extra.black.loss:
            raise ValueError("scoring: the Armageddon round's win (or loss) differs by colour")
        white_draw = extra.white.draw == extra.white.win
        black_draw = extra.black.draw == extra.black.win
        if white_draw == black_draw:
            raise ValueError(
                "scoring: the Armageddon round's draw must be worth a win to one colour only"
            )
        base = self.white.draw
        rule = Armageddon(
            base + extra.white.win, base + extra.white.loss, "white" if white_draw else "black"
        )
        return Scoring(self.white, self.black, rule)

    def as_dict(self) -> dict[str, dict[str, float | str]]:
        """The configuration's shape (what :meth:`from_lichess` reads back)."""
        out: dict[str, dict[str, float | str]] = {
            "white": dict(self.white.as_dict()),
            "black": dict(self.black.as_dict()),
        }
        if self.armageddon is not None:
            out["armageddon"] = self.armageddon.as_dict()
        return out

    @property
    def is_standard(self) -> bool:
        """1 / ½ / 0 for either colour, no Armageddon."""
        return self._standard

    def armageddon_points(self, white_game_points: float) -> tuple[float, float]:
        """The pairing's points in all for the Armageddon's White and Black, from
        White's game points in it (1, ½, 0; a draw goes to the rule's colour).
        ValueError without an Armageddon rule."""
        rule = self.armageddon
        if rule is None:
            raise ValueError("an Armageddon game, but the scoring has no Armageddon rule")
        if rule.white_wins(white_game_points):
            return rule.win, rule.loss
        return rule.loss, rule.win

    @property
    def exact(self) -> bool:
        """Every value is a multiple of :data:`EXACT_STEP`: totals add up exactly.
        Otherwise totals are rounded to :data:`ROUND_DIGITS` decimals (:meth:`tidy`)."""
        return self._exact

    def tidy(self, total: float) -> float:
        """``total`` as compared and shown: itself when :attr:`exact`, else rounded."""
        return total if self._exact else round(total, ROUND_DIGITS)

    @property
    def by_game_points(self) -> tuple[Mapping[float, float], Mapping[float, float]]:
        """White's and Black's points by game points (0, 0.5, 1): lookup tables."""
        return self._tables

    def side(self, colour: Colour) -> SidePoints:
        return self.white if colour == "white" else self.black

    def game(self, white_points: float, black_points: float) -> tuple[float, float]:
        """White's and Black's points for a game's game points (1, ½, 0 each)."""
        return self.white.of(white_points), self.black.of(black_points)

    def points(self, result: str) -> tuple[float, float]:
        """White's and Black's points for a result string (see :func:`outcome`):
        ``Scoring.symmetric(3, 1).points("1/2-1/2") == (1.0, 1.0)``; a forfeit
        scores as the result it stands for."""
        w, b, _ = outcome(result)
        return self.game(w, b)

    @property
    def most(self) -> float:
        """The most one pairing can give a player (the larger win, or an
        Armageddon's win when it is more)."""
        best = max(self.white.win, self.black.win)
        return best if self.armageddon is None else max(best, self.armageddon.win)

    @property
    def bye_win(self) -> float:
        """What a bye must be worth to count as a win (the smaller win)."""
        return min(self.white.win, self.black.win)

    def bye_game_points(self, value: float) -> float:
        """The game points a bye worth ``value`` stands for: 1 when it is worth a
        win (:attr:`bye_win`), ½ when it is worth a draw (the smaller draw) and
        more than a loss (the larger loss), else 0. Standard scoring: a bye
        worth 1, ½ or 0 stands for 1, ½ or 0."""
        if value >= self.bye_win:
            return 1.0
        if value >= min(self.white.draw, self.black.draw) and value > max(
            self.white.loss, self.black.loss
        ):
            return 0.5
        return 0.0

    def label(self) -> str:
        """Short text: ``"3/1/0"``, or ``"White 3/1/0, Black 3/1.5/0"``."""

        def text(s: SidePoints) -> str:
            return f"{s.win:g}/{s.draw:g}/{s.loss:g}"

        main = (
            text(self.white)
            if self.white == self.black
            else f"White {text(self.white)}, Black {text(self.black)}"
        )
        arm = self.armageddon
        if arm is None:
            return main
        return f"{main}, Armageddon {arm.win:g}/{arm.loss:g} (drawn: {arm.draw.title()} wins)"


STANDARD = Scoring.standard()
"""1 / ½ / 0 for either colour (the default everywhere)."""

PRESETS: dict[str, Scoring] = {"standard": STANDARD, "norway": Scoring.norway()}
"""Scorings the configuration names (``scoring = "norway"``)."""
