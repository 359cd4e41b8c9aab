"""Pure domain core: no I/O, no asyncio, no clock.

Modules:
- ``evaluation``: evaluation normalisation (clip at +/-3900 cp) and gain per move.
- ``events``: what feeds hand to the core (``GameSnapshot``, ``PlayerInfo``).
- ``histogram``: gain histograms, Algorithm 1 and Algorithm 4 expected scores.
- ``rating``: rating difference from expected score, intervals, perceived ratings.
- ``ledger``: per-game incremental gains, histograms and perceived-rating traces.
- ``tournament``: Algorithm 2 (tournament perceived ratings), Algorithm 3 (engine strength).
- ``elo``: Elo expectations (logistic, normal, logarithmic), FIDE K-factor, rating change.
- ``odds``: per-game win/draw/loss and exact match odds.
- ``ranking``: maximum-likelihood ranking from head-to-head results (Davidson model).
- ``game``: the per-board live game state machine (corrections, takebacks, evaluations).
"""
