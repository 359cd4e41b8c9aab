"""One MQTT URL parser for the MQTT feed and the MQTT publisher."""

from __future__ import annotations

import ssl

import pytest
import structlog

from livegain.app.logs import configure_logging
from livegain.feeds import mqtt as feed_mqtt
from livegain.mqtt.address import parse_mqtt_url, redact_url
from livegain.publish.mqtt import MqttPublisher


def test_plain_and_tls_urls() -> None:
    plain = parse_mqtt_url("mqtt://user:p%40ss@broker.example:1884")
    assert (plain.host, plain.port, plain.tls) == ("broker.example", 1884, False)
    assert (plain.username, plain.password) == ("user", "p@ss")
    assert plain.tls_context() is None
    assert parse_mqtt_url("tcp://10.0.0.5").port == 1883
    tls = parse_mqtt_url("mqtts://broker.example")
    assert (tls.port, tls.tls) == (8883, True)
    ctx = tls.tls_context()
    assert isinstance(ctx, ssl.SSLContext) and ctx.verify_mode == ssl.CERT_REQUIRED
    assert parse_mqtt_url("ssl://b:9999").port == 9999
    assert str(tls) == "mqtts://broker.example:8883"


@pytest.mark.parametrize("url", ["http://h", "mqtt://", "mqtt://h:notaport", "broker:1883"])
def test_bad_urls_name_the_url(url: str) -> None:
    with pytest.raises(ValueError, match="not an MQTT URL"):
        parse_mqtt_url(url)


def test_feed_and_publisher_read_urls_alike() -> None:
    for url in ("mqtt://a:1", "mqtts://user@b", "ssl://c:8884"):
        pub = MqttPublisher(url, "livegain/test")
        assert pub.broker == parse_mqtt_url(url)


# --- credentials never reach a log -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("mqtt://user:hunter2@broker:1883", "mqtt://user:***@broker:1883"),
        ("see mqtts://:hunter2@b and tcp://u:p%40ss@c/x", "see mqtts://:***@b and tcp://u:***@c/x"),
        ("mqtt://user@broker", "mqtt://user@broker"),
        ("no url here: a:b@c", "no url here: a:b@c"),
    ],
)
def test_redact_url(text: str, shown: str) -> None:
    assert redact_url(text) == shown


def test_bad_url_errors_do_not_show_the_password() -> None:
    with pytest.raises(ValueError) as info:
        parse_mqtt_url("mqtt://user:hunter2@h:notaport")
    assert "hunter2" not in str(info.value) and "user:***@h" in str(info.value)


def test_credentials_apart_from_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LG_TEST_MQTT_PW", "from-env")
    addr = parse_mqtt_url("mqtt://u:inurl@h", password_env="LG_TEST_MQTT_PW")
    assert (addr.username, addr.password) == ("u", "from-env")
    assert parse_mqtt_url("mqtt://h", username="v", password="p").username == "v"
    assert "from-env" not in repr(addr) and "from-env" not in str(addr)
    with pytest.raises(ValueError, match="LG_TEST_MQTT_NOPE"):
        parse_mqtt_url("mqtt://h", password_env="LG_TEST_MQTT_NOPE")
    with pytest.raises(ValueError, match="need an mqtts"):
        parse_mqtt_url("mqtt://h", ca_file="ca.pem")


def test_service_logs_mask_passwords_in_every_value(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", json_format=True)
    try:
        log = structlog.get_logger("test")
        log.warning(
            "feed_error",
            where="mqtt://ingest:hunter2@broker:1883",
            error="cannot reach mqtts://ingest:hunter2@broker:8883 (refused)",
            nested={"urls": ["tcp://a:hunter2@b"]},
        )
        try:
            raise OSError("connect to mqtt://ingest:hunter2@broker failed")
        except OSError:
            log.exception("crash")
    finally:
        structlog.reset_defaults()
    err = capsys.readouterr().err
    assert "hunter2" not in err
    assert "mqtt://ingest:***@broker:1883" in err and "tcp://a:***@b" in err
    assert "connect to mqtt://ingest:***@broker failed" in err


async def test_feed_and_publisher_never_report_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import asyncio

    from brokers import free_port

    from livegain.feeds.base import MqttFeedConfig

    url = f"mqtt://ingest:hunter2@127.0.0.1:{free_port()}"  # nothing listens there
    errors: list[tuple[str, str, str]] = []

    class Sink:
        def snapshot(self, snap: object) -> None: ...

        def error(self, source: str, where: str, message: str) -> None:
            errors.append((source, where, message))

    feed = feed_mqtt.MqttFeed(MqttFeedConfig(url=url, client_id="lg-x"), reconnect_delays=(0.05,))
    configure_logging("info", json_format=False)
    publisher = MqttPublisher(url, "livegain/test")
    tasks = [asyncio.create_task(feed.run(Sink())), asyncio.create_task(publisher.run())]
    try:
        for _ in range(100):
            if errors and publisher.stats.failures:
                break
            await asyncio.sleep(0.05)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        structlog.reset_defaults()
    assert errors and publisher.stats.failures
    assert "hunter2" not in repr(errors)
    assert "mqtt://ingest@127.0.0.1" in errors[0][1]
    assert "hunter2" not in repr(feed.status()) and "hunter2" not in str(publisher.broker)
    err = capsys.readouterr().err
    assert "mqtt_publish_disconnected" in err and "hunter2" not in err
