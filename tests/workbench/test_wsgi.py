"""The server entry point warms up what each app asks for, so no visitor's first page waits for imports."""

import importlib
import sys

from django.apps import apps


def test_the_server_calls_warm_up_on_every_app_that_has_one(monkeypatch):
    called = []
    for label in ["workbench", "pooling"]:
        monkeypatch.setattr(apps.get_app_config(label), "warm_up", lambda label=label: called.append(label),
                            raising=False)
    monkeypatch.delitem(sys.modules, "workbench.wsgi", raising=False)
    wsgi = importlib.import_module("workbench.wsgi")
    assert sorted(called) == ["pooling", "workbench"]
    assert callable(wsgi.application)
