"""One module per pool strategy, each declaring ``STRATEGY`` (a :class:`..declaration.Strategy`).

:func:`pooling.strategies.registry.autodiscover` imports every module here and registers each ``STRATEGY``
(:mod:`.common` declares the parameters several strategies share). Adding a strategy is adding a module
here and its test.
"""
