"""The livegain wire protocol, defined once.

The same message bodies travel over WebSockets (to overlays and sites) and
MQTT (retained per-board state and per-ply updates). JSON Schema files are
exported from these models to ``docs/protocol/``.

Server -> client messages: ``hello``, ``boards``, ``boards_diff``, ``snapshot``,
``update``, ``standings``, ``moment``, ``error``, ``pong``. Client -> server: ``subscribe``,
``unsubscribe``, ``ping``, ``list_boards``, ``subscribe_standings``,
``unsubscribe_standings``.

Conventions: scores are centipawns from White's point of view, clipped to
+/-3900; WDL is per mille from White's point of view; ratings are Elo points;
times are seconds (clocks) or epoch milliseconds (``*_ms``); plies count from 1
(ply 1 is the first move of the game).

Each player has three ratings: ``*_perceived`` is the calibrated estimate
from this game's moves alone (:class:`Perceived`, what an audience is shown;
null without a calibrated model), ``*_form`` his official rating updated by
those moves (the same shape; null without an official rating) and
``*_algorithm4`` the paper's Algorithm 4 (:class:`Algorithm4`), kept beside
them. Protocol 2 introduced the calibrated/Algorithm 4 split (protocol 1's
``Perceived`` was Algorithm 4's).

Protocol 3: ``EvalInfo.wdl`` is the human win/draw/loss model's (fitted on
real results, named by ``wdl_model``), the engine's own W/D/L is
``engine_wdl``; ``*_form``; ``Perceived`` names its rating ``scale`` and
carries a ``label`` instead of ``in_range`` (every player gets a number).

Protocol 4: each player's ``*_accuracy`` (lichess's accuracy, overall and by
phase: :class:`Accuracy`) in snapshots and updates; the ``moment`` message
(:class:`Moment`: a blunder, a missed win, a turnaround, a game's end).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL_VERSION = 4

Color = Literal["white", "black"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Player(_Model):
    name: str
    title: str | None = None
    federation: str | None = None
    rating: int | None = Field(
        default=None, description="official (FIDE) rating when the feed has it"
    )
    fide_id: str | None = None


class Wdl(_Model):
    """Win/draw/loss per mille from White's point of view (sums to 1000)."""

    win: int
    draw: int
    loss: int


class EvalInfo(_Model):
    cp: int = Field(description="centipawns, White's view, clipped to +/-3900")
    mate: int | None = Field(default=None, description="mate in N from White's view")
    wdl: Wdl | None = Field(
        default=None,
        description="the chances shown: the human W/D/L model's (``wdl_model``), from the "
        "evaluation, the move number, the side to move and the players' official ratings; "
        "without a model (``wdl_model`` null) the engine's own W/D/L, else the win-chance "
        "curve",
    )
    engine_wdl: Wdl | None = Field(
        default=None,
        description="the engine's own W/D/L (Stockfish playing itself), null when the "
        "engine gives none; show it, if at all, labelled as the engine's",
    )
    wdl_model: str | None = Field(
        default=None,
        description="name of the human W/D/L model that made ``wdl``; null: no model",
    )
    wdl_fallback: bool = Field(
        default=False,
        description="the model is not one fitted for this game's kind (classical over the "
        "board, online rapid) and evaluation source: the nearest one was taken",
    )
    depth: int
    best: str | None = Field(default=None, description="best move in SAN, if known")


class Perceived(_Model):
    """A calibrated rating with its 95 % interval (docs/maths.md): as
    ``*_perceived`` the strength a player is showing in this game from his
    moves alone (on the lichess scale, the opening he chose included); as
    ``*_form`` his official rating updated by those moves.
    Every player gets a number; ``label`` says when it lies outside the
    ratings the model was validated on (show it beside the number)."""

    rating: float = Field(description="the estimate, Elo points on the model's ``scale``")
    low: float = Field(description="lower end of the 95 % interval")
    high: float = Field(description="upper end of the 95 % interval")
    moves: int = Field(description="moves of this player counted so far")
    early: bool = Field(
        description="fewer moves than the model's minimum: show 'too early', not the number"
    )
    model: str = Field(description="name of the calibrated model that made the estimate")
    scale: Literal["fide", "lichess"] = Field(
        default="lichess",
        description="the rating scale the model is fitted on: FIDE (over the board) or "
        "lichess (online)",
    )
    label: str | None = Field(
        default=None,
        description="null: the player's official rating (the estimate's, for an unrated "
        "player) lies in the model's validated range; 'extrapolated' above it; the "
        "model's own words below it ('not validated on FIDE games' for a FIDE-scale "
        "model, else 'extrapolated'); show it beside the number",
    )
    range_low: float | None = Field(
        default=None,
        description="lower end of the model's validated rating range (the 1 % quantile "
        "of the ratings it was fitted to); null when the model gives no range",
    )
    range_high: float | None = Field(
        default=None,
        description="upper end of the model's validated rating range (the 99 % quantile "
        "of the ratings it was fitted to); null when the model gives no range",
    )


class Algorithm4(_Model):
    """The paper's Algorithm 4 perceived rating (against the engine), with its
    95 % interval; biased on real games, kept beside the calibrated one."""

    rating: float
    low: float
    high: float
    difference: float = Field(description="rating difference to the engine, d_i")
    expected: float = Field(description="expected score against the engine, p_i")
    moves: int = Field(description="moves of this player counted so far")
    bounded: bool = Field(description="p was 0 or 1: the difference is clamped at +/-800")


class TraceAlgorithm4(_Model):
    """Algorithm 4's rating at one point of a trace."""

    rating: float
    low: float
    high: float
    difference: float = Field(description="rating difference to the engine, d_i")
    bounded: bool = Field(description="p was 0 or 1: the difference is clamped at +/-800")


class TraceForm(_Model):
    """``form`` at one point of a trace: the official rating updated by the
    moves so far, with its 95 % interval."""

    rating: float
    low: float
    high: float


class TracePoint(_Model):
    """One point of a player's rating trace (the paper's Figure 6), right after
    his move ``ply``: the calibrated estimate (null rating, low and high, and
    ``early`` true, without a calibrated model), his ``form`` and Algorithm 4's."""

    ply: int
    rating: float | None = Field(description="calibrated estimate (null without a model)")
    low: float | None = Field(description="lower end of its 95 % interval")
    high: float | None = Field(description="upper end of its 95 % interval")
    early: bool = Field(description="too few moves yet: not a measurement")
    form: TraceForm | None = Field(
        default=None, description="form after this move (null without an official rating)"
    )
    algorithm4: TraceAlgorithm4


class HeadToHead(_Model):
    """Algorithm 1 between the two players of a game."""

    white_expected: float
    black_expected: float
    difference: float = Field(description="rating difference in White's favour")
    low: float
    high: float
    bounded: bool


class MatchOdds(_Model):
    """Live odds of a configured match between player A and player B."""

    a: str
    b: str
    score_a: float
    score_b: float
    games_left: int
    a_wins: float
    draw: float
    b_wins: float


class Accuracy(_Model):
    """A player's accuracy in this game, in percent (0-100), by lichess's
    method (docs/maths.md, "Accuracy"): overall and per phase (null: no
    evaluated move in it)."""

    overall: float | None = Field(description="over all his evaluated moves; null: none yet")
    moves: int = Field(description="his moves counted")
    opening: float | None = None
    middlegame: float | None = None
    endgame: float | None = None


class Ply(_Model):
    ply: int
    san: str
    uci: str
    color: Color = Field(description="who played this move")
    clock: int | None = Field(default=None, description="mover's clock after the move, seconds")
    spent: int | None = Field(
        default=None,
        description="seconds the move took: the mover's previous clock (his base time before "
        "his first move) + the increment (+ a new period's time) - ``clock``, at least 0; "
        "null: unknown (docs/maths.md, 'Time use')",
    )
    eval: EvalInfo | None = Field(
        default=None, description="evaluation of the position after the move"
    )
    gain: int | None = Field(
        default=None, description="gain of this move for its player, centipawns"
    )


class Clocks(_Model):
    """Seconds left on each clock, whose clock runs, and time trouble
    (docs/maths.md, 'Time use')."""

    white: int | None = None
    black: int | None = None
    running: Color | None = None
    white_time_trouble: bool = Field(
        default=False, description="White's clock is under ``time_trouble_below``"
    )
    black_time_trouble: bool = Field(
        default=False, description="Black's clock is under ``time_trouble_below``"
    )
    time_trouble_below: int | None = Field(
        default=None,
        description="seconds under which a clock is in time trouble (5 min classical, "
        "1 min rapid, 10 % of the base time in blitz); null: unknown time control",
    )


class BoardSummary(_Model):
    board_id: str
    tournament: str | None = None
    round: str | None = None
    board: int | None = None
    white: Player
    black: Player
    result: str
    plies: int
    eval: EvalInfo | None = None
    white_perceived: Perceived | None = None
    black_perceived: Perceived | None = None
    white_form: Perceived | None = None
    black_form: Perceived | None = None
    white_algorithm4: Algorithm4 | None = None
    black_algorithm4: Algorithm4 | None = None
    delay: int = Field(
        default=0, description="seconds the board is shown late (a broadcast delay); 0: live"
    )


class BoardState(_Model):
    """Everything an overlay needs about one board."""

    board_id: str
    tournament: str | None = None
    round: str | None = None
    board: int | None = None
    white: Player
    black: Player
    result: str = Field(description="1-0, 0-1, 1/2-1/2 or *")
    status: Literal["live", "finished"]
    start_fen: str | None = None
    fen: str = Field(description="current position")
    moves: list[Ply]
    eval: EvalInfo | None = Field(default=None, description="evaluation of the current position")
    start_eval: EvalInfo | None = None
    white_perceived: Perceived | None = Field(
        default=None,
        description="calibrated perceived rating (null before White's first counted "
        "move, or without a calibrated model)",
    )
    black_perceived: Perceived | None = Field(
        default=None, description="calibrated perceived rating of Black"
    )
    white_form: Perceived | None = Field(
        default=None,
        description="White's official rating updated by his moves in this game (null "
        "without an official rating, a calibrated model with forward curves, or a move)",
    )
    black_form: Perceived | None = Field(default=None, description="form of Black")
    white_algorithm4: Algorithm4 | None = Field(
        default=None, description="Algorithm 4 (null before White's first counted move)"
    )
    black_algorithm4: Algorithm4 | None = Field(default=None, description="Algorithm 4 of Black")
    white_accuracy: Accuracy | None = Field(
        default=None, description="White's accuracy (null before his first evaluated move)"
    )
    black_accuracy: Accuracy | None = Field(default=None, description="Black's accuracy")
    white_trace: list[TracePoint]
    black_trace: list[TracePoint]
    head_to_head: HeadToHead | None = None
    clocks: Clocks = Field(default_factory=Clocks)
    match: MatchOdds | None = None
    engine: str = Field(description="engine name and search limit, e.g. 'Stockfish 15.1 depth 12'")
    engine_rating: float = Field(description="r_e used for Algorithm 4")
    seq: int = Field(description="per-board sequence number of the last update folded in")
    errors: int = Field(default=0, description="bad input events seen on this board")
    delay: int = Field(
        default=0,
        description="seconds this board reaches viewers late: an anti-cheating broadcast "
        "delay (everything in this state and its updates is that old); 0: live",
    )


class Hello(_Model):
    """Sent once on connect. ``boards`` is the first page of the board list (at
    most the server's page size, 100 by default); ``boards_next`` not null
    means there are more: ask for them with ``list_boards``."""

    type: Literal["hello"] = "hello"
    protocol: int = PROTOCOL_VERSION
    server: str
    boards: list[BoardSummary]
    boards_total: int = Field(default=0, description="boards on the server")
    boards_next: int | None = Field(
        default=None,
        description="cursor of the next page (a list_boards request); null: "
        "``boards`` is the whole list",
    )


class Boards(_Model):
    """A page of the board list: the answer to ``list_boards`` (and the first
    page again after a client fell behind).

    ``reset`` true (a first page): the list as the client knows it may be out
    of date; after the last page (``next`` null) it keeps only the boards that
    these pages and the ``boards_diff`` messages received meanwhile name."""

    type: Literal["boards"] = "boards"
    boards: list[BoardSummary]
    total: int = Field(default=0, description="boards on the server")
    next: int | None = Field(
        default=None, description="cursor of the next page; null: this was the last"
    )
    reset: bool = False


class BoardsDiff(_Model):
    """Changes to the board list, sent to every client at most every
    ``board_list_interval`` seconds (0.5 s by default) while the list changes.

    Apply in order: ``added`` and ``changed`` replace (or add) the summary with
    that ``board_id``, ``removed`` drops the boards with those ids (unknown ids
    are ignored). A board is listed again when its players or result change."""

    type: Literal["boards_diff"] = "boards_diff"
    added: list[BoardSummary] = Field(default_factory=list)
    changed: list[BoardSummary] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list, description="ids of removed boards")


class Snapshot(_Model):
    type: Literal["snapshot"] = "snapshot"
    state: BoardState


class Update(_Model):
    """One change to one board, usually one evaluated ply.

    Apply in ``seq`` order. ``truncate_to`` (when set) means a correction or
    takeback: drop every move and trace point with ply > truncate_to first.
    ``ply`` (when set) is the new or re-evaluated move. A client that sees a
    gap in ``seq`` re-subscribes to get a fresh snapshot.
    """

    type: Literal["update"] = "update"
    board_id: str
    seq: int
    truncate_to: int | None = None
    ply: Ply | None = None
    fen: str
    eval: EvalInfo | None = None
    white_perceived: Perceived | None = None
    black_perceived: Perceived | None = None
    white_form: Perceived | None = None
    black_form: Perceived | None = None
    white_algorithm4: Algorithm4 | None = None
    black_algorithm4: Algorithm4 | None = None
    white_accuracy: Accuracy | None = Field(
        default=None, description="White's accuracy (null before his first evaluated move)"
    )
    black_accuracy: Accuracy | None = Field(default=None, description="Black's accuracy")
    white_points: list[TracePoint] = Field(
        default_factory=list, description="points to append to White's trace"
    )
    black_points: list[TracePoint] = Field(
        default_factory=list, description="points to append to Black's trace"
    )
    head_to_head: HeadToHead | None = None
    clocks: Clocks = Field(default_factory=Clocks)
    match: MatchOdds | None = None
    result: str
    status: Literal["live", "finished"]


class StandingsRow(_Model):
    """One player's line of an event's standings."""

    rank: int = Field(description="1 for the leader; tied players share a rank (1, 2, 2, 4)")
    key: str = Field(
        description="the player's key: 'fide:ID' when the feed gives one, else the normalised name"
    )
    name: str
    title: str | None = None
    federation: str | None = None
    rating: int | None = Field(default=None, description="official rating from the feed")
    fide_id: str | None = None
    points: float
    games: int = Field(description="rounds counted (games, byes and rounds carried in)")
    tiebreaks: dict[str, float | None] = Field(
        description="tie-break name (DE, SB, WIN, WON, BH, BH-C1) -> value, in the "
        "event's order; a DE value is null when the player was tied with nobody"
    )
    win: float | None = Field(
        description="probability of finishing first (a Swiss without its number of rounds: "
        "of leading after the current round); null when the event has no odds"
    )
    win_se: float | None = Field(description="Monte Carlo standard error of ``win``")
    top: float | None = Field(
        default=None,
        description="a Swiss simulated to its last round: the probability of a place in the "
        "first ``top_k`` (the message's); null otherwise",
    )
    top_se: float | None = Field(default=None, description="Monte Carlo standard error of ``top``")
    live: bool = Field(description="the player is playing a game now")
    perceived: Perceived | None = Field(
        default=None,
        description="the calibrated perceived rating over all his games of the event "
        "(their evidence combined); null without a model or a counted move",
    )
    form: Perceived | None = Field(
        default=None,
        description="his official rating updated by his moves over all his games of the "
        "event; null without an official rating or a model with forward curves",
    )
    rated_games: int = Field(
        default=0,
        description="his finished games of the event against rated opponents (those "
        "``performance`` and ``rating_change`` count; docs/standings.md, 'Player table')",
    )
    performance: float | None = Field(
        default=None,
        description="results-based performance rating over those games, FIDE's Ra + dp "
        "(table 8.1(a)); null: none",
    )
    rating_change: float | None = Field(
        default=None,
        description="his rating change by FIDE's rules over those games, sum K*(S - E) with "
        "the 400-point rule; null: unrated or none",
    )
    k: int | None = Field(
        default=None,
        description="FIDE's K used for ``rating_change`` (from his rating, and games played "
        "and age when configured); null when there is no rating change",
    )
    accuracy: Accuracy | None = Field(
        default=None,
        description="his accuracy over the event: the mean of his games' accuracies (each "
        "by lichess's method), overall and per phase; ``moves`` over all of them; null: "
        "no evaluated move yet",
    )


class TeamBoard(_Model):
    """One board of a team match."""

    board: int | None = Field(description="the board's number, when the feed gives one")
    white: str
    black: str
    a_white: bool = Field(description="team ``a``'s player has White on this board")
    result: str = Field(description="1-0, 0-1, 1/2-1/2, or * while not over")
    wdl: list[float] | None = Field(
        description="while not over: win/draw/loss, White's view, per mille (in progress: "
        "the board's shown W/D/L; not started: from the ratings); null once finished"
    )
    live: bool = Field(description="the game is in progress (a move played, no result)")


class TeamMatch(_Model):
    """A match of the latest round, team ``a`` the first named."""

    round: int
    a: str
    b: str
    score_a: float = Field(description="game points of the finished boards, team a")
    score_b: float
    boards_left: int
    win: float = Field(description="probability that team a wins the match")
    draw: float
    loss: float
    expected_a: float = Field(description="team a's expected final game points")
    boards: list[TeamBoard]


class TeamRow(_Model):
    rank: int = Field(description="tied teams share a rank")
    team: str
    match_points: float
    game_points: float
    matches: int
    won: int
    drawn: int
    lost: int
    tiebreaks: dict[str, float] = Field(description="team tie-break name -> value, in order")
    win: float | None = Field(
        default=None,
        description="probability of winning the event (every match left simulated); "
        "null when the event has no odds",
    )
    win_se: float | None = Field(default=None, description="Monte Carlo standard error of ``win``")
    top: float | None = Field(
        default=None, description="probability of a place in the first ``top_k`` (the table's)"
    )
    top_se: float | None = Field(default=None, description="Monte Carlo standard error of ``top``")


class Teams(_Model):
    """A team event's table (docs/standings.md, "Team events")."""

    tiebreaks: list[str] = Field(description="the team tie-breaks in order (OSB, GP, BH-C1, ...)")
    primary: Literal["MP", "GP"] = Field(description="teams ordered first by match or game points")
    rows: list[TeamRow] = Field(description="the finished matches' standings, by rank")
    round: int | None = Field(description="the latest round")
    matches: list[TeamMatch] = Field(description="the latest round's matches")
    why: str = Field(description="why the boards were read as a team event")
    sims: int = Field(default=0, description="simulations behind the rows' ``win`` (0: no odds)")
    top_k: int | None = Field(default=None, description="the places the rows' ``top`` counts")
    rounds: int | None = Field(default=None, description="rounds in all, when known")
    note: str | None = Field(
        default=None, description="why there are no odds when the event's rules ask for them"
    )


class KnockoutStage(_Model):
    """A stage of a mini-match reached so far (classical, rapid, blitz, Armageddon)."""

    name: str
    games: int = Field(description="games in the stage")
    played: int = Field(description="games of it finished")
    score_a: float = Field(description="player a's points in its finished games")
    score_b: float


class KnockoutGame(_Model):
    """A game of a mini-match: on a board, or still to be played in the stage
    being played (``on_board`` false)."""

    game: int = Field(description="its number in the mini-match, from 1 (Round tag R.G)")
    stage: str
    white: str
    black: str
    a_white: bool = Field(description="player a has White")
    result: str = Field(description="1-0, 0-1, 1/2-1/2, or * while not over")
    wdl: list[float] | None = Field(
        description="while not over: win/draw/loss, White's view, per mille (in progress: "
        "the board's shown W/D/L; not started: from the ratings); null once finished"
    )
    live: bool = Field(description="in progress (a move played, no result)")
    on_board: bool = Field(description="false: a game of the stage no board shows yet")


class StageChance(_Model):
    stage: str
    p: float = Field(description="the chance the mini-match reaches this stage")


class KnockoutMatch(_Model):
    """A mini-match of a knockout round; player ``a`` has White in its first game."""

    round: int
    a: str = Field(description="player a's name")
    b: str
    a_key: str = Field(description="player a's key (as the rows' and the bracket's)")
    b_key: str
    a_rating: int | None = None
    b_rating: int | None = None
    stage: str = Field(description="the stage being played, or the one that decided it")
    stages: list[KnockoutStage] = Field(description="the stages reached, in order")
    games: list[KnockoutGame]
    through_a: float = Field(description="the chance that a goes through (1 or 0 once decided)")
    through_b: float
    reach: list[StageChance] = Field(
        description="the chance the match reaches each later stage (the Armageddon included)"
    )
    winner: str | None = Field(description="the name of the player through, once decided")
    live: bool = Field(description="a game of the match is in progress")
    note: str | None = None


class RoundChance(_Model):
    round: int
    p: float = Field(description="the chance of reaching this round")


class BracketRow(_Model):
    """A player still in the event."""

    key: str
    name: str
    rating: int | None = None
    round: int = Field(description="the round he plays (or waits for) now")
    reach: list[RoundChance] = Field(description="his chance of reaching each later round")
    win: float = Field(description="his chance of winning the event (exact)")


class Knockout(_Model):
    """A knockout event's mini-matches and bracket (docs/standings.md, "Knockouts")."""

    round: int | None = Field(description="the latest round on the boards")
    rounds: list[int] = Field(description="every round of the bracket, played and to come")
    matches: list[KnockoutMatch] = Field(
        description="the latest round's matches (and any earlier one not decided), board order"
    )
    bracket: list[BracketRow] = Field(
        description="the players still in, by chance of winning the event"
    )
    order: Literal["adjacent", "folded"] = Field(
        description="the bracket order of the rounds not paired yet: adjacent, the winners "
        "of matches 2j and 2j+1 meet; folded, of matches i and n-1-i"
    )
    order_why: str = Field(description="configured, read from the rounds paired, or the default")
    why: str = Field(description="why the boards were read as a knockout")
    note: str | None = None


class Standings(_Model):
    """An event's standings and each player's chance of finishing first.

    Sent to the clients that asked for the event (``subscribe_standings``)
    when they ask, then on each change: at most every 2 s per event while a
    game's result or its live W/D/L changes. Replaces the previous one of the
    same ``event`` whole."""

    type: Literal["standings"] = "standings"
    event: str = Field(description="the event's name as its boards carry it (``tournament``)")
    format: Literal["round-robin", "swiss", "knockout"] | None = Field(
        description="as configured ([[events]]); null: not configured (no odds)"
    )
    round: int | None = Field(description="the highest round number on the event's boards")
    rounds: int | None = Field(
        description="rounds in all when known (a round robin's; a Swiss's when configured "
        "or told by the source: its odds are then simulated to the last round)"
    )
    top_k: int | None = Field(
        default=None,
        description="the places the rows' ``top`` counts (prize places); null: no ``top``",
    )
    tiebreaks: list[str] = Field(description="the tie-breaks in order (the rows' keys)")
    playoff: Literal["share", "rating"] | None = Field(
        description="a tie after every tie-break: first place shared, or a rating play-off"
    )
    rows: list[StandingsRow] = Field(description="ordered by rank")
    sims: int = Field(description="Monte Carlo simulations behind ``win`` (0: no odds)")
    version: int = Field(description="increases with each standings message of the event")
    plies: int = Field(description="moves on the event's boards when computed")
    finished: int = Field(description="games finished on the event's boards")
    live: int = Field(description="games in progress")
    upcoming: int = Field(
        description="games not started (boards without a move, and "
        "games still to be played that no board shows)"
    )
    note: str | None = Field(
        default=None,
        description="what the figures mean, e.g. 'Swiss: only round 5 is simulated ...'",
    )
    teams: Teams | None = Field(
        default=None,
        description="a team event (its games' WhiteTeam/BlackTeam name teams): the team "
        "standings and the latest round's matches with their odds; null otherwise",
    )
    knockout: Knockout | None = Field(
        default=None,
        description="a knockout (configured, or its boards' Round tags R.G show one): the "
        "current mini-matches stage by stage with each player's chance of going through, "
        "and the bracket with each player's chance of winning the event; null otherwise",
    )


class Moment(_Model):
    """A key moment of a game (docs/maths.md, "Key moments"): a move that
    swung the shown chances past a threshold, time trouble, or the game's end.
    Sent to the board's subscribers when it happens; the latest 50 across all
    boards are kept, and a client that subscribes to a board later gets the
    board's kept moments after its snapshot. On MQTT ``<prefix>/<board>/moment``,
    and the latest in ``<prefix>/moments`` (retained, one message per line)."""

    type: Literal["moment"] = "moment"
    board_id: str
    tournament: str | None = None
    round: str | None = None
    board: int | None = None
    white: str = Field(description="White's name")
    black: str = Field(description="Black's name")
    kind: Literal["turnaround", "missed-win", "blunder", "game-end", "time-trouble"]
    ply: int = Field(
        description="the move (1-based ply); a game's end: its last move (0: none); time "
        "trouble: the move after which the mover's clock fell under the threshold"
    )
    move: str | None = Field(default=None, description="the move in SAN")
    color: Color | None = Field(default=None, description="who played it")
    before: float | None = Field(
        default=None,
        description="White's expected score (win + draw/2 of the W/D/L shown, 0-1) before the move",
    )
    after: float | None = Field(default=None, description="the same after the move")
    swing: float | None = Field(default=None, description="after - before (White's view)")
    best: str | None = Field(
        default=None, description="the engine's best move (SAN) in the position before the move"
    )
    result: str | None = Field(default=None, description="a game's end: its result")
    clock: int | None = Field(
        default=None, description="time trouble: the mover's clock after the move, seconds"
    )
    at_ms: int = Field(description="when the server saw it, epoch milliseconds")


class ProducerTerm(_Model):
    """One term of a board's points (docs/producer.md)."""

    name: Literal["swing", "decisive", "time-trouble", "standings", "just-ended"]
    points: float
    reason: str


class ProducerRow(_Model):
    """One board in the producer's ranking."""

    board_id: str
    rank: int = Field(description="1: the board that deserves the camera most now")
    score: float = Field(description="the sum of the terms' points")
    reason: str = Field(description="the term that gave most points, in words; 'quiet': none")
    terms: list[ProducerTerm]
    tournament: str | None = None
    round: str | None = None
    board: int | None = None
    white: str
    black: str
    result: str
    overlay: str = Field(description="the board overlay's path, e.g. /overlay/board?board=ID")


class ProducerRanking(_Model):
    """``GET /api/producer``: every board ranked by how much it deserves the
    camera now (rule: core.producer, docs/producer.md), from what viewers
    are shown (after any broadcast delay)."""

    at_ms: int = Field(description="when it was computed, epoch milliseconds")
    boards: list[ProducerRow]


class Error(_Model):
    type: Literal["error"] = "error"
    message: str


class Pong(_Model):
    type: Literal["pong"] = "pong"


class Subscribe(_Model):
    """Subscribe to boards by id, or ``"*"`` for every board (also future ones)."""

    type: Literal["subscribe"] = "subscribe"
    boards: list[str] | Literal["*"]


class Unsubscribe(_Model):
    type: Literal["unsubscribe"] = "unsubscribe"
    boards: list[str] | Literal["*"]


class Ping(_Model):
    type: Literal["ping"] = "ping"


class SubscribeStandings(_Model):
    """Ask for the standings of events by name, or ``"*"`` for every event (also
    future ones): each one's current ``standings`` at once, then each change."""

    type: Literal["subscribe_standings"] = "subscribe_standings"
    events: list[str] | Literal["*"]


class UnsubscribeStandings(_Model):
    type: Literal["unsubscribe_standings"] = "unsubscribe_standings"
    events: list[str] | Literal["*"]


class ListBoards(_Model):
    """Ask for a page of the board list; answered with a ``boards`` message."""

    type: Literal["list_boards"] = "list_boards"
    cursor: int = Field(
        default=0, ge=0, description="0 for the first page, else the ``next`` of the last page"
    )
    limit: int | None = Field(
        default=None, ge=1, description="boards per page (at most the server's page size)"
    )


ServerMessage = Annotated[
    Hello | Boards | BoardsDiff | Snapshot | Update | Standings | Moment | Error | Pong,
    Field(discriminator="type"),
]
ClientMessage = Annotated[
    Subscribe | Unsubscribe | Ping | ListBoards | SubscribeStandings | UnsubscribeStandings,
    Field(discriminator="type"),
]


# --------------------------------------------------------------------------
# JSON Schema export: python -m livegain.publish.schema [--check] [DIR]
# --------------------------------------------------------------------------

SCHEMA_FILES: dict[str, Any] = {
    "server-message.schema.json": ServerMessage,
    "client-message.schema.json": ClientMessage,
    "board-state.schema.json": BoardState,
    "standings.schema.json": Standings,
    "producer.schema.json": ProducerRanking,
}


def json_schemas() -> dict[str, str]:
    """File name -> JSON Schema text (stable: sorted keys, 2-space indent, final newline)."""
    from livegain import schemas

    return schemas.render(SCHEMA_FILES, f"https://livegain.invalid/protocol/v{PROTOCOL_VERSION}")


def main(argv: list[str] | None = None) -> int:
    from livegain import schemas

    return schemas.main(
        "livegain.publish.schema",
        "Write (or check) the protocol's JSON Schema files.",
        json_schemas(),
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
