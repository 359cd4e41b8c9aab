"""The running service: feeds, the game state, the engine and the publishers
wired together (:mod:`.service`), and what it is made of.

- :mod:`.service`: the wiring (:class:`~.service.Service`), one task per part;
- :mod:`.outputs`: where what viewers see goes (the server, MQTT);
- :mod:`.scheduler`: which positions go to the engine, and when;
- :mod:`.delay`: the broadcast delay, wired to the outputs and the store;
- :mod:`.store_writes`: the store's writes, their failures and retries;
- :mod:`.models`: which models the numbers come from;
- :mod:`.match`: live odds of a configured match;
- :mod:`.standings`: live standings and tournament odds per event;
- :mod:`.health`: ``/healthz``; :mod:`.metrics`: ``/metrics``;
- :mod:`.feed_health`: what the service saw of each feed;
- :mod:`.stats`: the service's counters; :mod:`.logs`: structured logs.
"""
