"""The one way a registry finds what the project's apps declare: each app's module of a given name (``tasks``,
``api``, ``home``, ``release_files``), imported in the apps' order. A library's module of the same name is not
ours, so only the apps under ``BASE_DIR`` are asked."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from types import ModuleType

from django.apps import apps
from django.conf import settings
from django.utils.module_loading import module_has_submodule

__all__ = ["app_modules"]


def app_modules(name: str) -> Iterator[tuple[str, ModuleType]]:
    """(app name, its module ``name``) for every project app that has one."""
    root = Path(settings.BASE_DIR).resolve()
    for app in apps.get_app_configs():
        if Path(app.path).resolve().is_relative_to(root) and module_has_submodule(app.module, name):
            yield app.name, import_module(f"{app.name}.{name}")
