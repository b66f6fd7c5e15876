"""Replace one egmlib function by a mutant wherever egmlib holds a reference to it.

A chapter imports with ``from egmlib.scaling import clip_radius`` and egmlib's own
modules import each other the same way (``from egmlib.gchi2 import isf``, sometimes
under another name, e.g. ``isf as _gchi2_isf``). Rebinding the attribute in the
defining module alone would miss those copies, so :func:`patch` walks every loaded
``egmlib`` module and rebinds each global, and each entry of a module-level dict,
list or tuple, that *is* the original function object. Applied before a chapter's
own imports run, both import styles then see the mutant.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PACKAGE = "egmlib"


@dataclass
class Patch:
    """An installed mutant: where it was put, and how to undo it."""

    target: str
    original: Callable[..., Any]
    mutant: Callable[..., Any]
    sites: list[str] = field(default_factory=list)
    _undo: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def restore(self) -> None:
        """Put the original function back everywhere the mutant was installed."""
        while self._undo:
            self._undo.pop()()

    def __enter__(self) -> Patch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()


def resolve(target: str) -> Callable[..., Any]:
    """The public function named ``target`` ("egmlib.module.function")."""
    module_name, _, attr = target.rpartition(".")
    if not module_name.startswith(PACKAGE + ".") or not attr or attr.startswith("_"):
        raise ValueError(f"target must be 'egmlib.<module>.<public function>', got {target!r}")
    module = importlib.import_module(module_name)
    try:
        original = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"target {target!r}: module {module_name} has no attribute {attr!r}") from None
    if not callable(original):
        raise TypeError(f"target {target!r} is not callable: {type(original).__name__}")
    return original


def _egmlib_modules() -> list[Any]:
    package = importlib.import_module(PACKAGE)
    # egmlib/__init__.py loads its submodules lazily: load them all here, so that the
    # mutant replaces every binding of the original
    for info in pkgutil.iter_modules(package.__path__):
        if info.name != "symbolic" or importlib.util.find_spec("sympy") is not None:
            importlib.import_module(f"{PACKAGE}.{info.name}")
    return [m for name, m in sorted(sys.modules.items())
            if m is not None and (name == PACKAGE or name.startswith(PACKAGE + "."))]


def patch(target: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Patch:
    """Install ``make(original)`` in place of the function ``target`` throughout egmlib.

    Returns a :class:`Patch` whose ``restore()`` (or ``with`` block) undoes it.
    """
    original = resolve(target)
    # egmlib's package namespace is lazy: resolve every public name first, so that a name
    # first read inside the patch is not cached as the mutant after restore().
    package = importlib.import_module("egmlib")
    for name in getattr(package, "__all__", ()):
        getattr(package, name, None)
    mutant = make(original)
    if not callable(mutant) or mutant is original:
        raise ValueError(f"the mutant of {target} must be a new callable")
    result = Patch(target, original, mutant)

    def rebind(container: Any, key: Any, site: str) -> None:
        container[key] = mutant
        result.sites.append(site)
        result._undo.append(lambda: container.__setitem__(key, original))

    for module in _egmlib_modules():
        namespace = vars(module)
        for key, value in list(namespace.items()):
            if value is original:
                rebind(namespace, key, f"{module.__name__}.{key}")
            elif isinstance(value, dict):
                for k, v in list(value.items()):
                    if v is original:
                        rebind(value, k, f"{module.__name__}.{key}[{k!r}]")
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if v is original:
                        rebind(value, i, f"{module.__name__}.{key}[{i}]")
            elif isinstance(value, tuple) and any(v is original for v in value):
                replaced = tuple(mutant if v is original else v for v in value)
                namespace[key] = replaced
                result.sites.append(f"{module.__name__}.{key}")
                result._undo.append(lambda ns=namespace, k=key, old=value: ns.__setitem__(k, old))
    if target not in result.sites:  # pragma: no cover - resolve() found it there
        raise RuntimeError(f"{target} was not rebound")
    return result


def install(name: str, catalog: Any = None) -> list[Patch]:
    """Install the catalog entry ``name`` (or the control ``control:<chapter>``).

    This is what the runner's unsaved setup cell calls inside the chapter's kernel;
    ``catalog`` is a module with a ``patches_for(name)`` (default :mod:`mutants.catalog`).
    """
    if catalog is None:
        from mutants import catalog
    return [patch(target, make) for target, make in catalog.patches_for(name)]
