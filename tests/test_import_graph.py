"""No import circle among the project's modules.

Every import counts, wherever it stands (module level or inside a function): `from x import y` names the
submodule x.y when y is one, and relative imports resolve against the importing package. A circle is a set
of modules that import one another (a strongly connected component of more than one module); the test names
each one, so a function-level import cannot hide a circle.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["workbench", "pooling", "judging", "evaluation", "answers", "participation"]
#: circles still being broken, by name; the test fails if a new one appears or a listed one changes
#: (when one shrinks or falls, shrink or remove its entry here)
ALLOWED: dict[str, frozenset[str]] = {}


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.parts:
                modules[_module_name(path, root)] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module that `name` (a module or a name inside one) stands for, or None outside the project."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that `module` imports, wherever the import stands."""
    found = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(node, module, is_package)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found.update(target for name in names if (target := _resolve(name, modules)) and target != module)
    return found


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    modules = project_modules(root, packages)
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _describe(circle: frozenset[str], graph: dict[str, set[str]]) -> str:
    edges = [f"    {m} -> {', '.join(sorted(graph[m] & circle))}" for m in sorted(circle)]
    return f"  {len(circle)} modules:\n" + "\n".join(edges)


def test_no_import_circle_among_the_projects_modules():
    graph = import_graph()
    found = circles(graph)
    new = [c for c in found if c not in ALLOWED.values()]
    assert not new, "import circles (make the dependencies point one way):\n" + "\n".join(
        _describe(c, graph) for c in sorted(new, key=sorted))
    changed = [name for name, allowed in ALLOWED.items() if allowed not in found]
    assert not changed, f"these circles shrank or fell; shrink or remove their entries in ALLOWED: {changed}"


#: evaluation flows one way: compute (pure functions of qrels and runs) -> store (boards by version) -> serve
#: (selectors, views, leaderboards read the stores); a module imports none of a later stage's
EVALUATION_STAGES = {
    "compute": ["evaluation.scoring", "evaluation.judged", "evaluation.inferred", "evaluation.planner"],
    "store": ["evaluation.board_files", "evaluation.extra_files", "evaluation.board_store", "evaluation.board",
              "evaluation.board_extras", "evaluation.board_topics", "evaluation.scores"],
    "serve": ["evaluation.selectors", "evaluation.board_leaderboard", "evaluation.views", "evaluation.report",
              "evaluation.release", "evaluation.tasks"],
}


def test_evaluation_computes_stores_and_serves_in_one_direction():
    graph = import_graph()
    stages = list(EVALUATION_STAGES)
    backwards = [f"{module} ({stage}) imports {target} ({later})"
                 for i, stage in enumerate(stages) for module in EVALUATION_STAGES[stage]
                 for later in stages[i + 1:]
                 for target in sorted(graph.get(module, set()) & set(EVALUATION_STAGES[later]))]
    assert not backwards, "\n".join(backwards)


def test_the_graph_sees_every_kind_of_import(tmp_path):
    package = tmp_path / "app"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .. import c\n")
    (package / "a.py").write_text("def f():\n    from app.sub import b\n    return b\n")
    (package / "sub" / "b.py").write_text("from ..c import thing\n")
    (package / "c.py").write_text("import app.a\nthing = 1\n")
    (package / "d.py").write_text("from app import c\n")
    graph = import_graph(tmp_path, ["app"])
    assert graph["app.a"] == {"app.sub.b"}
    assert graph["app.sub.b"] == {"app.c"}
    assert graph["app.sub"] == {"app.c"}
    assert graph["app.d"] == {"app.c"}
    assert circles(graph) == [frozenset({"app.a", "app.sub.b", "app.c"})]
