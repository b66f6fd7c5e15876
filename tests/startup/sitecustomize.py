"""Run by every Python process that `make test` starts (the Makefile puts this
folder on PYTHONPATH; Python imports ``sitecustomize`` at start-up): pytest and its
workers, the book's builds, kernels, the scripts the tests run.

jsonschema, which nbformat imports (nbval, myst-nb, nbclient, JupyterLab's
server), imports rfc3987_syntax on its own import, for its check of the "iri"
and "iri-reference" formats; rfc3987_syntax builds a Lark grammar when it is
imported, about 3 CPU-s (2026-11-28) in every process that reads a notebook,
and no test of the book checks an IRI format.  Here its import is deferred:
``rfc3987_syntax`` is a stand-in whose ``is_valid_syntax`` (all that jsonschema
takes from it) imports the real module at its first call and hands on to it, so
every check gives what the real one gives (tests/test_environment.py).  Nothing
else changes, and where rfc3987_syntax is not installed nothing is deferred.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

_NAME = "rfc3987_syntax"


class _Deferred(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The stand-in's finder and loader (first on sys.meta_path)."""

    real = None
    stepped_aside = False

    def find_spec(self, name, path=None, target=None):
        if name != _NAME or _Deferred.stepped_aside:
            return None
        sys.meta_path.remove(self)
        try:
            found = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        return None if found is None else importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        def is_valid_syntax(*args, **kwargs):
            return _Deferred.load().is_valid_syntax(*args, **kwargs)

        module.is_valid_syntax = is_valid_syntax

        def __getattr__(attribute):  # anything else of the module: the real one's
            if attribute.startswith("__"):
                raise AttributeError(attribute)
            return getattr(_Deferred.load(), attribute)

        module.__getattr__ = __getattr__
        module.__egm_deferred__ = True

    @classmethod
    def load(cls):
        """The real rfc3987_syntax, imported the first time it is needed."""
        if cls.real is None:
            cls.stepped_aside = True
            sys.modules.pop(_NAME, None)
            cls.real = importlib.import_module(_NAME)
        return cls.real


if _NAME not in sys.modules:
    sys.meta_path.insert(0, _Deferred())
