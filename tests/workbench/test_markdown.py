"""Guidelines are written in Markdown by organizers and shown to assessors: formatting survives, scripts do not."""

from workbench.templatetags.workbench_text import markdown


def test_markdown_keeps_formatting():
    html = markdown("# Rules\n\n* judge the **topic**, not the query\n* see [TREC](https://trec.nist.gov)")
    assert "<h1>Rules</h1>" in html
    assert "<strong>topic</strong>" in html
    assert '<a href="https://trec.nist.gov"' in html


def test_markdown_drops_scripts_and_handlers():
    html = markdown('<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n[x](javascript:alert(3))')
    assert "<script" not in html and "onerror" not in html and "javascript:" not in html
    assert "<img" not in html


def test_markdown_of_nothing_is_empty():
    assert markdown("") == ""
