"""One MQTT URL parser for the MQTT feed and the MQTT publisher."""

from __future__ import annotations

import ssl

import pytest

from livegain.broker import parse_mqtt_url
from livegain.feeds import mqtt as feed_mqtt
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
    assert feed_mqtt.parse_mqtt_url is parse_mqtt_url
    for url in ("mqtt://a:1", "mqtts://user@b", "ssl://c:8884"):
        pub = MqttPublisher(url, "livegain/test")
        assert pub.broker == parse_mqtt_url(url)
