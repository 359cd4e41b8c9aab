"""Fixtures for the overlay tests: Debian's Chromium driven by Playwright, a real
``livegain serve`` with a real Stockfish, fed by a real replay over HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import need, stockfish_path

from ._live import (
    CHROMIUM,
    CHROMIUM_ARGS,
    GAME_A,
    GAME_B,
    GAME_XSS,
    ReplayThread,
    Serve,
    StaticServer,
    write_test_model,
)

# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def chromium_path() -> str:
    need(CHROMIUM.exists(), f"{CHROMIUM} not installed (make test installs it)")
    return str(CHROMIUM)


@pytest.fixture(scope="session")
def engine_path() -> str:
    path = stockfish_path()
    need(path is not None, "stockfish not installed (make test installs it)")
    assert path is not None
    return path


@pytest.fixture(scope="package")
def browser(chromium_path: str) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        need(False, "playwright not installed (pip install -e .[test])")
        raise
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page_factory(browser: Any) -> Iterator[Callable[..., Any]]:
    """New pages that fail the test on a JavaScript error or an alert()."""
    pages: list[Any] = []
    problems: list[str] = []

    def make(width: int = 1920, height: int = 1080) -> Any:
        ctx = browser.new_context(viewport={"width": width, "height": height})
        page = ctx.new_page()
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        pages.append(ctx)
        return page

    yield make
    for ctx in pages:
        with contextlib.suppress(Exception):
            ctx.close()
    assert not problems, problems


@pytest.fixture(scope="module")
def live_round(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[tuple[Serve, ReplayThread]]:
    """A three-board round replayed over HTTP into a real ``livegain serve``, with
    the tests' own calibrated model (:func:`write_test_model`)."""
    tmp = tmp_path_factory.mktemp("overlay-round")
    pgn = tmp / "round.pgn"
    pgn.write_text(GAME_A + "\n" + GAME_B + "\n" + GAME_XSS)
    replay = ReplayThread(pgn.read_text())
    model = write_test_model(tmp / "perceived.toml")
    serve = Serve(tmp, replay.url, engine_path, perceived_model=model)
    try:
        serve.start()
        yield serve, replay
    finally:
        serve.stop()
        replay.close()


@pytest.fixture(scope="module")
def static_server() -> Iterator[StaticServer]:
    """Only the pages and the protocol endpoint (no feed, no engine)."""
    srv = StaticServer()
    try:
        yield srv
    finally:
        srv.close()
