"""Service configuration: a TOML file, overridden by ``LIVEGAIN_*`` variables.

Precedence, highest first: explicit overrides (command-line flags), environment
variables (``LIVEGAIN_SERVER__PORT=9000``; nested keys joined with ``__``;
lists and tables as JSON, e.g. ``LIVEGAIN_FEEDS='[{"type":"file","path":"r1.pgn"}]'``),
the TOML file (``livegain serve --config config/livegain.toml``), then the
defaults below. ``config/livegain.toml`` documents every key.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from livegain.core.board.board import DEFAULT_MAX_PLIES
from livegain.core.board.identity import positive_number
from livegain.core.board.registry import DEFAULT_MAX_BOARDS
from livegain.core.errors import LivegainError
from livegain.feeds.base import FeedConfig
from livegain.feeds.json_bounds import loads_bounded, read_toml_bounded
from livegain.mqtt.address import BrokerAccess

if TYPE_CHECKING:
    from livegain.core.event_table import EventRules
    from livegain.core.knockout import KnockoutRules, StageRule
    from livegain.core.players import PlayerFacts


class _Section(BaseModel):
    # a typo in a key is an error naming it; so is nan or inf for a number
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


GameKind = Literal["classical-otb", "online-rapid"]
"""The kinds of game the human win/draw/loss models are fitted on."""
RatingScale = Literal["fide", "lichess"]
"""The rating scales of the calibrated perceived-rating models."""

_KIND_HELP = (
    "Kind of game, for the human win/draw/loss model: classical-otb (classical over "
    "the board) or online-rapid; default: the game's TimeControl tag, else classical-otb"
)
_SCALE_HELP = (
    "Rating scale of the calibrated perceived rating and form: fide (over the board) "
    "or lichess (online); default fide"
)


class FeedModels(_Section):
    """A feed's ``kind`` and ``scale`` keys (written in its ``[[feeds]]`` entry)."""

    kind: GameKind | None = Field(default=None, description=_KIND_HELP)
    scale: RatingScale | None = Field(default=None, description=_SCALE_HELP)


class ServerConfig(_Section):
    host: str = Field(default="127.0.0.1", description="Address to listen on")
    port: int = Field(default=8080, ge=0, le=65535, description="One port: HTTP and /ws")
    max_message_bytes: int = Field(default=4096, gt=0, description="Largest client message")
    soft_backlog_kb: int = Field(
        default=256, gt=0, description="A client with more unsent KiB gets a snapshot later"
    )
    stale_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a lagging client may take to catch up"
    )
    origins: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host[:port]) whose pages may open /ws besides "
        "the server's own; '*' allows any, 'null' local files. Clients that send no "
        "Origin (OBS, command-line tools) are always allowed",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins allowed to read the HTTP API from scripts (CORS); '*' any; "
        "default none",
    )
    max_connections: int = Field(default=10_000, ge=1, description="WebSocket connections")
    max_connections_per_ip: int = Field(
        default=64, ge=0, description="WebSocket connections per client address (0: no limit)"
    )
    max_subscriptions: int = Field(default=64, ge=1, description="Board ids per client")
    max_board_id: int = Field(default=96, ge=8, description="Longest board id a client may send")
    board_page: int = Field(
        default=100, ge=1, le=1000, description="Boards in hello and per list_boards page"
    )
    board_list_interval: float = Field(
        default=0.5, ge=0.0, le=60.0, description="Seconds board-list changes are gathered"
    )
    board_expiry: float | None = Field(
        default=None,
        gt=0,
        description="A board without a result that gets no move for this many seconds "
        "is removed (default: never)",
    )
    admin_token: str | None = Field(
        default=None,
        min_length=16,
        description="Bearer token for DELETE /api/boards/{id} (default: no admin API)",
    )
    tls_cert: Path | None = Field(
        default=None,
        description="PEM certificate (chain) file: with tls_key, serve https:// and wss:// "
        "on the port instead of http:// and ws://",
    )
    tls_key: Path | None = Field(default=None, description="PEM private key of tls_cert")
    compression: bool = Field(
        default=False,
        description="Offer permessage-deflate on /ws (used with the clients that ask for it; "
        "costs CPU per client and message)",
    )
    reuse_port: bool = Field(
        default=False,
        description="Listen with SO_REUSEPORT: several processes share the port (Linux)",
    )

    @model_validator(mode="after")
    def _tls_pair(self) -> ServerConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together (both, or neither)")
        self.ssl_context()  # unreadable files: an error now, naming them
        return self

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server's TLS context from ``tls_cert`` and ``tls_key`` (None without them).

        Raises ValueError naming the file when one cannot be read.
        """
        if self.tls_cert is None or self.tls_key is None:
            return None
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            ctx.load_cert_chain(self.tls_cert, self.tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"server.tls_cert/tls_key ({self.tls_cert}, {self.tls_key}): {exc}"
            ) from exc
        return ctx


class RemoteEngineConfig(_Section, BrokerAccess):
    """``[engine.remote]``: engine workers through an MQTT broker (docs/workers.md)."""

    url: str = Field(
        default="mqtt://127.0.0.1:1883",
        description="Broker the workers take jobs from: mqtt://host[:1883] or mqtts://host[:8883]",
    )
    prefix: str = Field(default="livegain/engine", description="Topic prefix of jobs/results")
    engine_name: str | None = Field(
        default=None,
        description="'remote' mode: accept only workers whose engine reports this 'id name' "
        "(default: the first worker with the configured limit sets the engine)",
    )
    job_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a worker has for a job before it is re-sent"
    )
    max_attempts: int = Field(default=5, ge=1, description="Times a job is sent before it fails")
    prefetch: int = Field(
        default=2, ge=1, description="Jobs out at once per engine process of the workers"
    )
    max_jobs: int = Field(default=256, ge=1, description="Jobs out at once, at most")
    wait_for_workers: float = Field(
        default=60.0,
        gt=0,
        description="'remote' mode: seconds to wait at start for a worker to announce itself",
    )
    client_id: str | None = Field(
        default=None, description="Default: livegain-jobs-<host>-<random>, new at each start"
    )
    verify_share: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="Share of the workers' results re-evaluated (local pool, else another "
        "worker) before use; a worker contradicted is dropped. 0: none",
    )
    silent_after: int = Field(
        default=2,
        ge=1,
        description="A worker whose jobs end without an evaluation this many times in a row "
        "(expired unanswered: silent; answered with an error: failing) gets no more",
    )


class EngineConfig(_Section):
    mode: Literal["local", "remote", "both"] = Field(
        default="local",
        description="local: this machine's engine pool; remote: `livegain worker` processes "
        "through the broker of [engine.remote]; both: the two share the work",
    )
    remote: RemoteEngineConfig = Field(default_factory=RemoteEngineConfig)
    path: str = Field(default="/usr/games/stockfish", description="UCI engine executable")
    depth: int | None = Field(default=12, ge=1, description="Fixed search depth")
    nodes: int | None = Field(default=None, ge=1, description="Fixed node budget (optional)")
    workers: int | None = Field(
        default=None, ge=1, description="Engine processes (default: number of cores)"
    )
    hash_mb: int = Field(default=16, ge=1, description="Hash per engine process, MiB")
    search_timeout: float = Field(default=60.0, gt=0, description="Seconds per position at most")
    nice: int = Field(
        default=5,
        ge=0,
        le=19,
        description="The service's engine processes run this many nice steps below it, so that "
        "its event loop (viewers, /healthz) goes first when the cores are short; 0: the same",
    )
    rating: float | None = Field(
        default=None,
        description="Engine rating r_e for Algorithm 4 (default: shipped calibration)",
    )
    perceived_model: str | None = Field(
        default=None,
        description="Calibrated perceived-rating model file (TOML, [[model]] entries) "
        "to pick from instead of the shipped one (config/perceived.toml)",
    )
    wdl_model: str | None = Field(
        default=None,
        description="Human win/draw/loss model file (TOML, [[prior]] and [[model]] "
        "entries) to pick from instead of the shipped one (config/wdl.toml)",
    )

    @model_validator(mode="after")
    def _some_limit(self) -> EngineConfig:
        if self.depth is None and self.nodes is None:
            raise ValueError("engine needs depth or nodes")
        return self


class MqttPublishConfig(_Section, BrokerAccess):
    enabled: bool = False
    url: str = Field(
        default="mqtt://127.0.0.1:1883",
        description="mqtt://[user:pass@]host[:port], or mqtts://host[:8883] for TLS",
    )
    prefix: str = Field(default="livegain/out", description="Topics: {prefix}/{board_id}/...")
    client_id: str | None = Field(
        default=None, description="Default: livegain-pub-<host>-<random>, new at each start"
    )
    qos: Literal[0, 1, 2] = 1


class MatchConfig(_Section):
    """A match between two players (games between them, in either colour)."""

    a: str = Field(description="Player A's name as the feed spells it (case-insensitive)")
    b: str = Field(description="Player B's name")
    games: int = Field(gt=0, description="Games in the match")
    draw_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    score_a: float = Field(default=0.0, ge=0.0, description="A's score before this service runs")
    score_b: float = Field(default=0.0, ge=0.0)
    played: int | None = Field(
        default=None, ge=0, description="Games played before (default: score_a + score_b)"
    )
    rating_source: Literal["official", "perceived"] = Field(
        default="official",
        description="official: FIDE ratings (feed or rating_a/rating_b); "
        "perceived: the players' calibrated perceived ratings in the live game "
        "(Algorithm 4's when no calibrated model is in use)",
    )
    rating_a: float | None = None
    rating_b: float | None = None

    @property
    def played_before(self) -> int:
        return self.played if self.played is not None else round(self.score_a + self.score_b)


class PlayerConfig(_Section):
    """What is known of a player beyond the feed, for his FIDE K (docs/standings.md,
    "Player table")."""

    games: int | None = Field(
        default=None, ge=0, description="Rated games played before the event (under 30: K = 40)"
    )
    born: int | None = Field(
        default=None,
        ge=1900,
        le=2100,
        description="Year of birth (a junior under 2300: K = 40 until the end of the year "
        "he turns 18)",
    )
    ever_2400: bool = Field(default=False, description="His rating once reached 2400 (K = 10)")
    k: Literal[10, 20, 40] | None = Field(default=None, description="K given outright")


class StageConfig(_Section):
    """A stage of a knockout's mini-matches (docs/standings.md, "Knockouts")."""

    name: str = Field(min_length=1, max_length=40, description="Its name (shown)")
    games: int = Field(default=2, ge=1, le=99, description="Games in the stage")
    kind: GameKind = Field(
        default="classical-otb",
        description="Whose ratings-only win/draw/loss its games not started take",
    )
    time_control: str | None = Field(
        default=None,
        max_length=40,
        description="The TimeControl tag of its games (such a game is of this stage)",
    )
    armageddon: bool = Field(
        default=False, description="The Armageddon: one game, a draw sends Black through"
    )

    def rule(self) -> StageRule:
        from livegain.core.knockout import StageRule

        return StageRule(self.name, self.games, self.kind, self.time_control, self.armageddon)


class EventConfig(_Section):
    """An event's standings and tournament-win odds (docs/standings.md)."""

    name: str = Field(min_length=1, description="The event's name as the boards carry it")
    format: Literal["round-robin", "swiss", "knockout"] = Field(
        default="round-robin",
        description="round-robin: the games left are simulated to the end; swiss: every "
        "round left when `rounds` is known (each paired as the Dutch system would), else "
        "only the current round (the chances of leading after it)",
    )
    rounds: int | None = Field(
        default=None,
        ge=1,
        le=99,
        description="Swiss: rounds in all (livegain watch reads them from the source)",
    )
    top: int = Field(
        default=3,
        ge=1,
        le=1000,
        description="Swiss simulated to the end: the chance of finishing in the first `top` "
        "places is given beside the chance of first place (prize places, qualifying spots)",
    )
    cycles: Literal[1, 2] = Field(default=1, description="Round robin: single or double")
    pairings: list[list[str]] | str | None = Field(
        default=None,
        description="Games left as [white, black] or [white, black, round], or a file: "
        "PGN headers (White, Black, Round; games with a result are skipped) or one "
        "'White - Black' line per game. Round robin without it: every pair not yet met",
    )
    tiebreaks: list[str] | None = Field(
        default=None,
        description="Tie-breaks in order (DE, SB, WIN, WON, BH, BH-C1); default "
        "DE, SB, WIN for a round robin, BH-C1, BH, SB for a Swiss",
    )
    playoff: Literal["share", "rating"] = Field(
        default="share",
        description="A tie after every tie-break: share the first place, or a rating play-off",
    )
    draw_rate: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Draws between equals in games not started, when no human "
        "win/draw/loss model is in use (with one, its ratings-only layer decides)",
    )
    kind: GameKind | None = Field(default=None, description=_KIND_HELP + " (wins over a feed's)")
    scale: RatingScale | None = Field(
        default=None, description=_SCALE_HELP + " (wins over a feed's)"
    )
    sims: int | None = Field(
        default=None,
        ge=100,
        le=10_000_000,
        description="Simulations (default 100,000; a Swiss simulated to its last round "
        "at most 10,000: a standard error of at most 0.005 on any chance)",
    )
    precision: float = Field(
        default=0.005,
        ge=0.0,
        le=0.1,
        description="A Swiss simulated to its last round stops before sims once every "
        "chance of first place has this standard error or less (0: always all sims)",
    )
    points_before: dict[str, float] = Field(
        default_factory=dict,
        description="Player name -> points from rounds the feed does not carry",
    )
    players: dict[str, PlayerConfig] = Field(
        default_factory=dict,
        description="Player name (or FIDE id) -> what is known of him for his FIDE K: "
        "games, born, ever_2400, k (the player table's rating change)",
    )
    format_why: str | None = Field(
        default=None,
        description="Why this format: what the source said of it (livegain watch sets it; "
        "shown on /healthz beside the format)",
    )
    scoring: dict[str, Any] | str | None = Field(
        default=None,
        description="Points per result and colour: { white = { win = 3, draw = 1, loss = 0 }, "
        "black = { win = 3, draw = 1, loss = 0 } } (loss optional, default 0; the Lichess "
        "customScoring shape is accepted), with an optional armageddon = { win = 1.5, "
        'loss = 1, draw = "black" } after a classical draw; or a preset: "norway" '
        '(3/1/0 and that Armageddon), "standard"; points_before is in these points. '
        "Default: 1, 1/2, 0",
    )

    stages: list[StageConfig] | None = Field(
        default=None,
        max_length=20,
        description="Knockout: the stages of a mini-match in order; default the World "
        "Cup's: classical 2, rapid 25+10 2, rapid 10+10 2, blitz 5+3 2, an Armageddon",
    )
    round_stages: dict[str, list[StageConfig]] = Field(
        default_factory=dict,
        description="Knockout: round number -> its stages, for rounds played otherwise "
        "(a final of four classical games)",
    )
    bracket: Literal["adjacent", "folded"] | None = Field(
        default=None,
        description="Knockout: who meets next: adjacent, the winners of matches 2j and "
        "2j+1 (board order); folded, of matches i and n-1-i (boards in seeding order); "
        "default: as the rounds already paired show, else adjacent",
    )

    @model_validator(mode="after")
    def _check(self) -> EventConfig:
        self.rules()  # tie-break names, points_before values, the scoring, the pairings file
        return self

    def pairing_list(self) -> list[tuple[str, str, int | None]]:
        """The configured pairings (ValueError naming the file or entry when unreadable)."""
        if self.pairings is None:
            return []
        if isinstance(self.pairings, str):
            return _read_pairings(Path(self.pairings))
        out: list[tuple[str, str, int | None]] = []
        for item in self.pairings:
            if len(item) not in (2, 3) or not all(x.strip() for x in item[:2]):
                raise ValueError(
                    f"pairing {item!r}: expected [white, black] or [white, black, round]"
                )
            rnd = int(item[2]) if len(item) == 3 and item[2].strip().isdigit() else None
            if len(item) == 3 and rnd is None:
                raise ValueError(f"pairing {item!r}: the round must be a whole number")
            out.append((item[0], item[1], rnd))
        return out

    def player_facts(self) -> dict[str, PlayerFacts]:
        """The configured players' facts, by the name given."""
        from livegain.core.players import PlayerFacts

        return {
            name: PlayerFacts(games=p.games, born=p.born, ever_2400=p.ever_2400, k=p.k)
            for name, p in self.players.items()
        }

    def knockout_rules(self) -> KnockoutRules:
        """A knockout's stages and bracket order (ValueError naming what is wrong)."""
        from livegain.core.knockout import WORLD_CUP_STAGES, KnockoutRules

        def stages(given: list[StageConfig]) -> tuple[StageRule, ...]:
            return tuple(s.rule() for s in given)

        by_round = []
        for rnd, given in self.round_stages.items():
            number = positive_number(rnd)
            if number is None:
                raise ValueError(f"round_stages: {rnd!r} is not a round number")
            by_round.append((number, stages(given)))
        return KnockoutRules(
            stages=stages(self.stages) if self.stages is not None else WORLD_CUP_STAGES,
            round_stages=tuple(by_round),
            bracket=self.bracket,
        )

    def rules(self) -> EventRules:
        """The pure rules :func:`livegain.core.event_table.event_table` takes."""
        from livegain.core.event_table import EventRules, Pairing
        from livegain.core.scoring import Scoring

        scoring = (
            Scoring.from_config(self.scoring) if self.scoring is not None else Scoring.standard()
        )
        return EventRules(
            format=self.format,
            cycles=self.cycles,
            pairings=tuple(Pairing(w, b, r) for w, b, r in self.pairing_list()),
            tiebreaks=tuple(self.tiebreaks) if self.tiebreaks is not None else None,
            playoff=self.playoff,
            draw_rate=self.draw_rate,
            sims=self.sims,
            precision=self.precision or None,
            points_before=tuple(self.points_before.items()),
            scoring=scoring,
            knockout=self.knockout_rules(),
            rounds=self.rounds,
            top_k=self.top,
        )


def _read_pairings(path: Path) -> list[tuple[str, str, int | None]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"pairings file {path}: {exc}") from None
    out: list[tuple[str, str, int | None]] = []
    if path.suffix.lower() == ".pgn":
        import io

        import chess.pgn

        stream = io.StringIO(text)
        while (headers := chess.pgn.read_headers(stream)) is not None:
            if headers.get("Result", "*") != "*":
                continue
            rnd = headers.get("Round", "")
            head = rnd.split(".")[0].strip()
            out.append(
                (
                    headers.get("White", "?"),
                    headers.get("Black", "?"),
                    positive_number(head),
                )
            )
        return out
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        white, sep, black = line.partition(" - ")
        if not sep or not white.strip() or not black.strip():
            raise ValueError(f"pairings file {path}, line {n}: expected 'White - Black'")
        out.append((white.strip(), black.strip(), None))
    return out


class BroadcastConfig(_Section):
    """``[broadcast]``: what every board's public stream shares."""

    delay: int = Field(
        default=0,
        ge=0,
        le=86_400,
        description="Seconds every board is shown late to viewers (WebSocket, /api, MQTT): "
        "an anti-cheating delay, 900 for 15 minutes; a feed's own delay wins; 0: live",
    )


class LogConfig(_Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    json_format: bool = Field(default=True, alias="json", description="JSON lines on stderr")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class LimitsConfig(_Section):
    """What one game or one tournament may hold; past it, input is refused with an error."""

    max_plies: int = Field(
        default=DEFAULT_MAX_PLIES,
        gt=0,
        description="Plies (half-moves) per game; a longer game is refused",
    )
    max_boards: int = Field(
        default=DEFAULT_MAX_BOARDS,
        gt=0,
        description="Boards in the tournament; a game that would add one more is refused",
    )


class StandingsConfig(_Section):
    """How often and how hard the standings and odds of the events are computed."""

    interval: float = Field(
        default=2.0,
        ge=0.1,
        le=600.0,
        description="Seconds between two computations of one event's standings, at least",
    )
    cpu_share: float = Field(
        default=0.25,
        gt=0.0,
        le=1.0,
        description="The share of one core all events' standings and odds may take over "
        "time (a big Swiss simulated to its last round takes seconds per computation)",
    )


class Settings(BaseSettings):
    """Everything ``livegain serve`` needs."""

    model_config = SettingsConfigDict(
        env_prefix="LIVEGAIN_",
        env_nested_delimiter="__",
        extra="forbid",
        nested_model_default_partial_update=True,
    )

    server: ServerConfig = Field(default_factory=ServerConfig)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    data_dir: Path = Field(default=Path("data"), description="SQLite store and caches")
    persist: bool = Field(default=True, description="Keep boards and evaluations on disk")
    feeds: list[FeedConfig] = Field(default_factory=list)
    feed_models: list[FeedModels] = Field(
        default_factory=list,
        description="Each feed's kind and scale, in the order of feeds: taken from the "
        "kind and scale keys of its [[feeds]] entry",
    )
    mqtt: MqttPublishConfig = Field(default_factory=MqttPublishConfig)
    broadcast: BroadcastConfig = Field(default_factory=BroadcastConfig)
    matches: list[MatchConfig] = Field(default_factory=list)
    events: list[EventConfig] = Field(default_factory=list)
    log: LogConfig = Field(default_factory=LogConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    standings: StandingsConfig = Field(default_factory=StandingsConfig)

    _toml_file: ClassVar[Path | None] = None

    @model_validator(mode="before")
    @classmethod
    def _feed_models(cls, data: Any) -> Any:
        """Take each feed's ``kind`` and ``scale`` keys out of its entry into
        :attr:`feed_models` (one per feed, in order): they choose the
        service's models, not how the feed reads."""
        if not isinstance(data, dict) or not isinstance(data.get("feeds"), list):
            return data
        feeds, models = [], []
        for entry in data["feeds"]:
            if isinstance(entry, dict) and ("kind" in entry or "scale" in entry):
                entry = dict(entry)
                models.append({"kind": entry.pop("kind", None), "scale": entry.pop("scale", None)})
            else:
                models.append({})
            feeds.append(entry)
        if any(models):
            data = {**data, "feeds": feeds, "feed_models": models}
        return data

    def feed_models_of(self, index: int) -> FeedModels:
        """The ``kind`` and ``scale`` of the feed at ``index`` (none set: both None)."""
        return self.feed_models[index] if index < len(self.feed_models) else FeedModels()

    def feed_entries(self) -> list[dict[str, Any]]:
        """The feeds as ``[[feeds]]`` entries (with their ``kind`` and ``scale``):
        to load the settings again with feeds added (``livegain watch --config``)."""
        out = []
        for i, feed in enumerate(self.feeds):
            models = self.feed_models_of(i).model_dump(exclude_none=True)
            out.append({**feed.model_dump(), **models})
        return out

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, _BoundedEnv(settings_cls)]
        if cls._toml_file is not None:
            sources.append(_BoundedToml(settings_cls, toml_file=cls._toml_file))
        return tuple(sources)


class _BoundedToml(TomlConfigSettingsSource):
    """The configuration file, read within bounds (size, depth): a ValueError
    saying what is wrong, never a RecursionError."""

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        return read_toml_bounded(Path(file_path))


class _BadVariable(LivegainError):
    """A ``LIVEGAIN_*`` variable that is not JSON within bounds (not a
    ValueError: pydantic-settings would replace its message)."""


class _BoundedEnv(EnvSettingsSource):
    """``LIVEGAIN_*`` variables; a JSON value (a list, a table) is checked
    within bounds first: an error naming the variable, never a RecursionError."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        if isinstance(value, str | bytes):
            try:
                loads_bounded(value)
            except ValueError as exc:
                raise _BadVariable(f"{self.env_prefix}{field_name}".upper() + f": {exc}") from None
        return super().decode_complex_value(field_name, field, value)


class ConfigError(LivegainError, ValueError):
    """The configuration file or environment is invalid (message names what)."""


def load_settings(path: Path | str | None = None, **overrides: Any) -> Settings:
    """Load settings from ``path`` (TOML), then env, then ``overrides``.

    Raises :class:`ConfigError` with a readable message on a missing file,
    bad TOML or invalid values.
    """
    from pydantic import ValidationError

    toml: Path | None = None
    if path is not None:
        toml = Path(path)
        if not toml.is_file():
            raise ConfigError(f"{toml}: no such configuration file")

    class _Loaded(Settings):
        _toml_file: ClassVar[Path | None] = toml

    try:
        loaded = _Loaded(**overrides)
    except ValidationError as exc:
        where = f"{toml}" if toml else "configuration"
        lines = []
        for err in exc.errors(include_url=False, include_input=False)[:5]:
            loc = ".".join(str(p) for p in err.get("loc", ()))
            lines.append(f"{loc}: {err.get('msg', '')}")
        raise ConfigError(f"{where}: " + " ".join("; ".join(lines).split())) from None
    except _BadVariable as exc:
        raise ConfigError(f"environment: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{toml}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # not TOML, too large or too deep; a bad variable
        where = f"{toml}" if toml else "configuration"
        raise ConfigError(f"{where}: {' '.join(str(exc).split())}") from None
    return loaded


def env_overrides() -> dict[str, str]:
    """The ``LIVEGAIN_*`` variables in effect (for logging what was overridden)."""
    return {k: v for k, v in os.environ.items() if k.startswith("LIVEGAIN_")}
