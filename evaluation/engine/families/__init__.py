"""One module per measure family added to the engine's tables (:mod:`evaluation.engine.spec`), each declaring
``MEASURE``: a :class:`~evaluation.engine.declaration.MeasureSpec` with its label, help, typed parameters and kernel.
The engine's own families are declared here too, as tables in their output order: ``trec_eval.py`` (trec_eval's)
and ``workbench.py`` (the workbench's own), each ``MEASURES``.

:func:`evaluation.engine.spec.autodiscover` imports every module here and registers each ``MEASURE``: the
family is then a name ``trec_eval -m``, ``evaluate -m`` and the results pages' *Measures* accept, and a row
of the docs' measures table. Adding a family is adding a module here and its test.
"""
