/* Issue 26: MathJax 3 does not break inline math, so on a phone a long inline
   formula (the errata's) ran past the column and was cut.  Once MathJax has
   typeset the page, and again after a resize, every inline formula wider than
   the block it stands in gets the class egm-wide-inline, which lets it scroll
   sideways with the same shadow cue as display equations (book_fixes.css).
   Formulas that fit keep their normal inline layout (and baseline). */
(function () {
  "use strict";
  function block(el) {
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).display !== "inline") return a;
    }
    return null;
  }
  function fit() {
    const inline = document.querySelectorAll('mjx-container:not([display="true"])');
    for (const m of inline) m.classList.remove("egm-wide-inline");
    for (const m of inline) {
      const box = block(m);
      if (!box) continue;
      const avail = box.clientWidth;
      if (avail > 0 && m.getBoundingClientRect().width > avail + 1) {
        m.classList.add("egm-wide-inline");
      }
    }
  }
  let tries = 0;
  function whenTypeset() {
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(fit);
    } else if (tries++ < 100) {
      setTimeout(whenTypeset, 100);
    }
  }
  window.addEventListener("load", whenTypeset);
  let timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(fit, 150);
  });
})();
