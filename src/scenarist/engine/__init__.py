"""Running scenarios: the ``Scenario`` builder, interactions, the runner that plays one
scenario over a shared trace, ``Suite``, executors, concurrency and rate limits, and the
helpers that call user code (sync or async) safely. Built on :mod:`scenarist.model`."""
