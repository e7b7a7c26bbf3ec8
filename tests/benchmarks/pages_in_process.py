"""Before/after ratios of issue 40's page caches, in one process under one load, on a track kept by
``bench_pages.py --keep DIR`` (Django's test client; the figures in docs/benchmarks.md, "Pages"):

    .venv/bin/python tests/benchmarks/pages_in_process.py DIR

* pool page and participant results: each visit with the cached pool statistics dropped first (what every
  visit cost before) and again with them kept, alternating, medians of 5;
* curves page: a fresh process per drawing (matplotlib's figure, as before, or the plain SVG), its first
  request (cold) and the median of 5 more (warm), alternating, 3 times.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setup(var: Path):
    sys.path.insert(0, str(ROOT))
    os.environ.update({"WORKBENCH_VAR_DIR": str(var), "DEBUG": "0", "SECRET_KEY": "bench-" + "x" * 50,
                       "ALLOWED_HOSTS": "testserver", "DATABASE_URL": f"sqlite:///{var / 'bench.sqlite3'}",
                       "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.test import Client

    def client(who: str) -> Client:
        c = Client()
        c.force_login(User.objects.get(username=who))
        return c

    return client


def _timed(c, url: str) -> float:
    start = time.perf_counter()
    assert c.get(url).status_code == 200, url
    return time.perf_counter() - start


def pool_statistics(var: Path) -> None:
    client = _setup(var)
    from evaluation import cache

    for label, url, who in (("pool page", "/collections/bench/pool/", "bench-organizer"),
                            ("participant results", "/participate/bench/results/", "bench-participant")):
        c = client(who)
        _timed(c, url)
        before, after = [], []
        for _ in range(5):
            cache.cache.drop(lambda k: isinstance(k, tuple) and "pool statistics" in k)
            before.append(_timed(c, url))
            after.append(_timed(c, url))
        b, a = statistics.median(before), statistics.median(after)
        print(f"| {label} | {b * 1000:,.0f} ms | {a * 1000:,.0f} ms | {b / a:.1f}× |", flush=True)


def curves_once(var: Path, drawing: str, query: str) -> None:
    client = _setup(var)
    from evaluation import plots

    if drawing == "matplotlib":
        plots.curve_plot = lambda curves, kind, suffix="": plots._svg(plots.curve_figure(curves, kind, suffix))
    c = client("bench-organizer")
    url = "/collections/bench/curves/" + query
    cold = _timed(c, url)
    warm = statistics.median(_timed(c, url) for _ in range(5))
    print(f"{cold} {warm}")


def curves(var: Path) -> None:
    for label, query in (("mean 11-point curves", ""), ("one topic, not interpolated", "?kind=pr&topic=1")):
        found: dict[str, list[tuple[float, float]]] = {"matplotlib": [], "svg": []}
        for _ in range(3):
            for drawing in found:
                out = subprocess.run([sys.executable, __file__, str(var.parent), "--curves", drawing, query],
                                     capture_output=True, text=True, check=True).stdout.split()
                found[drawing].append((float(out[-2]), float(out[-1])))
        m = {d: [statistics.median(v[i] for v in runs) * 1000 for i in (0, 1)] for d, runs in found.items()}
        print(f"| {label} | {m['matplotlib'][0]:,.0f} ms | {m['svg'][0]:,.0f} ms | {m['matplotlib'][1]:,.0f} ms | "
              f"{m['svg'][1]:,.0f} ms | {m['matplotlib'][1] / m['svg'][1]:.0f}× |", flush=True)


if __name__ == "__main__":
    var = Path(sys.argv[1]) / "var"
    if len(sys.argv) > 2 and sys.argv[2] == "--curves":
        curves_once(var, sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    else:
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
        pool_statistics(var)
        curves(var)
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
