"""Batch work on whole PGN files: no service, no clock of the game.

- :mod:`.pgnio`: PGN files read as games (plain or gzip), with errors that name the game;
- :mod:`.pgn_evals`: a game's ``[%eval]`` comments as an annotated game;
- :mod:`.pgn_stream`: a whole file's evaluated games streamed in order, parsed in parallel;
- :mod:`.pgn_write`: annotated PGN written out;
- :mod:`.engine_analysis`: every position of every game through the engine pool;
- :mod:`.annotated`: games with their evaluations, as analysis and fits read them;
- :mod:`.game_analysis`: one game analysed (Algorithms 1 and 4, traces, W/D/L per ply);
- :mod:`.player_pool`: a player's games pooled as running sums, and his report;
- :mod:`.tournament_fit`: Algorithm 2 over the event, with its jackknife;
- :mod:`.analysis`: a file's games analysed one by one into a report (``livegain analyze``);
- :mod:`.eval_source`: whose evaluations a run reads, and the r_e and models picked for them;
- :mod:`.report_json` and :mod:`.report_csv`: the report as JSON (streamed) and CSV;
- :mod:`.engine_calibration`: Algorithm 3's engine strength r_e (``livegain calibrate``);
- :mod:`.validity`: the perceived rating and form checked on games they were not fitted to;
- :mod:`.wdl_fit` and :mod:`.wdl_validity`: the human W/D/L model's fit and its check;
- :mod:`.backtest`: the tournament odds replayed over finished events.
"""
