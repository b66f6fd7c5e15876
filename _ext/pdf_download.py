"""A link from the website to the PDF of the whole book.

``make pdf`` writes ``_build/latex/egm-book.pdf`` beside the HTML output
``_build/html``.  The directive ::

    ```{pdf-download}
    ```

renders, in the HTML build,

* a download link, when that PDF exists at build time; the PDF is then
  copied into the site, so the link works wherever the site is served;
* otherwise nothing: a reader of the landing page is not told about the build
  (issue 33, the student: "The PDF of the whole book is not part of this build"
  was bookkeeping); README.md and the landing page's "Rerun" bullet say how
  ``make pdf`` builds it.  Never a broken link.

It renders nothing in the LaTeX build: the PDF does not link to itself.
Pages that use the directive are re-read on every build, so the link appears
as soon as the PDF does (``make book`` builds the PDF first when LaTeX is
installed).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

PDF_NAME = "egm-book.pdf"


class pdf_download(nodes.General, nodes.Element):
    """Placeholder, resolved when the page is written."""


class PdfDownload(SphinxDirective):
    has_content = False

    def run(self):
        if not hasattr(self.env, "pdf_download_docs"):
            self.env.pdf_download_docs = set()
        self.env.pdf_download_docs.add(self.env.docname)
        return [pdf_download()]


def built_pdf(app) -> Path:
    """Where ``make pdf`` leaves the PDF: ``latex/`` beside the HTML output."""
    return Path(app.outdir).parent / "latex" / PDF_NAME


def _facts(path: Path) -> str:
    """Page count (from LaTeX's log beside the PDF, when there) and size."""
    size = f"{path.stat().st_size / 2**20:.1f} MiB"
    log = path.with_suffix(".log")
    if log.is_file():
        found = re.findall(r"Output written on \S+ \((\d+) pages?", log.read_text(encoding="latin-1"))
        if found:
            return f"{found[-1]} pages, {size}"
    return size


def _resolve(app, doctree, docname):
    for node in list(doctree.findall(pdf_download)):
        if app.builder.format != "html":
            node.parent.remove(node)
            continue
        pdf = built_pdf(app)
        if not pdf.is_file():
            node.parent.remove(node)
            continue
        para = nodes.paragraph(classes=["pdf-download"])
        # the PDF sits at the root of the site (relative_uri also suits dirhtml)
        uri = relative_uri(app.builder.get_target_uri(docname), PDF_NAME)
        para += nodes.strong("", "The whole book as one PDF: ")
        para += nodes.reference("", PDF_NAME, refuri=uri, internal=False)
        para += nodes.Text(f" ({_facts(pdf)}).")
        node.replace_self(para)


def _always_outdated(app, env, added, changed, removed):
    # The link depends on a file outside the sources: re-read those pages every time.
    return sorted(getattr(env, "pdf_download_docs", set()) - set(removed))


def _purge(app, env, docname):
    getattr(env, "pdf_download_docs", set()).discard(docname)


def _merge(app, env, docnames, other):
    if not hasattr(env, "pdf_download_docs"):
        env.pdf_download_docs = set()
    env.pdf_download_docs |= getattr(other, "pdf_download_docs", set()) & set(docnames)


def _copy_pdf(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    pdf = built_pdf(app)
    if pdf.is_file():
        shutil.copyfile(pdf, Path(app.outdir) / PDF_NAME)


def setup(app):
    app.add_node(pdf_download)
    app.add_directive("pdf-download", PdfDownload)
    app.connect("doctree-resolved", _resolve)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _copy_pdf)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
