"""``{% task_sections request.user %}``: the task links every app contributes to a user's home page
(:mod:`workbench.home_sections`), as a list; nothing when there are none."""

from __future__ import annotations

from django import template

from workbench.home_sections import links_for

register = template.Library()


@register.inclusion_tag("workbench/_task_sections.html")
def task_sections(user) -> dict:
    return {"links": links_for(user)}
