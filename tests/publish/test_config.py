"""Configuration: TOML file, LIVEGAIN_* overrides, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from livegain.config import ConfigError, load_settings
from livegain.feeds.base import FileFeedConfig, PgnHttpFeedConfig

REPO = Path(__file__).resolve().parents[2]

TOML = """
data_dir = "/tmp/lg-data"
[server]
host = "0.0.0.0"
port = 9000
[engine]
depth = 8
hash_mb = 32
[mqtt]
enabled = true
prefix = "x/out"
[[feeds]]
type = "pgn-http"
url = "http://127.0.0.1:1/games.pgn"
interval = 3
[[feeds]]
type = "file"
path = "round.pgn"
[[matches]]
a = "Carlsen"
b = "Caruana"
games = 12
draw_rate = 0.6
score_a = 1.5
score_b = 0.5
rating_source = "perceived"
"""


def test_toml_then_env_then_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(TOML)
    s = load_settings(cfg)
    assert (s.server.host, s.server.port) == ("0.0.0.0", 9000)
    assert (s.engine.depth, s.engine.hash_mb, s.engine.path) == (8, 32, "/usr/games/stockfish")
    assert isinstance(s.feeds[0], PgnHttpFeedConfig) and s.feeds[0].interval == 3
    assert isinstance(s.feeds[1], FileFeedConfig)
    m = s.matches[0]
    assert (m.games, m.played_before, m.rating_source) == (12, 2, "perceived")
    assert s.mqtt.enabled and s.mqtt.prefix == "x/out"
    monkeypatch.setenv("LIVEGAIN_SERVER__PORT", "9100")
    monkeypatch.setenv("LIVEGAIN_ENGINE__DEPTH", "10")
    monkeypatch.setenv("LIVEGAIN_MQTT__ENABLED", "false")
    monkeypatch.setenv("LIVEGAIN_FEEDS", '[{"type": "file", "path": "other.pgn"}]')
    s = load_settings(cfg)
    assert (s.server.host, s.server.port) == ("0.0.0.0", 9100)  # env wins, file kept the rest
    assert s.engine.depth == 10 and s.engine.hash_mb == 32
    assert not s.mqtt.enabled
    assert [f.type for f in s.feeds] == ["file"]
    s = load_settings(cfg, server={"port": 1234})
    assert (s.server.host, s.server.port) == ("0.0.0.0", 1234)  # flags win over env


def test_shipped_config_is_valid() -> None:
    s = load_settings(REPO / "config" / "livegain.toml")
    assert s.server.port == 8080


def test_errors_name_the_file_and_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_settings(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[server]\nport = 'eighty'\n")
    with pytest.raises(ConfigError, match=r"bad.toml: server.port"):
        load_settings(bad)
    bad.write_text("[server\nport = 1\n")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        load_settings(bad)
    bad.write_text("[[feeds]]\ntype = 'carrier-pigeon'\n")
    with pytest.raises(ConfigError, match="feeds"):
        load_settings(bad)
    bad.write_text("[engine]\ndepth = 0\n")
    with pytest.raises(ConfigError, match=r"engine\.depth"):
        load_settings(bad)
    bad.write_text("typo_key = 1\n")
    with pytest.raises(ConfigError, match="typo_key"):
        load_settings(bad)


def test_kind_and_scale_per_feed_and_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A feed's ``kind`` and ``scale`` keys choose its boards' models (kept
    apart from how the feed reads); an event's too; bad values are errors."""
    path = tmp_path / "lg.toml"
    path.write_text(
        '[[feeds]]\ntype = "file"\npath = "a.pgn"\n'
        '[[feeds]]\ntype = "file"\npath = "b.pgn"\nkind = "online-rapid"\nscale = "lichess"\n'
        '[[events]]\nname = "Open"\nkind = "classical-otb"\nscale = "fide"\n'
    )
    s = load_settings(path)
    assert [type(f) for f in s.feeds] == [FileFeedConfig, FileFeedConfig]
    assert (s.feed_models_of(0).kind, s.feed_models_of(0).scale) == (None, None)
    assert (s.feed_models_of(1).kind, s.feed_models_of(1).scale) == ("online-rapid", "lichess")
    assert (s.events[0].kind, s.events[0].scale) == ("classical-otb", "fide")
    feeds = '[{"type": "file", "path": "c.pgn", "scale": "lichess"}]'
    monkeypatch.setenv("LIVEGAIN_FEEDS", feeds)
    assert load_settings().feed_models_of(0).scale == "lichess"
    monkeypatch.delenv("LIVEGAIN_FEEDS")
    path.write_text('[[feeds]]\ntype = "file"\npath = "a.pgn"\nkind = "blitz"\n')
    with pytest.raises(ConfigError, match="kind"):
        load_settings(path)


def test_what_is_known_of_players_for_their_k(tmp_path: Path) -> None:
    """``[events.players."NAME"]``: games, born, ever_2400 or k for the player table."""
    path = tmp_path / "events.toml"
    path.write_text(
        '[[events]]\nname = "Open"\n'
        '[events.players."Gukesh D"]\ngames = 250\nborn = 2006\n'
        '[events.players."46616543"]\nk = 10\n'
    )
    from livegain.core.players import PlayerFacts

    (event,) = load_settings(path).events
    assert event.player_facts() == {
        "Gukesh D": PlayerFacts(games=250, born=2006),
        "46616543": PlayerFacts(k=10),
    }
    for bad, key in (("k = 15", "k"), ("games = -1", "games"), ("age = 12", "age")):
        path.write_text(f'[[events]]\nname = "Open"\n[events.players."X"]\n{bad}\n')
        with pytest.raises(ConfigError, match=key):
            load_settings(path)
