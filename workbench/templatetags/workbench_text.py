"""Template filters for text organizers write: ``{{ collection.guidelines|markdown }}``."""

from __future__ import annotations

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()

_TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a",
         "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"}


@register.filter
def markdown(text: str) -> str:
    """Markdown to HTML, cleaned of anything but formatting (no scripts, styles, images or event
    handlers: the text is the organizer's, the page is the assessor's)."""
    html = markdown_lib.markdown(text or "", extensions=["tables", "sane_lists"])
    return mark_safe(nh3.clean(html, tags=_TAGS, attributes={"a": {"href", "title"}},  # noqa: S308 - cleaned
                               url_schemes={"http", "https", "mailto"}))
