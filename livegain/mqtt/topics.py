"""The topic layout of the service's MQTT output (docs/protocol/README.md,
"MQTT"), written by the publisher and read by gateways, in one place:

- ``{prefix}/{board}/state``: a board's ``snapshot`` message, retained;
- ``{prefix}/{board}/update``: each ``update`` message;
- ``{prefix}/{board}/moment``: each ``moment`` message;
- ``{prefix}/moments``: the latest moments across all boards, retained;
- ``{prefix}/boards``: the ``boards`` message, retained;
- ``{prefix}/standings/{event}``: an event's latest ``standings``, retained;
- ``{prefix}/status``: ``online`` while the publisher is connected, else ``offline``.

A board id or event name becomes one topic level (:func:`topic_safe`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_UNSAFE = re.compile(r"[/+#\x00-\x1f]")


def topic_safe(name: str) -> str:
    """``name`` as one topic level: ``/``, ``+``, ``#`` and control characters
    become ``_`` (an empty name is ``_``)."""
    return _UNSAFE.sub("_", name) or "_"


Kind = Literal["state", "update", "moment", "moments", "boards", "standings", "status"]


@dataclass(frozen=True)
class OutputTopics:
    """The output topics under one ``prefix`` (``livegain/out`` by default)."""

    prefix: str

    def state(self, board_id: str) -> str:
        return f"{self.prefix}/{topic_safe(board_id)}/state"

    def update(self, board_id: str) -> str:
        return f"{self.prefix}/{topic_safe(board_id)}/update"

    def moment(self, board_id: str) -> str:
        return f"{self.prefix}/{topic_safe(board_id)}/moment"

    def standings(self, event: str) -> str:
        return f"{self.prefix}/standings/{topic_safe(event)}"

    @property
    def moments(self) -> str:
        return f"{self.prefix}/moments"

    @property
    def boards(self) -> str:
        return f"{self.prefix}/boards"

    @property
    def status(self) -> str:
        return f"{self.prefix}/status"

    @property
    def standings_filter(self) -> str:
        """Every event's ``standings`` topic."""
        return f"{self.prefix}/standings/+"

    @property
    def board_filters(self) -> tuple[str, str]:
        """Every board's state and update topics."""
        return f"{self.prefix}/+/state", f"{self.prefix}/+/update"

    def parse(self, topic: str) -> tuple[Kind, str] | None:
        """(kind, the board's or event's topic level, else "") of an output
        topic; None for a topic that is none of the layout's."""
        head = self.prefix + "/"
        if not topic.startswith(head):
            return None
        rest = topic[len(head) :]
        if rest == "status":
            return "status", ""
        if rest == "boards":
            return "boards", ""
        if rest == "moments":
            return "moments", ""
        level, _, kind = rest.partition("/")
        if level == "standings" and kind:
            return "standings", kind
        if kind == "state":
            return "state", level
        if kind == "update":
            return "update", level
        if kind == "moment":
            return "moment", level
        return None
