"""A headless Chromium driven over the DevTools protocol, for the documentation site's tests.

One browser for a whole test module: it opens each page, waits until MathJax has typeset it and
its images have loaded, and reads what a reader would see (:data:`PAGE_STATS`). No driver
package: Chromium's ``--remote-debugging-pipe`` takes JSON commands on file descriptor 3 and
answers on 4 (messages end with a NUL byte).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
]

#: Evaluated in each page once it has loaded: what it shows, counted.
PAGE_STATS = r"""
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  await Promise.all([...document.images].map(i => i.complete ? null :
    new Promise(r => { i.addEventListener("load", r); i.addEventListener("error", r); })));
  const main = document.querySelector("article.md-content__inner") || document.body;
  const skip = new Set(["PRE", "CODE", "SCRIPT", "STYLE", "TEXTAREA", "MJX-CONTAINER", "MJX-ASSISTIVE-MML"]);
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const raw = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    let inside = false;
    for (let e = node.parentElement; e; e = e.parentElement) { if (skip.has(e.tagName)) { inside = true; break; } }
    if (inside) continue;
    const t = node.textContent;
    if (/\\\(|\\\)|\\\[|\\\]|\$\$|\$\\[a-zA-Z]|\\(frac|sum|alpha|tilde|text|mathrm|lceil|rceil)\b/.test(t)) {
      raw.push(t.trim().slice(0, 120));
    }
  }
  const imgs = [...main.querySelectorAll("img")];
  const header = document.querySelector(".md-header");
  return {
    title: document.title,
    equations: main.querySelectorAll("mjx-container").length,
    formulas: main.querySelectorAll(".arithmatex").length,
    math_errors: main.querySelectorAll('mjx-merror, [data-mml-node="merror"]').length
      + (main.innerText.includes("Math input error") ? 1 : 0),
    raw_tex: raw.slice(0, 5),
    images: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    broken_images: imgs.filter(i => !(i.complete && i.naturalWidth > 0))
      .map(i => (i.getAttribute("src") || "").slice(0, 80)),
    code_scrolling: [...main.querySelectorAll("pre, pre > code")].filter(p => p.scrollWidth > p.clientWidth + 1).length,
    page_scrolls_sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
    // a block that reaches past the content's right edge where no box of its own scrolls it
    // (cut off for the reader), and text cut off by a box that hides what overflows
    out_of_box: (() => {
      // the article's box (on a phone the theme lets code blocks reach into the article's margin)
      const box = document.querySelector(".md-content") || main;
      const edge = Math.min(box.getBoundingClientRect().right, window.innerWidth) + 1;
      const scrolls = e => { for (let a = e.parentElement; a && a !== main; a = a.parentElement) {
        const o = getComputedStyle(a).overflowX; if (o === "auto" || o === "scroll") return true; } return false; };
      return [...main.querySelectorAll("pre, table, img, svg, .jp-OutputArea-output, .arithmatex, p, li")]
        .filter(e => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().right > edge && !scrolls(e))
        .map(e => `${e.tagName.toLowerCase()}: ${(e.innerText || e.getAttribute("src") || "").trim().slice(0, 60)}`)
        .slice(0, 10);
    })(),
    clipped_text: [...main.querySelectorAll("*")].filter(e => {
        const o = getComputedStyle(e).overflowX;
        return (o === "hidden" || o === "clip") && e.scrollWidth > e.clientWidth + 1 && e.innerText.trim()
          && !e.closest("mjx-container") && !e.closest(".md-clipboard");
      }).map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.innerText.trim().slice(0, 60)}`).slice(0, 10),
    // each picture's shown width against its drawn width (a label of f pt drawn at d dpi shows
    // at f * scale * d / 72 CSS px)
    image_scales: imgs.filter(i => i.complete && i.naturalWidth > 0)
      .map(i => [(i.getAttribute("src") || "").slice(-80), i.getBoundingClientRect().width / i.naturalWidth]),
    // each picture's drawn (natural) and shown width, CSS px, and the width of the column it sits
    // in (a notebook's output area, a card, the article): optsched.plot.style's label check
    // assumes a picture is shown at its natural width or at its column's, never narrower
    image_widths: imgs.filter(i => i.complete && i.naturalWidth > 0)
      .map(i => [(i.getAttribute("src") || "").slice(-80), i.naturalWidth, i.getBoundingClientRect().width,
                 (i.closest(".jp-OutputArea-output") || main).getBoundingClientRect().width]),
    content_width: main.getBoundingClientRect().width,
    notebook_cells: main.querySelectorAll(".jp-Cell").length,
    notebook_outputs: main.querySelectorAll(".jp-OutputArea-output").length,
    styled: !!header && getComputedStyle(header).position === "sticky",
    text: main.innerText.slice(0, 20000),
  };
})()
"""


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page (tab), driven over a pipe."""

    #: The widths the site is checked at: a laptop's browser window and a phone (CSS px).
    WIDTHS = (1280, 390)

    def __init__(self, exe: str, profile: Path, *, width: int = 1280, height: int = 1600, timeout: float = 60):
        self.timeout = timeout
        cmd_r, self._cmd_w = os.pipe()  # Chromium reads our commands on its fd 3
        self._res_r, res_w = os.pipe()  # and writes its answers on its fd 4

        def fds() -> None:  # in the child, before exec: the two pipe ends become fds 3 and 4
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4 first
            b = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(  # close_fds=False: fds 3 and 4 must reach Chromium (Python's
            # own descriptors are not inheritable, so nothing else leaks)
            [exe, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds,
            close_fds=False,
        )
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._next = 0
        self._events: list[dict] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable", session=self.session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            session=self.session,
        )

    # -- the protocol -----------------------------------------------------------------------------
    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._res_r], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._res_r, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed its pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, *, session: str | None = None) -> dict:
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _wait_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, ev in enumerate(self._events):
                if ev.get("method") == method and ev.get("sessionId") == self.session:
                    return self._events.pop(i)
            self._events.append(self._read(deadline))

    # -- pages --------------------------------------------------------------------------------------
    def open(self, url: str) -> dict:
        """Load ``url``; the protocol's answer (``errorText`` when it could not be loaded)."""
        self._events.clear()
        nav = self.send("Page.navigate", {"url": url}, session=self.session)
        if nav.get("errorText"):
            return nav
        self._wait_event("Page.loadEventFired")
        return nav

    def evaluate(self, expression: str):
        out = self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session=self.session,
        )
        if "exceptionDetails" in out:
            raise BrowserError(f"script failed: {out['exceptionDetails'].get('text')}")
        return out["result"].get("value")

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png"}, session=self.session)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(BrowserError):
            self.send("Browser.close")
        os.close(self._cmd_w)
        os.close(self._res_r)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
