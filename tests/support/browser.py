"""A real browser for the tests: headless Chromium driven over the DevTools protocol on a pipe.

One browser start renders a whole set of pages: each is opened in a tab, every
request it makes is recorded (a page must fetch nothing but itself), a script
of the test's own (never one of the page's) measures what is on screen, and a
full-page screenshot is kept as a test artefact. Where Chromium is not
installed the tests that need it skip, saying so, except under ``CI=true``,
where a missing browser is a failure (``.ci/run`` installs Debian's
``chromium``).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--proxy-server=127.0.0.1:9", "--hide-scrollbars"]

# What the test reads off a rendered page: text, headings, and the geometry of every graph's nodes and edges.
MEASURE = r"""(() => {
  const box = r => [r.left, r.top, r.right, r.bottom];
  const graphs = [...document.querySelectorAll('svg')].filter(s => s.querySelector('g.node')).map(svg => ({
    box: box(svg.getBoundingClientRect()),
    nodes: [...svg.querySelectorAll('g.node')].map(g => ({
      name: (g.querySelector('title') || {}).textContent, box: box(g.getBoundingClientRect()),
      wrong: /#f+d+|#fdd|red/i.test(g.innerHTML)})),
    edges: [...svg.querySelectorAll('g.edge')].map(g => {
      const path = g.querySelector('path'), m = path.getScreenCTM(), n = path.getTotalLength(), points = [];
      for (let i = 0; i <= n; i += 2) {
        const p = path.getPointAtLength(i);
        points.push([m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]);
      }
      const marker = (path.getAttribute('marker-end') || '').match(/url\(#(.*)\)/);
      return {name: (g.querySelector('title') || {}).textContent, points,
              arrowhead: !!g.querySelector('polygon') || !!(marker && document.getElementById(marker[1]))};
    })}));
  return {text: document.body.innerText, graphs,
          headings: [...document.querySelectorAll('h1,h2,h3,h4')].map(h => [h.tagName, h.innerText]),
          feedback: [...document.querySelectorAll('.micrograde-feedback')].map(e => e.innerText),
          shown: [...document.querySelectorAll('.micrograde-feedback')].map(
            e => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height > 20),
          title: document.title, scripts: document.querySelectorAll('script').length,
          unsourced: [...document.images].filter(i => !i.getAttribute('src')).length,
          styles: document.body.querySelectorAll('style, [style]').length,
          links: [...document.querySelectorAll('[href], [src]')].map(
            e => e.getAttribute('href') || e.getAttribute('src'))};
})()"""


def chromium() -> str:
    """The browser's path; skips the test without one (fails under CI, which installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "no headless browser: install Debian's chromium package (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


class Browser:
    """One headless Chromium, spoken to over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="micrograde-chromium-")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()

        def pipes() -> None:
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.process = subprocess.Popen([chromium(), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                        preexec_fn=pipes, close_fds=False, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []

    def send(self, method: str, session: str | None = None, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _receive(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def wait_for(self, method: str, session: str) -> None:
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
            self.events.append(self._receive())

    def render(self, page: Path, screenshot: Path, width: int = 1200, probe: str | None = None) -> dict:
        """Open ``page``; what ``MEASURE`` reads off it, plus ``fetched``: every URL it requested but itself,
        and ``probe``: what the test's own expression ``probe`` (if any) returns there."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Network.enable", session)
        self.send("Page.enable", session)
        self.send("Emulation.setDeviceMetricsOverride", session, width=width, height=900, deviceScaleFactor=1,
                  mobile=False)
        self.events.clear()
        self.send("Page.navigate", session, url=page.resolve().as_uri())
        self.wait_for("Page.loadEventFired", session)
        seen = self.send("Runtime.evaluate", session, expression=MEASURE, returnByValue=True)["result"]["value"]
        if probe is not None:
            seen["probe"] = self.send("Runtime.evaluate", session, expression=probe,
                                      returnByValue=True)["result"]["value"]
        shot = self.send("Page.captureScreenshot", session, format="png", captureBeyondViewport=True)
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        requested = [e["params"]["request"]["url"] for e in self.events
                     if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session]
        seen["fetched"] = [url for url in requested if url != page.resolve().as_uri()]
        self.send("Target.closeTarget", targetId=target)
        return seen

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)
        shutil.rmtree(self.profile, ignore_errors=True)


def inside(point: list[float], box: list[float], margin: float = 1.0) -> bool:
    x, y = point
    return box[0] + margin < x < box[2] - margin and box[1] + margin < y < box[3] - margin


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def graph_faults(graph: dict) -> list[str]:
    """What is wrong with a drawn graph: nodes overlapping, an edge without an arrowhead or through a node
    it does not join or out of the drawing, the repeated edges of a reused node drawn on top of each other."""
    faults = []
    nodes = {n["name"]: n["box"] for n in graph["nodes"]}
    names = list(nodes)
    for i, a in enumerate(names):
        faults += [f"{a} overlaps {b}" for b in names[i + 1:] if overlap(nodes[a], nodes[b])]
    middles: dict[str, list[list[float]]] = {}
    for edge in graph["edges"]:
        source, target = edge["name"].split("->")
        if not edge["arrowhead"]:
            faults.append(f"{edge['name']} has no arrowhead")
        for name, box in nodes.items():
            if name not in (source, target) and any(inside(p, box) for p in edge["points"]):
                faults.append(f"{edge['name']} runs through {name}")
        if not all(inside(p, graph["box"], -1.0) for p in edge["points"]):
            faults.append(f"{edge['name']} leaves the drawing")
        middles.setdefault(edge["name"], []).append(edge["points"][len(edge["points"]) // 2])
    for name, points in middles.items():
        for i, p in enumerate(points):
            if any(abs(p[0] - q[0]) + abs(p[1] - q[1]) < 2 for q in points[i + 1:]):
                faults.append(f"the edges {name} are drawn on top of each other")
    return faults
