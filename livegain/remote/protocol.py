"""The remote engine protocol: jobs, results and worker presence over MQTT.

Topics, under a prefix (default ``livegain/engine``):

- ``{prefix}/jobs/{engine_id}/{worker}``: the jobs given to one worker (QoS
  1, not retained): *direct assignment*, the requester picks the worker of
  each job (:mod:`livegain.remote.roster`). ``engine_id`` is
  :func:`engine_id` of the engine key; a worker subscribes to its own topic
  of its own engine key only, so it gets only jobs whose engine, limit, Hash
  and options are its own;
- ``{prefix}/results/{requester}/{worker}``: results (QoS 1), the job's
  ``reply_to``, one topic per worker it was given to;
- ``{prefix}/workers/{worker}``: each worker's presence (retained, QoS 1); an
  empty retained message (the worker's MQTT will, or its clean stop) clears it.

The ``{worker}`` of these topics is the worker's identity: on the deploy
broker it is the worker's broker user, and only that user may write its
presence and results and read its jobs (deploy/acl). A presence or result
whose ``worker`` field names another worker than its topic is refused.

Every body is one JSON object with ``type`` and ``v`` (:data:`VERSION`, 2;
version 1 gave jobs out through an MQTT 5 shared subscription and is refused,
:func:`outdated`). The models below are the definition;
``docs/protocol/engine-*.schema.json`` are generated from them (``python -m
livegain.remote.protocol``; ``--check`` fails when stale).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from livegain import schemas
from livegain.core.errors import LivegainError
from livegain.core.evaluation import Evaluation
from livegain.feeds.json_bounds import loads_bounded
from livegain.mqtt.topics import topic_safe

VERSION = 2
DEFAULT_PREFIX = "livegain/engine"
MAX_PAYLOAD = 64 * 1024
"""Largest job, result or presence body accepted (bytes)."""


def engine_id(engine_key: str) -> str:
    """The short, topic-safe name of an engine key (16 hex digits of its SHA-256)."""
    return hashlib.sha256(engine_key.encode()).hexdigest()[:16]


def jobs_topic(prefix: str, key: str, worker: str) -> str:
    """Where the jobs given to ``worker`` (for engine ``key``) are published."""
    return f"{prefix}/jobs/{engine_id(key)}/{topic_safe(worker)}"


def results_base(prefix: str, requester: str) -> str:
    """The requester's results topics are ``{results_base}/{worker}``."""
    return f"{prefix}/results/{topic_safe(requester)}"


def reply_topic(base: str, worker: str) -> str:
    return f"{base}/{topic_safe(worker)}"


def topic_worker(topic: str) -> str:
    """The worker a presence or results topic names (its last level)."""
    return topic.rsplit("/", 1)[-1]


def presence_topic(prefix: str, worker: str) -> str:
    return f"{prefix}/workers/{topic_safe(worker)}"


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limit(_Msg):
    """The search limit: depth and/or nodes (as ``livegain worker --depth/--nodes``)."""

    depth: int | None = Field(default=None, ge=1, le=99)
    nodes: int | None = Field(default=None, ge=1)

    def describe(self) -> str:
        parts = []
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return " ".join(parts) or "no limit"


class Eval(_Msg):
    """One evaluation, White's view (as :class:`~livegain.core.evaluation.Evaluation`)."""

    cp: int = Field(description="Centipawns, White's view, clipped to +/-3900 (mate: +/-3900)")
    mate: int | None = Field(default=None, description="Mate in N, positive when White mates")
    wdl: tuple[int, int, int] | None = Field(
        default=None, description="Win/draw/loss per mille, White's view"
    )
    depth: int = Field(default=0, ge=0)
    nodes: int = Field(default=0, ge=0)
    best: str | None = Field(default=None, max_length=8)
    pv: tuple[str, ...] = Field(default=(), max_length=256)

    @classmethod
    def of(cls, ev: Evaluation) -> Eval:
        return cls(
            cp=ev.cp,
            mate=ev.mate,
            wdl=ev.wdl,
            depth=ev.depth,
            nodes=ev.nodes,
            best=ev.best,
            pv=tuple(ev.pv),
        )

    def evaluation(self) -> Evaluation:
        return Evaluation(
            cp=self.cp,
            mate=self.mate,
            wdl=self.wdl,
            depth=self.depth,
            nodes=self.nodes,
            best=self.best,
            pv=tuple(self.pv),
        )


class Job(_Msg):
    """One position to evaluate, published on ``{prefix}/jobs/{engine_id}/{worker}``."""

    type: Literal["job"] = "job"
    v: Literal[2] = 2
    job: str = Field(min_length=1, max_length=96, description="Job id, unique per requester")
    fen: str = Field(min_length=1, max_length=120, description="The position (FEN)")
    engine: str = Field(
        min_length=1,
        max_length=1024,
        description="Engine key the result must come from: engine name and version, "
        "limit, Hash, threads, deterministic mode, options",
    )
    limit: Limit
    deadline: float = Field(
        description="Unix time after which the requester gives the job to another worker"
    )
    priority: int = Field(default=0, description="Lower first, within one worker")
    attempt: int = Field(default=1, ge=1, description="1, then 2, ... when re-published")
    reply_to: str = Field(
        min_length=1,
        max_length=256,
        description="Topic for the result: {prefix}/results/{requester}/{worker}",
    )


class Result(_Msg):
    """The answer to a job, published on its ``reply_to``: ``eval`` or ``error``;
    ``worker`` is the last level of that topic."""

    type: Literal["result"] = "result"
    v: Literal[2] = 2
    job: str = Field(min_length=1, max_length=96)
    fen: str = Field(min_length=1, max_length=120)
    engine: str = Field(min_length=1, max_length=1024, description="The worker's engine key")
    limit: Limit
    worker: str = Field(min_length=1, max_length=128)
    eval: Eval | None = None
    error: str | None = Field(default=None, max_length=2000)
    seconds: float = Field(default=0.0, ge=0, description="Time the worker spent on it")


class Presence(_Msg):
    """A worker's announcement, retained on ``{prefix}/workers/{worker}``."""

    type: Literal["worker"] = "worker"
    v: Literal[2] = 2
    worker: str = Field(
        min_length=1, max_length=128, description="Its identity: the last level of its topic"
    )
    host: str = Field(max_length=256)
    engine_name: str = Field(max_length=256, description="The engine's UCI 'id name'")
    engine_key: str = Field(max_length=1024)
    jobs_topic: str = Field(
        max_length=256, description="Where it takes jobs from: {prefix}/jobs/{engine_id}/{worker}"
    )
    limit: Limit
    hash_mb: int = Field(ge=1)
    processes: int = Field(ge=1, description="Engine processes (jobs searched at once)")
    cores: int = Field(ge=1, description="CPU cores of its machine")
    livegain: str = Field(max_length=64, description="livegain version")
    started: float = Field(description="Unix time it started")


Message = Annotated[Job | Result | Presence, Field(discriminator="type")]
_MESSAGE: TypeAdapter[Job | Result | Presence] = TypeAdapter(Message)


class ProtocolError(LivegainError, ValueError):
    """A body that is not a valid message (the text says what is wrong)."""


def encode(msg: _Msg) -> bytes:
    return msg.model_dump_json().encode()


class OutdatedError(ProtocolError):
    """A message of another protocol version (``version``: the one it has)."""

    def __init__(self, version: object) -> None:
        self.version = version
        super().__init__(
            f"protocol version {version!r}, this livegain speaks {VERSION}: "
            "run the same livegain version on workers and requesters"
        )


def outdated(data: bytes) -> object | None:
    """The ``v`` of a JSON object body whose version is not :data:`VERSION`, else None."""
    try:
        obj = loads_bounded(data)
    except ValueError:
        return None
    if isinstance(obj, dict) and "v" in obj and obj["v"] != VERSION:
        version: object = obj["v"]
        return version
    return None


def decode(data: bytes) -> Job | Result | Presence:
    """Parse one body (ProtocolError naming the fault when it is not valid,
    OutdatedError when it is of another protocol version)."""
    if len(data) > MAX_PAYLOAD:
        raise ProtocolError(f"message of {len(data)} bytes, more than {MAX_PAYLOAD}")
    try:
        return _MESSAGE.validate_json(data)
    except ValidationError as exc:
        version = outdated(data)
        if version is not None:
            raise OutdatedError(version) from None
        first = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise ProtocolError(f"{loc or 'message'}: {first.get('msg', 'invalid')}") from None


# --------------------------------------------------------------------------
# JSON Schema export: python -m livegain.remote.protocol [--check] [DIR]
# --------------------------------------------------------------------------

SCHEMA_FILES: dict[str, Any] = {
    "engine-job.schema.json": Job,
    "engine-result.schema.json": Result,
    "engine-worker.schema.json": Presence,
}


def json_schemas() -> dict[str, str]:
    """File name -> JSON Schema text (sorted keys, 2-space indent, final newline)."""
    return schemas.render(SCHEMA_FILES, f"https://livegain.invalid/protocol/engine/v{VERSION}")


def main(argv: list[str] | None = None) -> int:
    return schemas.main(
        "livegain.remote.protocol",
        "Write (or check) the remote engine protocol's JSON Schema files.",
        json_schemas(),
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
