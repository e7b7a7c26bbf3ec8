"""The results pages' charts as plain SVG: every value a mark where the axis says, named with its values, the
names escaped, every mark inside the picture, and a title, a description and axis labels to read it by."""

from __future__ import annotations

import re
from html import unescape

import pandas as pd

from evaluation.svg_charts import depth_svg, participant_svg

HOSTILE = ["<script>alert(1)</script>", "a&b", "\"quoted'", "日本語のトピック", "301"]
REPORT = pd.DataFrame({"qid": HOSTILE, "score": [0.5, 0.0, 1.0, 0.25, 0.75],
                       "best": [0.9, 0.4, 1.0, 0.5, 0.75], "median": [0.4, 0.2, 0.5, 0.3, 0.6],
                       "worst": [0.0, 0.0, 0.1, 0.0, 0.2], "best_run": ["x", "y<z>", "me", "x", "me"],
                       "has_results": [True, False, True, True, True]})


def _view_box(svg: str) -> tuple[float, float]:
    width, height = re.search(r'viewBox="0 0 (\S+) (\S+)"', svg).groups()
    return float(width), float(height)


def _numbers(svg: str, attribute: str) -> list[float]:
    return [float(v) for v in re.findall(rf' {attribute}="(-?[\d.]+)"', svg)]


def test_each_topic_is_a_row_with_the_runs_score_against_all_runs_named_and_escaped():
    svg = participant_svg(REPORT, "my<run>&\"tag\"", "ndcg_cut.10")
    assert svg.startswith("<svg") and svg.endswith("</svg>") and 'role="img"' in svg
    assert "<script>" not in svg and "<run>" not in svg and "y&lt;z" not in svg  # no other run named
    assert "my&lt;run&gt;&amp;&quot;tag&quot;: ndcg_cut.10 per topic against all runs" in svg  # title, heading
    assert "Above the median on 3 of 5 topics; best on 2." in unescape(re.search(r"<desc>(.*)</desc>", svg)[1])
    titles = [unescape(t) for t in re.findall(r'<g class="topic"><title>([^<]*)</title>', svg)]
    assert titles == ["topic <script>alert(1)</script>: this run 0.5, best 0.9, median 0.4, worst 0",
                      "topic a&b: this run 0 (no results for this topic), best 0.4, median 0.2, worst 0",
                      "topic \"quoted': this run 1, best 1, median 0.5, worst 0.1",
                      "topic 日本語のトピック: this run 0.25, best 0.5, median 0.3, worst 0",
                      "topic 301: this run 0.75, best 0.75, median 0.6, worst 0.2"]
    labels = [unescape(t) for t in re.findall(r'<text class="topic-id"[^>]*>([^<]*)</text>', svg)]
    assert labels == ["<script>alert(1…", "a&b", "\"quoted'", "日本語のトピック", "301"]  # cut at 16, whole above
    # the dots where the axis puts them: 0 and 1 at the frame's tick marks, the others in proportion
    dots = [float(x) for x in re.findall(r'<circle class="score" cx="([\d.]+)"', svg)]
    zero, one = dots[1], dots[2]
    assert [round((x - zero) / (one - zero), 3) for x in dots] == [0.5, 0.0, 1.0, 0.25, 0.75]
    assert re.findall(r'<circle class="score"[^>]* fill="([^"]+)"', svg)[1] == "#fff"  # no results: hollow
    assert svg.count('<rect class="range"') == 5 and svg.count('<line class="median"') == 5
    assert ">ndcg_cut.10</text>" in svg and "worst to best of all runs" in svg  # axis label, legend


def test_every_mark_and_label_is_inside_the_picture_which_scales_to_the_page():
    many = pd.concat([REPORT] * 12, ignore_index=True).assign(qid=lambda f: [f"topic-{i}" for i in range(len(f))])
    for svg in (participant_svg(REPORT, "t" * 200, "map"), participant_svg(many, "run", "map"),
                depth_svg(pd.DataFrame({"depth": [1, 5, 10, 20, 50, 100], "pool_size": [9, 40, 77, 140, 320, 610],
                                        "relevant": [3, 10, 14, 20, 25, 27]}))):
        width, height = _view_box(svg)
        assert 'width="100%"' in svg and width <= 400  # at 390 px the text is drawn at about its own size
        assert all(0 <= x <= width for a in ("x", "x1", "x2", "cx") for x in _numbers(svg, a))
        assert all(0 <= y <= height for a in ("y", "y1", "y2", "cy") for y in _numbers(svg, a))
        for text in re.findall(r'<text class="(?:title|topic-id|legend)"[^>]*>([^<]*)</text>', svg):
            assert len(unescape(text)) <= 70  # a 200-character run tag is cut ("t…")
    assert svg.count("<title>") == 1 + 6 and "<desc>" in svg


def test_scores_above_one_get_an_axis_of_their_own():
    counts = REPORT.assign(score=[12, 0, 30, 7, 3], best=[37, 4, 30, 9, 8], median=[10, 2, 5, 3, 3],
                           worst=[0, 0, 1, 0, 2])
    svg = participant_svg(counts, "run", "num_rel_ret")
    ticks = [t for t in re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg)]
    assert "40" in ticks and "1" not in ticks
    dots = [float(x) for x in re.findall(r'<circle class="score" cx="([\d.]+)"', svg)]
    assert dots.index(max(dots)) == 2 and dots.index(min(dots)) == 1


def test_the_depth_chart_has_a_point_per_depth_named_with_its_counts():
    by_depth = pd.DataFrame({"depth": [1, 5, 10, 20, 50, 100], "pool_size": [9, 40, 77, 140, 320, 610],
                             "relevant": [3, 10, 14, 20, 25, 27]})
    svg = depth_svg(by_depth)
    assert re.findall(r'<g class="depth"><title>([^<]*)</title>', svg) == [
        f"depth {d}: {p} pooled documents, {r} relevant" for d, p, r in by_depth.itertuples(index=False)]
    assert "pool depth k (logarithmic)" in svg and ">documents</text>" in svg
    assert "at depth 100, 610 pooled documents of which 27 relevant" in svg  # the description
    pooled = [tuple(map(float, p.split(","))) for p in re.search(r'class="pooled" points="([^"]+)"', svg)[1].split()]
    assert [x for x, _ in pooled] == sorted(x for x, _ in pooled)  # left to right by depth
    assert [y for _, y in pooled] == sorted((y for _, y in pooled), reverse=True)  # more documents: higher
    linear = depth_svg(by_depth.iloc[1:4])  # 5, 10, 20: not worth a logarithmic axis
    assert "logarithmic" not in linear and "pool depth k" in linear
