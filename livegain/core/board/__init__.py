"""Live game state: boards, moves, corrections, results, clocks and evaluations.

One concept per module:

- :mod:`~livegain.core.board.results`: result tokens, their spellings, the DGT signal;
- :mod:`~livegain.core.board.identity`: players, rounds, board numbers, board slugs;
- :mod:`~livegain.core.board.moves`: moves as feeds write them, reported positions;
- :mod:`~livegain.core.board.updates`: the typed values a board hands out;
- :mod:`~livegain.core.board.movelist`, :mod:`~livegain.core.board.illegal`:
  a board's moves and a feed's move list read against them, its illegal moves;
- :mod:`~livegain.core.board.clocks`, :mod:`~livegain.core.board.sources`:
  a board's clocks (each move's and the clocks now), and which of its feeds it follows;
- :mod:`~livegain.core.board.problems`: bad input from a feed, reported once while it lasts;
- :mod:`~livegain.core.board.scoring`, :mod:`~livegain.core.board.shown_wdl`,
  :mod:`~livegain.core.board.requests`: its running score and the players'
  numbers, the W/D/L it shows, the positions waiting for the engine;
- :mod:`~livegain.core.board.board`: one board (:class:`BoardGame`);
- :mod:`~livegain.core.board.matching`: the keys a snapshot finds its board by;
- :mod:`~livegain.core.board.registry`: every board (:class:`BoardRegistry`).

Pure: no I/O, no clock, no asyncio. Feeds hand :class:`GameSnapshot` values to a
:class:`BoardRegistry`; it matches each one to a board and works out what changed.
The service asks it which positions need an engine evaluation and hands the
answers back. Every call returns typed :class:`BoardUpdate` values to publish.
The rules are written out one at a time in ``docs/game-state.md``.

The whole API::

    t = BoardRegistry(engine_rating=2860.0)        # engine=None: single peak at 0
    t = BoardRegistry(2860.0, max_plies=1000, max_boards=1000)   # limits (None: none)
    applied = t.apply(snapshot)                 # -> Applied (now=...: see "Sources" below)
    applied.board_id, applied.new_board, applied.info_changed, applied.takeover
    applied.updates                             # tuple[BoardUpdate, ...] to publish, in order
    applied.errors                              # tuple[BoardError, ...] to log (already counted)

    for req in t.pending():                     # -> list[EvalRequest], best first
        ev = await pool.evaluate(req.board(), priority=req.priority)
        updates = t.record_eval(req.board_id, req.ply, req.fen, ev)   # -> list[BoardUpdate]

    t.iter_pending(), t.pending_count()         # the same, read lazily; how many
    t.take_changed()                            # boards that gained positions since last call
    t.refused                                   # snapshots refused by a limit (errors say why)

    t.boards                                    # dict board_id -> BoardGame (read-only views)
    t.board(board_id)                           # KeyError if unknown
    t.match(snapshot)                           # the board id a snapshot would go to, or None
    t.errors, t.unmatched                       # snapshots that matched no board (last few, count)
    t.tick(now)                                 # -> list[Applied]: takeovers that came due

    g = t.board(board_id)                       # what livegain.publish.convert reads:
    g.white, g.black, g.event, g.round, g.board, g.result, g.status, g.clocks
    g.start_fen, g.fen, g.plies, g.moves()      # list[PlyInfo]: san, uci, clock, eval, wdl, gain
    g.current_eval, g.current_wdl, g.start_eval, g.evaluated_plies
    g.wdl_at(ply), g.engine_wdl_at(ply)         # shown W/D/L (human model), the engine's own
    g.wdl_model, g.wdl_fallback, g.models       # the models the board uses (BoardModels)
    sc = g.scoring                              # the players' numbers (core/board/scoring.py)
    sc.perceived("white"), sc.calibrated("white"), sc.form("white"), sc.trace("black")
    sc.head_to_head(), sc.profile_sum("white")  # Algorithm 1; (moves, centi_sum) of a player
    sc.rating_range, sc.scale                   # the model's validated ratings and scale
    sc.label("white")                           # what to show beside his numbers
    g.seq, g.errors, g.last_errors
    g.source_active, g.source_status(), g.takeovers, g.conflicts   # sources (below)
    g.illegal_plies, g.irregular                # illegal moves that stood / stop the board

``perceived`` is Algorithm 4 (:mod:`livegain.core.rating`); ``calibrated``
the calibrated estimate (:mod:`livegain.core.perceived`), present when the
tournament was given a :class:`~livegain.core.perceived.PerceivedModel`
(``BoardRegistry(engine_rating, model=model)``), and ``form`` the player's
official rating (from the feed) updated by his moves (None without a rating).
All three come with every update, and each trace point carries them.

**Win/draw/loss.** With a human W/D/L model
(:class:`~livegain.core.human_wdl.HumanWdlModel`, ``BoardRegistry(...,
wdl_model=m)``) the W/D/L shown for a position (``current_wdl``,
``start_wdl``, each ``PlyInfo.wdl``) is the model's, from the evaluation, the
ply, the side to move and the players' official ratings; the engine's own
W/D/L stays beside it (``engine_wdl``, None when the engine gives none).
Without one the engine's W/D/L is shown, else the win-chance curve
(:mod:`livegain.core.wdl`). ``BoardRegistry(..., choose_models=f)`` picks the
models per board instead: ``f(snapshot) -> BoardModels``, called when the
board is made and whenever its players, event or tags change (a pure
lookup: the caller loads the models beforehand).

A :class:`BoardUpdate` has a ``kind``: ``truncate`` (drop plies after
``truncate_to``), ``move`` (a new, unevaluated move), ``eval`` (an evaluation
that does not extend the evaluated prefix), ``ply`` (the prefix grew: gain,
perceived ratings, trace point, head-to-head), ``clock`` or ``result``.

``pending()`` lists every missing evaluation each time it is called; a caller
that runs evaluations concurrently keeps its own in-flight set keyed by
``EvalRequest.key`` (board id, ply, FEN). ``record_eval`` ignores an answer
whose FEN is no longer the position at that ply (the board was corrected
meanwhile) and returns ``[]`` for it.

**Sources.** Snapshots of feeds that share an event group (``snap.group``)
match each other's boards: one game from two sources is one board. The
board follows one source at a time (``g.source_active``): a preferred one
(lower ``snap.priority``) whose list is not behind takes it at once; another
one takes it when its list has been ahead of (or in conflict with) the
active source's for ``snap.takeover_after`` seconds while the active source
changed nothing; until then a conflicting list is an error on the board.
Time is passed in: ``apply(snap, now)`` (default ``snap.received_at``) and
``tick(now)``; without it no takeover happens by time. Players are the same
when their FIDE ids are (:func:`player_key`), else their normalised names.

**Illegal moves that stood.** A move that cannot be played, followed by more
moves, does not stop the board when the feed reports the position after it
(``snap.fens``) or the move is pseudo-legal (a king left in check) and the
next one is legal after it: the game goes on from that position, the ply is
marked (``g.illegal_plies``, one error) and its gain is not counted (nor the
next one's when that position is no legal one, which is not evaluated).

Board ids are assigned once, when a board is first seen, and never change:
``{source}-g{GameId}`` when the game has a GameId, else ``{source}-r{round}-b{board}``,
else ``{source}-r{round}-{white}-{black}`` (surnames), each part slugified
(lowercase ASCII letters, digits and ``-``); a clash gets ``-2``, ``-3``...
"""
