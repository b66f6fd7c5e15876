"""`make lab` serves JupyterLab on chapters/ with the project's kernel.

The make target itself is run (in this test's environment, passed as VENV),
headless on a free local port with a token; the test fetches /lab, asks the
server which kernels and files it offers, and stops it.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)
pytestmark = pytest.mark.book  # run once in CI (tests/conftest.py)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


@pytest.mark.slow
def test_make_lab_serves_the_chapters_with_the_project_kernel(tmp_path):
    make = ["make", "--no-print-directory", f"VENV={VENV}", f"PYTHON={sys.executable}"]
    clean = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    if subprocess.run([*make, "-q", "venv"], cwd=ROOT, env=clean).returncode != 0:
        pytest.skip(f"{VENV} is not up to date with pyproject.toml (`make venv` installs it)")
    port, token = _free_port(), secrets.token_hex(16)
    args = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env |= {"JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "run")}
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen([*make, "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        status, page = 0, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status, page = _get(f"{base}/lab?token={token}")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
        assert status == 200, f"/lab answered {status}\n" + (tmp_path / "lab.log").read_text()[-3000:]
        assert "<title>JupyterLab</title>" in page

        specs = json.loads(_get(f"{base}/api/kernelspecs?token={token}")[1])
        kernel = specs["kernelspecs"][specs["default"]]["spec"]
        assert kernel["display_name"] == "Python 3 (egmlib)"
        assert Path(kernel["argv"][0]).resolve().is_relative_to(VENV.resolve()) or \
            Path(kernel["argv"][0]).parent.resolve() == Path(sys.executable).parent.resolve()

        listing = json.loads(_get(f"{base}/api/contents?token={token}")[1])
        served = {item["name"] for item in listing["content"]}
        assert {p.name for p in (ROOT / "chapters").glob("*.ipynb")} <= served
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    with pytest.raises(OSError):  # stopped: nothing listens on the port any more
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
