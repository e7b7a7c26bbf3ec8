from django import template

register = template.Library()


@register.filter
def dict_get(mapping, key):
    """``row|dict_get:name``: a value of a dict by a key held in a variable."""
    return mapping.get(key) if hasattr(mapping, "get") else None
