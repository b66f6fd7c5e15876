"""Check that a built page typesets its math with no network (headless Chromium).

Serves the built site on 127.0.0.1, opens PAGE in Debian's chromium with every
non-local host unresolvable, lets MathJax run, and fails if a math element is
left as raw TeX or no MathJax output is found.  Optionally saves a screenshot.

Usage: python scripts/check_math_offline.py _build/html/chapters/x.html [--screenshot out.png]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic",
    # no network: every host but the local server fails to resolve
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def _site_root(page: Path) -> Path:
    for parent in page.resolve().parents:
        if (parent / "_static").is_dir() and (parent / "index.html").exists():
            return parent
    raise SystemExit(f"no built site above {page}")


def _serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the output to the verdict
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):  # a browser hanging up early is fine
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def _chromium(args: list[str], with_log: bool = False):
    """Run headless Chromium; return its stdout (and stderr if ``with_log``)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("chromium not found (apt-get install chromium)")
    # its profile and its temporary files (TMPDIR: its singleton socket,
    # org.chromium.Chromium.*) in a directory removed when it has ended
    base = tempfile.gettempdir()  # a short name: the socket's path has at most 107 bytes
    with tempfile.TemporaryDirectory(prefix="egm-c-", dir=base if len(base) <= 40 else "/tmp",
                                     ignore_cleanup_errors=True) as profile:
        own_tmp = Path(profile) / "t"
        own_tmp.mkdir()
        proc = subprocess.run([exe, *FLAGS, f"--user-data-dir={Path(profile) / 'p'}", *args],
                              capture_output=True, text=True, timeout=240,
                              env={**os.environ, "TMPDIR": str(own_tmp)})
    return (proc.stdout, proc.stderr) if with_log else proc.stdout


def check(page: Path, screenshot: Path | None) -> int:
    root = _site_root(page)
    server, port = _serve(root)
    try:
        url = f"http://127.0.0.1:{port}/{page.resolve().relative_to(root).as_posix()}"
        dom = _chromium(["--virtual-time-budget=20000", "--dump-dom", url])
        if screenshot is not None:
            _chromium(["--virtual-time-budget=20000", "--window-size=1280,1600",
                       f"--screenshot={screenshot}", url])
    finally:
        server.shutdown()
    typeset = dom.count("<mjx-container")
    raw = re.findall(r'class="math[^"]*"[^>]*>\s*(\\\(|\\\[|\$)', dom)
    print(f"{page.name}: {typeset} typeset formulas, {len(raw)} left as raw TeX")
    if typeset == 0 or raw:
        return 1
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args(argv)
    return check(args.page, args.screenshot)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
