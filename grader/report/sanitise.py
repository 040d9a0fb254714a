"""The one allow-list a handed-back page's markup passes through: the document is kept, never the page.

nbconvert renders a notebook for a browser; every part of it a submission wrote
(Markdown and raw cells, outputs of every type, their metadata, attachments,
cell ids and tags) ends up as markup, some of it written unquoted by nbconvert's
templates (an image's ``width`` of ``1 onerror=...``). So the page's whole body
goes through this allow-list (``grader.report.page``), parsed as a browser
parses it (``nh3``, the binding of Rust's ``ammonia``, on ``html5ever``), and
each fragment the templates put in goes through it too, so that one output's
unclosed tags cannot wrap the cells after it.

It keeps what Markdown, highlighted code and ordinary outputs produce
(headings, paragraphs, lists, tables, code, links, embedded images) and removes
everything that could act on the page or pass for micrograde: no ``<script>``,
``<style>``, ``<svg>``, ``<iframe>``, ``<base>``, ``<meta>`` or form, no
``style`` or event attribute, no link but a web, mail or in-page one, no image
but an embedded ``data:`` one (so nothing is fetched), and no class or id of
micrograde's own, so a student's cell can neither dress up as a feedback cell
nor take a feedback cell's anchor. ``bleach``, its predecessor here, is no
longer developed; ``ammonia`` is, and is much faster.
"""

from __future__ import annotations

import re

import nh3

from grader.report.identifiers import OWN

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div", "dl",
    "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
})
# Tags whose content goes with them: code or markup that would only show as noise.
DROPPED_WITH_CONTENT = frozenset({"script", "style", "template", "title", "textarea", "noscript", "iframe", "object",
                                  "embed", "svg", "math", "select"})
ATTRIBUTES = {"*": {"class", "id", "title"}, "a": {"href"}, "img": {"src", "alt", "width", "height"},
              "td": {"align", "colspan", "rowspan"}, "th": {"align", "colspan", "rowspan"}, "ol": {"start"},
              "details": {"open"}}
_LINK = re.compile(r"(https?:|mailto:|#)", re.I)
_EMBEDDED_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*", re.I)
_NUMBER = re.compile(r"[0-9]{1,6}")
# An image as the sanitiser writes it (every value double-quoted, quotes inside escaped), and its attributes.
_IMAGE = re.compile(r'<img((?: [a-z-]+="[^"]*")*)>')
_ATTRIBUTE_NAME = re.compile(r' ([a-z-]+)="')


def _kept(tag: str, name: str, value: str) -> str | None:
    """The value of attribute ``name`` on ``tag`` to keep, or ``None`` to drop it."""
    if name == "class":
        tokens = [token for token in value.split() if OWN not in token.lower()]
        return " ".join(tokens) or None
    if name == "id":
        return None if OWN in value.lower() else value
    if name == "href":
        return value if _LINK.match(value.strip()) else None
    if name == "src":
        return value if _EMBEDDED_IMAGE.fullmatch(value.strip()) else None
    if name in ("width", "height", "colspan", "rowspan", "start"):
        return value if _NUMBER.fullmatch(value.strip()) else None
    if name == "align":
        return value if value.lower() in ("left", "right", "center") else None
    return value  # title, alt, open, and the rel the sanitiser adds to links: text


_CLEANER = nh3.Cleaner(tags=set(TAGS), clean_content_tags=set(DROPPED_WITH_CONTENT), attributes=ATTRIBUTES,
                       attribute_filter=_kept, url_schemes={"http", "https", "mailto", "data"}, strip_comments=True)


def _without_unsourced_images(text: str) -> str:
    """``text`` without the images whose source was not allowed (they would show as broken)."""
    return _IMAGE.sub(lambda m: m.group(0) if "src" in _ATTRIBUTE_NAME.findall(m.group(1)) else "", text)


def clean_html(markup: str | bytes) -> str:
    """``markup`` (a page's body, or a fragment of it) with only inert document markup left, its tags
    balanced: a tag that is not allowed is removed and its text kept as text, but a script's, a style
    sheet's or an embedded drawing's content goes with it, and so does an image whose source was refused."""
    text = markup.decode("utf-8", "replace") if isinstance(markup, bytes) else str(markup)
    return _without_unsourced_images(_CLEANER.clean(text))
