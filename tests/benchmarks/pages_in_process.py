"""Before/after ratios of issue 40's page caches, in one process under one load, on a track kept by
``bench_pages.py --keep DIR`` (Django's test client; the figures in docs/benchmarks.md, "Pages"):

    .venv/bin/python tests/benchmarks/pages_in_process.py DIR [--pictures]

* pool page and participant results: each visit with the cached pool statistics dropped first (what every
  visit cost before) and again with them kept, alternating, medians of 5;
* curves page, and (``--pictures``) the run page, the topic page and participant results: a fresh process per
  drawing (matplotlib's figures, as before: ``evaluation/plots.py`` of commit ``MATPLOTLIB``, or the plain SVG
  now), its first request (cold) and the median of 5 more (warm), alternating, 3 times.
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


#: the last commit whose pages drew their pictures with matplotlib (its evaluation/plots.py is the "before")
MATPLOTLIB = "4ebfc32"
PICTURES = (("run page", "/collections/bench/runs/run000/", "bench-organizer"),
            ("topic page", "/collections/bench/topics/1/", "bench-organizer"),
            ("participant results (3 runs)", "/participate/bench/results/", "bench-participant"))


def _matplotlib_drawings() -> None:
    """The pages draw as they did at commit MATPLOTLIB: that commit's plots module, its functions put in place."""
    import types

    from evaluation import plots

    source = subprocess.run(["git", "show", f"{MATPLOTLIB}:evaluation/plots.py"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    old = types.ModuleType("plots_with_matplotlib")
    exec(compile(source, "plots_with_matplotlib", "exec"), old.__dict__)  # noqa: S102 - our own file, from git
    plots.participant_plot, plots.depth_plot = old.participant_plot, old.depth_plot
    plots.curve_plot = lambda curves, kind, suffix="": old._svg(old.curve_figure(curves, kind, suffix))


def page_once(var: Path, drawing: str, url: str, who: str) -> None:
    client = _setup(var)
    if drawing == "matplotlib":
        _matplotlib_drawings()
    c = client(who)
    cold = _timed(c, url)
    warm = statistics.median(_timed(c, url) for _ in range(5))
    print(f"{cold} {warm}")


def fresh_processes(var: Path, pages) -> None:
    """Each page in a fresh process per drawing, alternating, 3 times: medians of cold and warm."""
    for label, url, who in pages:
        found: dict[str, list[tuple[float, float]]] = {"matplotlib": [], "svg": []}
        for _ in range(3):
            for drawing in found:
                out = subprocess.run([sys.executable, __file__, str(var.parent), "--page", drawing, url, who],
                                     capture_output=True, text=True, check=True).stdout.split()
                found[drawing].append((float(out[-2]), float(out[-1])))
        m = {d: [statistics.median(v[i] for v in runs) * 1000 for i in (0, 1)] for d, runs in found.items()}
        print(f"| {label} | {m['matplotlib'][0]:,.0f} ms | {m['svg'][0]:,.0f} ms | {m['matplotlib'][1]:,.0f} ms | "
              f"{m['svg'][1]:,.0f} ms | {m['matplotlib'][0] / m['svg'][0]:.1f}× | {m['matplotlib'][1] / m['svg'][1]:.1f}× |",
              flush=True)


if __name__ == "__main__":
    var = Path(sys.argv[1]) / "var"
    if len(sys.argv) > 2 and sys.argv[2] == "--page":
        page_once(var, *sys.argv[3:6])
    elif len(sys.argv) > 2 and sys.argv[2] == "--pictures":
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
        fresh_processes(var, PICTURES)
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
    else:
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
        pool_statistics(var)
        fresh_processes(var, (("mean 11-point curves", "/collections/bench/curves/", "bench-organizer"),
                         ("one topic, not interpolated", "/collections/bench/curves/?kind=pr&topic=1",
                          "bench-organizer")))
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
