"""A reader's check of the built site in a real browser (headless Chromium).

Serves ``_build/html`` on 127.0.0.1, opens every page with all other hosts
unresolvable, and fails on
  * math left as raw TeX (MathJax must typeset every formula offline),
  * a broken internal link or image (checked against the files of the site),
  * a console error reported by the page.
A screenshot of each page is written to ``--screenshots`` (a build artifact,
not committed).

Usage: python scripts/check_site.py [_build/html] [--screenshots _build/screenshots]
"""

from __future__ import annotations

import argparse
import html.parser
import re
import sys
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_math_offline import _chromium, _serve  # noqa: E402


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

    server, port = _serve(root)
    failures = 0
    try:
        for page in pages:
            rel = page.relative_to(root).as_posix()
            url = f"http://127.0.0.1:{port}/{rel}"
            dom, log = _chromium(["--virtual-time-budget=20000", "--enable-logging=stderr", "--v=0",
                                  "--dump-dom", url], with_log=True)
            shot = args.screenshots / (rel.replace("/", "__").removesuffix(".html") + ".png")
            _chromium(["--virtual-time-budget=20000", "--window-size=1280,1600", f"--screenshot={shot}", url])
            raw = re.findall(r'class="math[^"]*"[^>]*>\s*(\\\(|\\\[|\$)', dom)
            console = [l for l in log.splitlines() if "CONSOLE" in l and ("Error" in l or "error" in l)
                       and "favicon" not in l]
            bad = broken_links(root, page, ids_of)
            ok = not raw and not console and not bad
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {rel}: {dom.count('<mjx-container')} formulas, "
                  f"{len(raw)} raw TeX, {len(console)} console errors, {len(bad)} broken links")
            for item in console[:5] + bad[:10]:
                print("     ", item)
    finally:
        server.shutdown()
    print(f"{len(pages)} pages, {failures} failing; screenshots in {args.screenshots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
