"""The running service: feeds, the game state, the engine and the publishers
wired together (:mod:`.service`), and what it is made of.

- :mod:`.service`: the wiring (:class:`~.service.Service`);
- :mod:`.models`: which models the numbers come from;
- :mod:`.match`: live odds of a configured match;
- :mod:`.feed_health`: what the service saw of each feed;
- :mod:`.logs`: structured logs.
"""
