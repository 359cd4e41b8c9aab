"""Relays: PGN games served as a live broadcast serves them, for ``livegain
replay``, the demo and the tests.

Not a feed: a relay is the other end, the source a feed follows. It writes the
formats the feeds read (PGN over HTTP, the Lichess broadcast API, LiveChess
Cloud JSON, MQTT move events) with the feeds' own PGN reader and writer; the
feeds never import it.

* :mod:`livegain.relay.replay`: one round of a PGN, its moves revealed over time;
* :mod:`livegain.relay.event`: a whole event, round after round, shaped as
  Lichess and LiveChess Cloud serve one;
* :mod:`livegain.relay.http`: their GET-only HTTP server.
"""
