"""The server entry point warms up what each app asks for when SERVER_WARM_UP is on, and by default leaves the
heavier libraries to first use, so each web worker does not carry them for pages nobody opens."""

import importlib
import sys

import pytest
from django.apps import apps


def _start_server(monkeypatch) -> tuple[list[str], object]:
    called = []
    for label in ["workbench", "pooling"]:
        monkeypatch.setattr(apps.get_app_config(label), "warm_up", lambda label=label: called.append(label),
                            raising=False)
    monkeypatch.delitem(sys.modules, "workbench.wsgi", raising=False)
    return called, importlib.import_module("workbench.wsgi")


@pytest.mark.parametrize("warm_up, expected", [(True, ["pooling", "workbench"]), (False, [])])
def test_the_server_warms_up_every_app_that_asks_only_when_told(monkeypatch, settings, warm_up, expected):
    settings.SERVER_WARM_UP = warm_up
    called, wsgi = _start_server(monkeypatch)
    assert sorted(called) == expected
    assert callable(wsgi.application)
