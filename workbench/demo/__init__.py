"""The demo collection's data: stdlib docstrings as documents, 30 hand-written topics, six real runs.

Plain Python (no Django): the ``build_demo`` management command imports the files this package writes.

>>> from pathlib import Path
>>> files = build_demo_files(Path("var/demo"))          # doctest: +SKIP
>>> [run.tag for run in files.runs]                     # doctest: +SKIP
['bm25-title', 'bm25-desc', 'bm25-rm3', 'tfidf-title', 'tfidf-desc', 'ql-dir']
"""

from .build import DemoFiles, DemoRun, build_demo_files
from .documents import build_documents
from .modules import MODULES, SMALL_MODULES
from .runs import DEPTH, RUN_SPECS
from .topics import ANSWER_KEY, TOPICS

__all__ = [
    "ANSWER_KEY",
    "DEPTH",
    "MODULES",
    "RUN_SPECS",
    "SMALL_MODULES",
    "TOPICS",
    "DemoFiles",
    "DemoRun",
    "build_demo_files",
    "build_documents",
]
