"""Engine workers on other machines, through an MQTT broker (docs/workers.md).

- :mod:`livegain.remote.protocol`: the job, result and worker (presence)
  messages, their topics and JSON Schema (sans I/O);
- :mod:`livegain.remote.tracker`: which jobs are out, their deadlines, first
  result wins, refusal of results for another engine or limit (sans I/O);
- :mod:`livegain.remote.evaluator`: :class:`RemoteEvaluator`, the service's
  and ``livegain analyze --broker``'s side (aiomqtt);
- :mod:`livegain.remote.worker`: :class:`EngineWorker`, ``livegain worker``
  (an :class:`~livegain.engine.pool.EnginePool` taking jobs; aiomqtt).
"""
