"""The model files livegain ships: read by the service and batch analysis,
written by ``calibrate``, ``fit`` and ``validate --write-config``.

- :mod:`.files`: the TOML files themselves, their tables, and choosing a
  model for an evaluation source;
- :mod:`.engine`: the engine's strength r_e per engine and limit (Algorithm 3);
- :mod:`.perceived`: the calibrated perceived-rating models;
- :mod:`.wdl`: the human win/draw/loss models.
"""
