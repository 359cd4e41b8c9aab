"""Every error livegain defines has one root, :class:`LivegainError`, and keeps
the built-in kind and the message it had."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import livegain
from livegain.core.errors import LivegainError


def livegain_errors() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(livegain.__path__, "livegain."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("livegain."):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(found.values())


def test_every_error_has_the_one_root() -> None:
    errors = livegain_errors()
    assert len(errors) >= 25  # the packages were all walked
    strays = [e.__qualname__ for e in errors if not issubclass(e, LivegainError)]
    assert strays == []


def test_errors_keep_their_kind_and_message() -> None:
    from livegain.app.store import NotAStore, StoreError
    from livegain.batch.pgnio import PgnError
    from livegain.config import ConfigError
    from livegain.engine.errors import EngineStartError

    err = EngineStartError("/no/such/engine", "no such file")
    assert isinstance(err, LivegainError)
    assert str(err) == "cannot start UCI engine '/no/such/engine': no such file"
    assert issubclass(PgnError, ValueError) and issubclass(ConfigError, ValueError)
    assert issubclass(NotAStore, StoreError) and issubclass(StoreError, RuntimeError)
