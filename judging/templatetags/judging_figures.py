"""Judging's figures for pages of the apps below it (the console is workbench's page): the template loads
this library, so that workbench never imports judging (layers point down)."""

from __future__ import annotations

from django import template

from judging import selectors

register = template.Library()


@register.inclusion_tag("judging/_without_text.html")
def pooled_without_text(collection) -> dict:
    """Per pool: its pooled documents and how many have no text, with what assessors can do about them."""
    rows = selectors.pooled_without_text(collection)
    return {"collection": collection, "rows": rows, "any_missing": any(r["without_text"] for r in rows)}
