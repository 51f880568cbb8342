// MathJax 3 (SVG output: no web fonts), served from this site (javascripts/mathjax/, copied from the django-static-mathjax
// wheel at build time: no CDN). Markdown pages: pymdownx.arithmatex (generic) wraps each formula
// in an element of class "arithmatex" with \( \) or \[ \] delimiters. Notebook pages
// (mkdocs-jupyter) keep the notebook's own $ and $$ inside their markdown cells.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    // Only formulas are typeset: the page (md-header, md-container) is ignored except the elements
    // of processHtmlClass and their descendants (an ignore pattern matching every class, as
    // ".*|", would also ignore the paragraphs inside a notebook's markdown cell).
    ignoreHtmlClass: "md-header|md-container",
    processHtmlClass: "arithmatex|jp-RenderedMarkdown",
  },
  svg: { fontCache: "global" },
  loader: { load: [] },
};

// Material's instant navigation swaps the page without reloading: typeset each new page.
if (typeof document$ !== "undefined") {
  document$.subscribe(() => {
    if (window.MathJax && MathJax.startup && MathJax.startup.output && MathJax.typesetPromise) {
      if (MathJax.startup.output.clearCache) MathJax.startup.output.clearCache();
      MathJax.typesetClear();
      MathJax.texReset();
      MathJax.typesetPromise();
    }
  });
}
