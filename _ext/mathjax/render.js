// MathJax 3 (mathjax-full, pinned in package-lock.json) typesetting TeX into
// CHTML at build time, for _ext/mathjax_prerender.py: one process for the whole
// build, one JSON request a line on stdin, one JSON answer a line on stdout.
//   {"op": "init", "macros": {...}, "scale": 1.2}  -> {"ok": true}
//   {"op": "tex", "tex": "x^2", "display": b} -> {"html": "<mjx-container ...>"} or {"error": "..."}
//   {"op": "css", "fontURL": "woff-v2"}       -> {"css": "..."}  (every character of the
//                                               TeX fonts: one stylesheet for every page)
// A TeX error is an answer, not a red formula: the build reports it.
"use strict";
const readline = require("readline");
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {CHTML} = require("mathjax-full/js/output/chtml.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");
const {AllPackages} = require("mathjax-full/js/input/tex/AllPackages.js");

const adaptor = liteAdaptor();
// the hidden MathML beside each formula, for screen readers (as MathJax's page script did)
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
// no "noerrors"/"noundefined": a misspelt macro is an error of the build, not red text
const PACKAGES = AllPackages.filter((p) => !["noerrors", "noundefined"].includes(p));

let doc = null;
let output = null;
let scale = 1;

function init(macros, size) {
  scale = size || 1;
  const tex = new TeX({
    packages: PACKAGES,
    macros: macros || {},
    formatError: (jax, error) => { throw error; },
  });
  output = new CHTML({fontURL: "woff-v2", adaptiveCSS: false});
  doc = mathjax.document("", {InputJax: tex, OutputJax: output});
}

function answer(request) {
  switch (request.op) {
    case "init":
      init(request.macros, request.scale);
      return {ok: true};
    case "tex": {
      try {
        // em, ex and the container's width as MathJax's page script measures them
        // for the theme's 16 px text (a width only matters for percentages); the
        // scale is the formula's font size against the text's
        const node = doc.convert(request.tex, {display: !!request.display, em: 16, ex: 8,
                                               containerWidth: 80 * 16, scale: scale});
        return {html: adaptor.outerHTML(node)};
      } catch (error) {
        return {error: String(error && error.message ? error.message : error)};
      }
    }
    case "css": {
      if (request.fontURL) output.options.fontURL = request.fontURL;
      return {css: adaptor.textContent(output.styleSheet(doc))};
    }
    default:
      return {error: "unknown op " + request.op};
  }
}

readline.createInterface({input: process.stdin, terminal: false}).on("line", (line) => {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = {error: String(error && error.message ? error.message : error)};
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
