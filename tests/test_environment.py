"""environment.yml (conda / Binder) and pyproject.toml pin the same packages."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_ONLY = {"python", "pip", "chi2comb"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_pins() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(data["dependencies"])
    for extra in data["optional-dependencies"].values():
        specs.extend(extra)
    pins = {}
    for spec in specs:
        name, sep, version = spec.partition("==")
        assert sep, f"{spec} is not pinned exactly"
        pins[_norm(name)] = version
    return pins


def _environment_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for spec in dep["pip"]:
                if spec.startswith("-e"):
                    continue
                name, sep, version = spec.partition("==")
                assert sep, f"pip entry {spec} is not pinned exactly"
                pins[_norm(name)] = version
        else:
            name, _, version = dep.partition("=")
            if _norm(name) not in CONDA_ONLY:
                assert version, f"conda entry {dep} is not pinned"
                pins[_norm(name)] = version
    return pins


def test_same_packages_and_versions():
    assert _environment_pins() == _pyproject_pins()


def test_environment_has_conda_only_extras():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    names = {d.partition("=")[0] for d in env["dependencies"] if isinstance(d, str)}
    assert {"python", "chi2comb"} <= names
    assert "conda-forge" in env["channels"]
