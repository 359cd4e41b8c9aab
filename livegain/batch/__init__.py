"""Batch work on whole PGN files: no service, no clock of the game.

- :mod:`.pgnio`: reading games (and their evaluations) from PGN files, in parallel;
- :mod:`.engine_analysis`: every position of every game through the engine pool;
- :mod:`.annotated`: games with their evaluations, as analysis and fits read them;
- :mod:`.analysis`: Algorithms 1-4 over whole games and events (``livegain analyze``);
- :mod:`.validity`: the perceived rating and form checked on games they were not fitted to;
- :mod:`.wdl_fit` and :mod:`.wdl_validity`: the human W/D/L model's fit and its check;
- :mod:`.backtest`: the tournament odds replayed over finished events.
"""
