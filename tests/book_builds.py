"""One way to build the book for the tests: from the stored outputs (execution off),
with warnings as errors, into a temporary folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def build_book(out: Path, builder: str | None = None) -> Path:
    """Build the book into ``out`` (``builder`` e.g. "latex"; default HTML) and
    return ``out / "_build"``; fails the test with the build's log if it fails."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    cfg = out / "_config.yml"
    cfg.write_text(yaml.safe_dump(config))
    shutil.copytree(ROOT / "_ext", out / "_ext")  # local_extensions resolve beside the config
    cmd = [str(BIN / "jupyter-book"), "build", str(ROOT), "--path-output", str(out),
           "--config", str(cfg), "-W", "-n", "--keep-going"]
    if builder:
        cmd[3:3] = ["--builder", builder]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out / "_build"
