"""What of a student's own Markdown and outputs a handed-back page keeps: the document, never the page.

nbconvert's own sanitiser keeps too little to show a notebook (no headings, no
paragraphs, no lists), and escapes the rest, so every Markdown cell turned into
literal ``<h1>`` text. This allow-list keeps what Markdown and ordinary outputs
produce (headings, paragraphs, lists, tables, code highlighted by Pygments,
links, embedded images) and removes everything that could act on the page: no
``<script>``, ``<style>``, ``<svg>``, ``<iframe>`` or form, no ``style`` or event
attribute, no ``javascript:`` (or any but a web, mail or in-page) link, no image
but an embedded ``data:`` one (so nothing is fetched), and no class or id of
micrograde's own, so a student's cell cannot dress up as a feedback cell or
fake a score.
"""

from __future__ import annotations

import re

import bleach

OWN = "micrograde"
TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "samp", "span", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "var",
})
_LINK = re.compile(r"^(https?:|mailto:|#)", re.I)
_EMBEDDED_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,", re.I)
_CODE_OF_THE_PAGE = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_IMAGE_WITHOUT_SOURCE = re.compile(r"<img(?![^>]*\ssrc=)[^>]*>")


def _allowed(tag: str, name: str, value: str) -> bool:
    if name in ("class", "id"):
        return not any(token.lower().startswith(OWN) for token in value.split())
    if name in ("title", "alt") or (name == "align" and tag in ("td", "th")):
        return True
    if name == "href" and tag == "a":
        return bool(_LINK.match(value.strip()))
    if name == "src" and tag == "img":
        return bool(_EMBEDDED_IMAGE.match(value.strip()))
    return False


def clean_html(element: str | bytes) -> str:
    """``element`` (a student's rendered Markdown, an output's HTML) with only inert document markup left;
    a tag that is not allowed is removed and its text kept as text, but a script's or a style sheet's
    code is dropped with it, and so is an image whose source was not allowed (it would show as broken)."""
    text = element.decode() if isinstance(element, bytes) else str(element)
    text = _CODE_OF_THE_PAGE.sub("", text)
    cleaned = bleach.clean(text, tags=TAGS, attributes=_allowed, protocols=["http", "https", "mailto", "data"],
                           strip=True, strip_comments=True)
    return _IMAGE_WITHOUT_SOURCE.sub("", cleaned)
