"""The output topic layout is written and read by one class: what the
publisher writes, a gateway's replica reads as the same kind and board."""

from __future__ import annotations

from livegain.mqtt.topics import OutputTopics, topic_safe
from livegain.publish.mqtt import MqttPublisher
from livegain.publish.replica import Replica


def test_every_topic_reads_back_as_what_it_is() -> None:
    t = OutputTopics("livegain/out")
    assert t.parse(t.state("r1-b/2")) == ("state", "r1-b_2")
    assert t.parse(t.update("g1")) == ("update", "g1")
    assert t.parse(t.moment("g1")) == ("moment", "g1")
    assert t.parse(t.standings("Open A/B")) == ("standings", "Open A_B")
    assert [t.parse(x) for x in (t.moments, t.boards, t.status)] == [
        ("moments", ""),
        ("boards", ""),
        ("status", ""),
    ]
    assert t.parse("livegain/other/g1/state") is None
    assert t.parse("livegain/out/g1/junk") is None
    assert topic_safe("") == "_" and topic_safe("a+b#c\x00") == "a_b_c_"


def test_publisher_and_replica_share_the_layout() -> None:
    pub = MqttPublisher("mqtt://127.0.0.1:1", "site/out/")
    replica = Replica("site/out")
    assert pub.topics == replica.topics
    assert replica.subscriptions()[:2] == list(pub.topics.board_filters)
    assert replica.topics.parse(pub.topics.state("g 1")) == ("state", "g 1")
