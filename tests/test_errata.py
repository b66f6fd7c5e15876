"""The machine-readable errata list is well formed and points at real checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"typo", "wrong formula", "invalid step, true conclusion", "wrong pseudo-code", "numerical inaccuracy"}
FIELDS = {"label", "location", "kind", "says", "correction", "chapter"}
ENTRIES = [e for f in sorted((ROOT / "errata").glob("*.yml")) for e in yaml.safe_load(f.read_text())]


def test_labels_unique():
    labels = [e["label"] for e in ENTRIES]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["label"])
def test_entry(entry):
    assert set(entry) == FIELDS
    assert entry["kind"] in KINDS
    assert entry["label"].startswith("err-")
    nb = ROOT / entry["chapter"]
    assert nb.exists()
    sources = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "markdown")
    assert f"({entry['label']})=" in sources, f"{entry['label']} is not a target in {entry['chapter']}"
