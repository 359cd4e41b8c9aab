"""MQTT, in one place for every part of livegain that talks to a broker.

- :mod:`.address`: broker addresses (URLs, credentials, TLS) and keeping
  credentials out of logs;
- :mod:`.client`: the one client factory (:func:`~.client.connect`), client
  ids, a session taken over;
- :mod:`.reconnect`: staying connected, with a back-off;
- :mod:`.topics`: the topic layout of the service's output, and one topic level
  from a name.
"""
