/* Issue 26: MathJax 3 does not break inline math, so on a phone a long inline
   formula (the errata's) ran past the column and was cut.  Once the page is
   loaded (its maths typeset at build time), and again after a resize, every inline formula wider than
   the block it stands in gets the class egm-wide-inline, which lets it scroll
   sideways with the same shadow cue as display equations (book_fixes.css).
   Formulas that fit keep their normal inline layout (and baseline). */
(function () {
  "use strict";
  // Issue 33 item 10: pydata-sphinx-theme gives each code block, output and
  // table that scrolls a tab stop (tabIndex 0, the others -1), so that a
  // keyboard can scroll it.  At the load event, and again 300 ms after any
  // change to the article (this file's own fixes below are such changes), it
  // measured every one of them on the page: each measurement of one in a
  // section the browser had skipped (content-visibility, book_fixes.css) laid
  // that section out, so the page was laid out whole, twice: most of the time
  // to open a long page (state_of_the_art, the errata).  The theme's search
  // for them (its selector, exactly) now finds none; book_fixes gives each the
  // same tab stop as it comes near the window (tabStops, below), and again
  // after a resize.
  const SCROLLERS = ["pre", ".nboutput > .output_area", ".cell_output > .output",
                     ".jp-RenderedHTMLCommon", ".pst-scrollable-table-container"].join(", ");
  const querySelectorAll = Document.prototype.querySelectorAll;
  Document.prototype.querySelectorAll = function (selectors) {
    if (this === document && selectors === SCROLLERS) return querySelectorAll.call(this, ":not(*)");
    return querySelectorAll.apply(this, arguments);
  };
  function scrollers() { return Array.from(querySelectorAll.call(document, SCROLLERS)); }
  function tabStops(elements) {
    const scrolls = elements.map(function (e) {  // reads, then writes
      return e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight;
    });
    elements.forEach(function (e, i) {
      const index = scrolls[i] ? "0" : "-1";
      if (e.getAttribute("tabindex") !== index) e.setAttribute("tabindex", index);
    });
  }
  function block(el) {
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).display !== "inline") return a;
    }
    return null;
  }
  // Issue 33 item 10: all reads first, then all writes (a read after a write
  // makes the browser lay the page out again), and only for the formulas that
  // come near the window (the IntersectionObserver below): with the page's
  // sections laid out lazily (content-visibility, book_fixes.css), measuring
  // every formula of a long page at load (the errata: 848) laid out all of it.
  function fit(inline) {
    const wide = new Set();
    for (const m of inline) {
      const box = block(m);
      if (!box) continue;
      const avail = box.clientWidth;
      // a formula already marked scrolls in its own box: its content's width
      const width = m.classList.contains("egm-wide-inline") ? m.scrollWidth : m.getBoundingClientRect().width;
      if (avail > 0 && width > avail + 1) wide.add(m);
    }
    for (const m of inline) {
      if (m.classList.contains("egm-wide-inline") !== wide.has(m)) m.classList.toggle("egm-wide-inline");
    }
  }
  // The scroll cue (book_fixes.css) hides its shadows under two covers of the
  // colour the formula stands on, --egm-cover.  Inside a coloured box (a
  // lemma's green, a definition's blue: translucent tints over the page) a
  // white cover showed as white patches at both ends of the formula (seen at
  // 390 px, issue 26 item 9): each formula's cover is the opaque colour of
  // the boxes behind it, their backgrounds composited from the page up.
  function rgba(text) {
    const m = /rgba?\(([^)]*)\)/.exec(text || "");
    if (!m) return null;
    const v = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return v.length >= 3 ? [v[0], v[1], v[2], v.length > 3 ? v[3] : 1] : null;
  }
  function behind(el) {
    const layers = [];
    for (let a = el.parentElement; a; a = a.parentElement) {
      const c = rgba(getComputedStyle(a).backgroundColor);
      if (c && c[3] > 0) {
        layers.push(c);
        if (c[3] >= 1) break;
      }
    }
    let acc = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) {
      const c = layers[i];
      acc = acc.map((x, k) => c[k] * c[3] + x * (1 - c[3]));
    }
    return "rgb(" + acc.map(Math.round).join(", ") + ")";
  }
  function cover(math) {
    const shown = math.filter(function (m) {
      return m.getAttribute("display") === "true" || m.classList.contains("egm-wide-inline");
    });
    const colours = shown.map(behind);  // reads, then writes
    shown.forEach(function (m, i) {
      if (m.style.getPropertyValue("--egm-cover") !== colours[i]) m.style.setProperty("--egm-cover", colours[i]);
    });
  }
  // A formula followed by punctuation ("... + δ: (ε, δ)-DP", "(10), so")
  // is glued to it: the browser may break the line after MathJax's box, and
  // on a phone a line then began with the colon or comma (the errata at
  // 390 px, issue 26 item 9).  A formula too wide for its line is unglued
  // again by fit(), so that it can scroll in its own box.  Only the formula's
  // last piece is glued (a long formula comes in pieces, with a place to break
  // after each relation: _ext/mathjax_prerender.py): the punctuation moves into
  // Sphinx's <span class="math"> beside it, so that the other places to break
  // stay (a whole formula that did not break ran past the column, issue 33 item 1).
  const PUNCT = /^[.,;:!?)\]\u2019\u201d]+/;
  function glue() {
    for (const mjx of document.querySelectorAll('mjx-container:not([display="true"])')) {
      // Sphinx's <span class="math">, in which MathJax put the formula, if any
      const up = mjx.parentElement;
      const m = up && up.matches("span.math") && up.lastChild === mjx ? up : mjx;
      const next = m.nextSibling;
      if (!next || next.nodeType !== Node.TEXT_NODE) continue;
      const hit = PUNCT.exec(next.data);
      if (!hit || (up && up.classList.contains("egm-nobr"))) continue;
      const span = document.createElement("span");
      span.className = "egm-nobr";
      span.style.whiteSpace = "nowrap";
      mjx.parentNode.insertBefore(span, mjx);
      span.appendChild(mjx);
      next.data = next.data.slice(hit[0].length);
      span.appendChild(document.createTextNode(hit[0]));
    }
  }
  function unglueWide(inline) {
    for (const m of inline) {
      const span = m.parentElement;
      if (span && span.matches("span.egm-nobr")) {
        span.style.whiteSpace = m.classList.contains("egm-wide-inline") ? "normal" : "nowrap";
      }
    }
  }
  // The formulas near the window (or all of them: egmBookFixes.all(), which
  // the browser check calls before it measures the whole page).
  function fix(math) {
    const inline = math.filter(function (m) { return m.getAttribute("display") !== "true"; });
    fit(inline);
    unglueWide(inline);
    cover(math);
  }
  function formulas() { return Array.from(document.querySelectorAll("mjx-container")); }
  const near = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    const math = [], boxes = [];
    for (const e of entries) {
      if (e.isIntersecting) {
        near.unobserve(e.target);
        (e.target.tagName === "MJX-CONTAINER" ? math : boxes).push(e.target);
      }
    }
    if (math.length) fix(math);
    if (boxes.length) tabStops(boxes);
    if (math.length) place();  // an anchor's target stays where it was put (below)
  }, {rootMargin: "100% 0px"}) : null;
  function watch() {
    if (near) {
      for (const m of formulas()) near.observe(m);
      for (const b of scrollers()) near.observe(b);
    } else {
      fix(formulas());
      tabStops(scrollers());
    }
  }
  window.egmBookFixes = {all: function () { fix(formulas()); tabStops(scrollers()); }};
  // sphinx-exercise writes "Solution to<a> Exercise 6.1</a>": the space is
  // inside the link, so its underline began with a blank.  It moves out.
  function solutionTitles() {
    for (const a of document.querySelectorAll(".solution p.admonition-title > a")) {
      const first = a.firstChild;
      if (first && first.nodeType === Node.TEXT_NODE && /^\s/.test(first.data)) {
        first.data = first.data.replace(/^\s+/, "");
        a.parentNode.insertBefore(document.createTextNode(" "), a);
      }
    }
  }
  // A long dotted name in inline code (egmlib.mechanisms.gaussian_data_mechanism)
  // may break after a dot (book_fixes.css lets it break anywhere, which on a
  // phone cut "gaussian_dat|a_mechanism" mid-word).  Copying gets the name whole.
  function dottedNames() {
    for (const s of document.querySelectorAll("code.literal span.pre")) {
      const t = s.firstChild;
      if (s.childNodes.length !== 1 || t.nodeType !== Node.TEXT_NODE || t.data.length < 16) continue;
      const parts = t.data.split(/(?<=\.)(?=[A-Za-z_])/);
      if (parts.length < 2) continue;
      s.textContent = "";
      parts.forEach(function (part, i) {
        if (i) s.appendChild(document.createElement("wbr"));
        s.appendChild(document.createTextNode(part));
      });
    }
  }
  function ready() { solutionTitles(); dottedNames(); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
  // The book's maths is typeset at build time (_ext/mathjax_prerender.py): at
  // the load event the formulas are in the page.  A page that still runs
  // MathJax in the browser (an older build, the tests' stubs) waits for it.
  function whenTypeset() {
    const mj = window.MathJax;
    const typeset = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    typeset.then(glue).then(watch);
  }
  window.addEventListener("load", whenTypeset);

  // Issue 33: a link to an anchor far down a page (chapters/derivation.html
  // #deriv-thm-minors) landed in the wrong place.  The sections laid out
  // lazily (content-visibility, book_fixes.css) stand in with an estimated
  // height, also a section that holds the target (1,000 px, less than its
  // height): the target lay below the end of the page as estimated, the
  // browser scrolled as far as it could, and once it laid the sections out
  // the target was 1,900 px further down.  On load with a hash, on hashchange
  // and on a click on a link within the page, the boxes that hold the target
  // and the next two are laid out for good (class egm-shown), and the page is
  // scrolled to the target again once the page is loaded, its fonts are in
  // and the formulas near the window have been fixed (to the theme's place
  // for a target: the page's scroll-padding-top, below the sticky header),
  // until the reader scrolls.  The sections above stay lazy: as the reader
  // scrolls up to them, the browser keeps what is on the screen in place
  // (scroll anchoring).  Laying out everything above the target as well cost
  // a deep link into state_of_the_art about 1.5 s more CPU (390 px), for the
  // same place.
  const LAZY = ".bd-article section section, .bd-article div.egm-lazy";
  function targetOf(hash) {
    if (!hash || hash.length < 2) return null;
    let id = hash.slice(1);
    try { id = decodeURIComponent(id); } catch (e) { /* keep it as written */ }
    return document.getElementById(id);
  }
  function reveal(target) {
    let after = 0;
    for (const box of document.querySelectorAll(LAZY)) {
      const where = box.compareDocumentPosition(target);
      // the boxes holding the target, and the next two after it
      if (where & Node.DOCUMENT_POSITION_CONTAINED_BY || (where & Node.DOCUMENT_POSITION_PRECEDING && after < 2 && ++after)) {
        box.classList.add("egm-shown");
      }
    }
  }
  let pending = null;  // the target kept in place until the reader scrolls
  let expiry = null;
  function place() {
    if (pending && pending.isConnected) pending.scrollIntoView({block: "start", behavior: "instant"});
  }
  function release(ms) {  // keep the target in place for ms more, then let go
    clearTimeout(expiry);
    expiry = setTimeout(function () { pending = null; }, ms);
  }
  function goTo(target) {
    if (!target) return;
    pending = target;
    reveal(target);
    place();
    if (document.readyState === "complete") {
      requestAnimationFrame(function () { requestAnimationFrame(place); });
      release(1500);
    }
  }
  for (const kind of ["wheel", "touchstart", "keydown", "mousedown"]) {
    window.addEventListener(kind, function () { pending = null; }, {passive: true, capture: true});
  }
  function atHash() { goTo(targetOf(window.location.hash)); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", atHash);
  } else {
    atHash();
  }
  window.addEventListener("load", function () {
    if (!pending) return;
    place();
    const mj = window.MathJax;
    const typeset = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    typeset.then(function () { return document.fonts.ready; }).then(function () {
      requestAnimationFrame(function () { requestAnimationFrame(place); });
      // the formulas near the target, fixed by the IntersectionObserver above
      setTimeout(place, 300);
      release(1500);
    });
  });
  window.addEventListener("hashchange", atHash);
  // a click on a link to a place on this page: the boxes that hold the target
  // are laid out before the browser scrolls to it (and again after, hashchange;
  // a link to the hash already in the address changes nothing: this places it)
  document.addEventListener("click", function (event) {
    const a = event.target.closest && event.target.closest("a[href*='#']");
    if (!a || event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const url = new URL(a.href, window.location.href);
    if (url.origin + url.pathname !== window.location.origin + window.location.pathname) return;
    const target = targetOf(url.hash);
    if (!target) return;
    reveal(target);
    if (url.hash === window.location.hash) {
      event.preventDefault();
      goTo(target);
    }
  }, true);
  // after a resize, each formula is measured again when it comes near the window
  let timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(watch, 150);
  });
  // the reader's light/dark switch changes the colours behind the formulas
  new MutationObserver(watch).observe(document.documentElement,
    {attributes: true, attributeFilter: ["data-theme"]});
})();
