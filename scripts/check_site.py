"""A reader's check of the built site in a real browser (headless Chromium).

Serves ``_build/html`` on 127.0.0.1, opens every page with all other hosts
unresolvable, and fails on
  * math left as raw TeX (MathJax must typeset every formula offline),
  * a broken internal link or image (checked against the files of the site),
  * a console error reported by the page.
Each page is also photographed whole at two widths, 1280 px (a laptop) and
390 px (a phone), into ``--screenshots`` (a build artifact, not committed):
``<page>.w1280.<k>.png`` and ``<page>.w390.<k>.png``, the page cut into strips
(``STRIP`` px high) laid side by side, ``COLUMNS`` strips to a sheet, so that a
reviewer can look at every page at both widths, top to bottom.  The whole page
is captured through Chromium's DevTools protocol (``websocket-client``, which
JupyterLab brings); without it, only the first screen of each page.

Usage: python scripts/check_site.py [_build/html] [--screenshots _build/screenshots]
"""

from __future__ import annotations

import argparse
import base64
import html.parser
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_math_offline import FLAGS, _chromium, _serve  # noqa: E402

WIDTHS = (1280, 390)
REDIRECT = re.compile(r'<meta http-equiv="refresh"', re.I)
STRIP = 2000  # px of page per strip
COLUMNS = {1280: 1, 390: 4}  # strips side by side on one sheet


class _DevTools:
    """One headless Chromium, driven through its DevTools protocol."""

    def __init__(self, width: int) -> None:
        import websocket  # websocket-client

        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self.profile.name}", "--remote-debugging-port=0",
             "--hide-scrollbars", f"--window-size={width},900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json") as response:
            target = next(t for t in json.load(response) if t["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=120,
                                              suppress_origin=True)
        self.next_id = 0

    def call(self, method: str, wait_event: str | None = None, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        result, seen = None, wait_event is None
        while result is None or not seen:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result = message["result"]
            elif message.get("method") == wait_event:
                seen = True
        return result

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.profile.cleanup()


def screenshots(url: str, width: int, stem: Path) -> list[Path]:
    """The whole page at ``width`` CSS px, as sheets of side-by-side strips."""
    from PIL import Image

    browser = _DevTools(width)
    try:
        browser.call("Page.enable")
        # a viewport one strip high, scrolled strip by strip (capturing beyond the
        # viewport re-lays out the whole page for every strip: many times slower)
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=STRIP,
                     deviceScaleFactor=1, mobile=width < 600)
        browser.call("Page.navigate", wait_event="Page.loadEventFired", url=url)
        # MathJax typesets after the load event; then fonts and images settle.  Sticky
        # headers would cover the top of every strip: they scroll with the page here.
        browser.call("Runtime.evaluate", awaitPromise=True, expression=(
            "(window.MathJax && MathJax.startup && MathJax.startup.promise"
            " ? MathJax.startup.promise : Promise.resolve())"
            ".then(() => document.fonts.ready).then(() => {"
            " const s = document.createElement('style');"
            " s.textContent = '.bd-header-article, .header-article, .bd-header, .sticky-top"
            " { position: static !important; }';"
            " document.head.appendChild(s); })"
            ".then(() => new Promise(r => setTimeout(r, 500))).then(() => true)"))
        height = int(browser.call("Page.getLayoutMetrics")["cssContentSize"]["height"])
        strips = []
        for top in range(0, height, STRIP):
            shown = min(top, max(height - STRIP, 0))  # the browser scrolls no further
            browser.call("Runtime.evaluate", awaitPromise=True, expression=(
                f"window.scrollTo(0, {shown}); new Promise(r => requestAnimationFrame("
                "() => requestAnimationFrame(() => r(true))))"))
            data = browser.call("Page.captureScreenshot", format="png")["data"]
            image = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
            # keep what this strip adds below the previous one
            strips.append(image.crop((0, top - shown, width, min(STRIP, height - shown))))
    finally:
        browser.close()
    columns, gap = COLUMNS.get(width, 1), 16
    sheets = []
    for k in range(0, len(strips), columns):
        group = strips[k:k + columns]
        sheet = Image.new("RGB", (columns * width + (columns - 1) * gap, max(s.height for s in group)),
                          (160, 160, 160))
        for i, strip in enumerate(group):
            sheet.paste(strip, (i * (width + gap), 0))
        path = stem.with_name(f"{stem.name}.w{width}.{k // columns + 1:02d}.png")
        sheet.save(path)
        sheets.append(path)
    return sheets


def _first_screen(url: str, width: int, stem: Path) -> list[Path]:
    path = stem.with_name(f"{stem.name}.w{width}.01.png")
    _chromium(["--virtual-time-budget=20000", f"--window-size={width},{1600 if width > 600 else 844}",
               f"--screenshot={path}", url])
    return [path]


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if key in a and a[key] and tag in ("a", "img", "script", "link"):
                self.targets.append(a[key])


def broken_links(root: Path, page: Path, ids_of) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    bad = []
    for target in parser.targets:
        url = urllib.parse.urlparse(target)
        if url.scheme or url.netloc or target.startswith(("mailto:", "javascript:", "data:")):
            continue
        path = url.path
        dest = page if not path else (page.parent / urllib.parse.unquote(path)).resolve()
        if dest.is_dir():
            dest = dest / "index.html"
        if not dest.exists():
            bad.append(target)
        elif url.fragment and dest.suffix == ".html" and url.fragment not in ids_of(dest):
            bad.append(target)
    return bad


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=Path("_build/html"))
    parser.add_argument("--screenshots", type=Path, default=Path("_build/screenshots"))
    args = parser.parse_args(argv)
    root = args.site.resolve()
    pages = sorted(p for p in root.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts
                   and p.name not in ("genindex.html", "search.html"))
    args.screenshots.mkdir(parents=True, exist_ok=True)
    id_cache: dict[Path, set[str]] = {}

    def ids_of(p: Path) -> set[str]:
        if p not in id_cache:
            ps = _Links()
            ps.feed(p.read_text(encoding="utf-8"))
            id_cache[p] = ps.ids
        return id_cache[p]

    try:
        import websocket  # noqa: F401
        shoot = screenshots
    except ImportError:
        print("websocket-client is not installed: screenshots show only the first screen of each page")
        shoot = _first_screen
    server, port = _serve(root)
    failures = 0
    try:
        for page in pages:
            rel = page.relative_to(root).as_posix()
            url = f"http://127.0.0.1:{port}/{rel}"
            dom, log = _chromium(["--virtual-time-budget=20000", "--enable-logging=stderr", "--v=0",
                                  "--dump-dom", url], with_log=True)
            stem = args.screenshots / rel.replace("/", "__").removesuffix(".html")
            for old in args.screenshots.glob(f"{stem.name}.w*.png"):
                old.unlink()
            shots, shot_errors = [], []
            if not REDIRECT.search(page.read_text(encoding="utf-8")):  # index.html only redirects
                for width in WIDTHS:
                    try:
                        shots += shoot(url, width, stem)
                    except Exception as error:  # a screenshot is for the reviewer, not a check
                        shot_errors.append(f"no screenshot at {width} px: {error}")
            raw = re.findall(r'class="math[^"]*"[^>]*>\s*(\\\(|\\\[|\$)', dom)
            console = [l for l in log.splitlines() if "CONSOLE" in l and ("Error" in l or "error" in l)
                       and "favicon" not in l]
            bad = broken_links(root, page, ids_of)
            ok = not raw and not console and not bad
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {rel}: {dom.count('<mjx-container')} formulas, "
                  f"{len(raw)} raw TeX, {len(console)} console errors, {len(bad)} broken links, "
                  f"{len(shots)} screenshots")
            for item in console[:5] + bad[:10] + shot_errors:
                print("     ", item)
    finally:
        server.shutdown()
    print(f"{len(pages)} pages, {failures} failing; screenshots in {args.screenshots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
