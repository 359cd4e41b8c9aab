"""Why a client message was refused, in words a client developer can act on."""

from __future__ import annotations

from pydantic import ValidationError


def describe_validation(exc: ValidationError) -> str:
    """A short, readable reason why a client message was refused."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return "invalid message"
    first = errors[0]
    kind = first.get("type", "")
    if kind == "json_invalid":
        return f"invalid JSON: {first.get('msg', '')}"
    if kind == "union_tag_invalid":
        return (
            "unknown message type; expected subscribe, unsubscribe, ping, list_boards, "
            "subscribe_standings or unsubscribe_standings"
        )
    if kind in ("union_tag_not_found", "dict_type", "model_attributes_type"):
        return "a message must be a JSON object with a 'type' field"
    loc = ".".join(str(p) for p in first.get("loc", ())[:2])
    msgs = "; ".join(str(e.get("msg", "")) for e in errors[:2])
    return f"invalid message at {loc or 'top level'}: {msgs}"
