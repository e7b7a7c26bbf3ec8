"""Demo documents: the standard library's own docstrings, one document per module and per public object.

Each document is ``{"docno", "title", "text"}``:

- ``docno`` is the qualified name: ``json``, ``json.dumps``, ``collections.OrderedDict.move_to_end``;
  builtins drop their module (``len``, ``str.split``). Docnos only depend on the module list and the
  Python version, so judgments made for them stay valid from one build to the next.
- ``title`` is the qualified name followed by the signature when :func:`inspect.signature` knows it
  (``json.dumps(obj, *, skipkeys=False, ...)``), with ``self``/``cls`` left out of methods.
- ``text`` is the docstring cleaned by :func:`inspect.cleandoc`.

Public objects are the module's ``__all__`` when it has one, else the names not starting with ``_`` that
the module itself defines (or its C accelerator ``_name`` does); private names are skipped even when
listed. A class's text is its docstring followed by its ``__init__`` docstring. Classes contribute
their own public methods and properties, and those inherited from a private base of the same module
(``argparse.ArgumentParser.add_argument``), not others. Documents shorter than :data:`MIN_WORDS` words
and exact repeats of an earlier document's text are dropped (module-level functions come before class
members, so ``random.sample`` wins over ``random.Random.sample``). Everything is in a fixed order, so
the same Python version gives byte-identical output; another patch release adds or drops a few
documents (3.11.2 vs 3.11.7: about ten of 4,000).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import re
import sys
import types
from collections.abc import Iterable, Iterator

from .modules import MODULES

MIN_WORDS = 6

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _machine_strings() -> list[str]:
    """Paths of this machine that can appear as parameter defaults (``platform.architecture``)."""
    values = {sys.executable, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    return sorted((v for v in values if v and len(v) > 1), key=len, reverse=True)


class _Elided:
    def __repr__(self) -> str:
        return "..."


_PLAIN = (str, bytes, int, float, bool, type(None))


def _runtime_state(value: object) -> bool:
    """A default that is a container of live objects (e.g. logging.shutdown's list of handlers) shows
    the interpreter's state, not the API: it differs between a plain interpreter and a test run."""
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    return isinstance(value, list | set | dict) and not all(isinstance(v, _PLAIN) for v in value)


def _signature(obj: object, *, drop_first: bool) -> str:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    params = list(sig.parameters.values())
    if drop_first and params and params[0].name in ("self", "cls"):
        params = params[1:]
    params = [p.replace(default=_Elided()) if _runtime_state(p.default) else p for p in params]
    sig = sig.replace(parameters=params)
    text = _ADDRESS.sub("", str(sig))
    for value in _machine_strings():
        text = text.replace(repr(value), "...")
    return text


def _defined_here(obj: object, module: types.ModuleType) -> bool:
    owner = getattr(obj, "__module__", None)
    if not isinstance(owner, str):
        return False
    name = module.__name__
    return owner == name or owner == "_" + name.rsplit(".", 1)[-1] or owner.startswith(name + ".")


def _public_names(module: types.ModuleType) -> tuple[list[str], bool]:
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted({str(n) for n in declared if not str(n).startswith("_")}), True
    return sorted(n for n in vars(module) if not n.startswith("_")), False


def _members(cls: type) -> Iterator[tuple[str, object, bool]]:
    """(name, function-or-property, is_method) for the class's own public members.

    Members inherited from a private base of the same module count as the class's own
    (``argparse.ArgumentParser.add_argument`` is defined on ``argparse._ActionsContainer``).
    """
    namespace: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base is cls or (base.__name__.startswith("_") and base.__module__ == cls.__module__):
            namespace.update(vars(base))
    for name, value in sorted(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            yield name, value, False
        elif isinstance(value, staticmethod):
            yield name, value.__func__, False
        elif isinstance(value, classmethod):
            yield name, value.__func__, True
        elif inspect.isroutine(value):
            yield name, value, True


def _class_doc(cls: type) -> str | None:
    """The class docstring followed by its own ``__init__`` docstring (where the arguments are described)."""
    parts = [cls.__doc__]
    init = vars(cls).get("__init__")
    init_doc = getattr(init, "__doc__", None)
    if isinstance(init_doc, str) and not init_doc.startswith("Initialize self.  See help"):
        parts.append(init_doc)
    cleaned = [inspect.cleandoc(p).strip() for p in parts if isinstance(p, str) and p.strip()]
    return "\n\n".join(cleaned) or None


def _objects(display: str, module: types.ModuleType) -> Iterator[tuple[str, str, object]]:
    """(docno, title, docstring): the module, its public functions and classes, then the classes' members.

    Module-level objects come before class members so that a function that is a bound method of a
    hidden instance (``random.sample``) keeps the docstring rather than ``random.Random.sample``.
    """
    yield display, display, module.__doc__
    prefix = "" if display == "builtins" else display + "."
    names, declared = _public_names(module)
    classes: list[tuple[str, type]] = []
    for name in names:
        obj = getattr(module, name, None)
        if isinstance(obj, types.ModuleType) or not (inspect.isroutine(obj) or inspect.isclass(obj)):
            continue
        if not declared and not _defined_here(obj, module):
            continue
        qualified = prefix + name
        doc = obj.__doc__
        if inspect.isclass(obj):
            doc = _class_doc(obj)
            classes.append((qualified, obj))
        yield qualified, qualified + _signature(obj, drop_first=False), doc
    for qualified, cls in classes:
        for member, value, is_method in _members(cls):
            docno = f"{qualified}.{member}"
            title = docno if isinstance(value, property) else docno + _signature(value, drop_first=is_method)
            yield docno, title, value.__doc__


def _import_quietly(name: str) -> types.ModuleType:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        return importlib.import_module(name)


def build_documents(modules: Iterable[str] = MODULES) -> list[dict[str, str]]:
    """Documents for ``modules`` (default: :data:`~workbench.demo.modules.MODULES`), in a fixed order.

    >>> docs = build_documents(["json"])
    >>> docs[0]["docno"], "JSON" in docs[0]["text"]
    ('json', True)
    """
    documents: list[dict[str, str]] = []
    seen_docnos: set[str] = set()
    seen_texts: set[str] = set()
    for display in modules:
        module = _import_quietly(display)
        for docno, title, doc in _objects(display, module):
            if not isinstance(doc, str) or docno in seen_docnos:
                continue
            text = inspect.cleandoc(doc).strip()
            if len(text.split()) < MIN_WORDS or text in seen_texts:
                continue
            seen_docnos.add(docno)
            seen_texts.add(text)
            documents.append({"docno": docno, "title": title, "text": text})
    return documents

