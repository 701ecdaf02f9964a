"""No import circles: every module of placer_torch
(python/placer_torch/placer_torch) and of the command lines on it
(tools/dev/torchplan, tools/dev/torchexport) is parsed with ast, and an import
anywhere in it, inside a function too, is an edge to the module it names;
the test fails on any cycle, naming each import on it (file:line).

Names resolve as the files import them: placer_torch.X (or .X inside the
package) is the package's module X, or the package itself
(placer_torch/__init__.py) for a name it defines; a top-level name is a
file of the importer's own directory, else of the other tools directory
(the tools put each other's directory on sys.path). Anything else (torch,
the standard library) is outside the graph. Importing placer_torch.X also
runs placer_torch/__init__.py first; that implicit step is not an edge
(__init__ importing X while X imports a sibling is no circle).

Needs no torch: `make test-python` runs it on Debian's python3."""

import ast
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PACKAGE = os.path.join(ROOT, "python", "placer_torch", "placer_torch")
TOOLS = [os.path.join(ROOT, "tools", "dev", d) for d in ("torchplan", "torchexport")]


def modules():
    """{module name: file}: the package's as placer_torch.X, the tools' by
    their file names (a tools directory's own name first)."""
    out = {}
    for d, _, files in os.walk(PACKAGE):
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), os.path.dirname(PACKAGE))[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(d, f)
    for d in TOOLS:
        for f in sorted(os.listdir(d)):
            if f.endswith(".py"):
                out[(d, f[:-3])] = os.path.join(d, f)
    return out


def edges(mods):
    """{module: {imported module: line}} for the modules in mods."""
    def tool(name, importer_dir):
        for d in [importer_dir] + [t for t in TOOLS if t != importer_dir]:
            if (d, name) in mods:
                return (d, name)
        return None

    def resolve(name, importer_dir):
        parts = name.split(".")
        if parts[0] == "placer_torch":
            for i in range(len(parts), 0, -1):
                if ".".join(parts[:i]) in mods:
                    return ".".join(parts[:i])
            return None
        return tool(parts[0], importer_dir) if importer_dir else None

    out = {}
    for m, path in mods.items():
        importer_dir = m[0] if isinstance(m, tuple) else None
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        got = out.setdefault(m, {})
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: only in the package
                    base = m.split(".") if path.endswith("__init__.py") else m.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module
                # from P import X: the submodule P.X when there is one, else P
                whole = resolve(src, importer_dir)
                targets = [src + "." + a.name if resolve(src + "." + a.name, importer_dir) not in (None, whole)
                           else src for a in node.names]
            for t in targets:
                r = resolve(t, importer_dir)
                if r is not None and r != m:
                    got.setdefault(r, node.lineno)
    return out


def cycles(graph):
    """The strongly connected components with more than one module
    (Tarjan), each as a cycle through it, [m0, m1, ..., m0], and the
    component's other modules."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)

    for v in sorted(graph, key=str):
        if v not in index:
            visit(v)
    out = []
    for comp in found:  # a path from comp's first module back to it, within comp
        start, members = min(comp, key=str), set(comp)
        prev, frontier = {start: None}, [start]
        while frontier and start not in [w for v in frontier for w in graph[v]]:
            nxt = []
            for v in frontier:
                for w in graph[v]:
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
            frontier = nxt
        last = next(v for v in frontier if start in graph[v])
        path = [start, last]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        out.append((path[::-1], sorted(members - set(path), key=str)))
    return out


def name(m):
    return "%s/%s" % (os.path.basename(m[0]), m[1]) if isinstance(m, tuple) else m


class TestImports(unittest.TestCase):
    def test_no_cycles(self):
        mods = modules()
        graph = edges(mods)
        bad = []
        for c, others in cycles(graph):
            bad.append(" -> ".join(name(m) for m in c) + " (" + ", ".join(
                "%s:%d" % (os.path.relpath(mods[a], ROOT), graph[a][b]) for a, b in zip(c, c[1:])) + ")" +
                ("; in the same circle: " + ", ".join(name(m) for m in others) if others else ""))
        self.assertEqual(bad, [], "import circles:\n  " + "\n  ".join(bad))

    def test_finds_a_cycle(self):
        # The check itself: a circle through a function-level import is found.
        graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
        self.assertEqual(cycles(graph), [(["a", "b", "c", "a"], [])])
        self.assertEqual(cycles({"a": {"b": 1}, "b": {}}), [])

    def test_sees_the_package_and_tools(self):
        mods = modules()
        graph = edges(mods)
        for m in ("placer_torch", "placer_torch.runner", "placer_torch.transformer", "placer_torch.experts",
                  "placer_torch.exporter", "placer_torch.profiling"):
            self.assertIn(m, mods)
        tp = (TOOLS[0], "torchplan")
        self.assertIn("placer_torch.torchplan", graph[tp])
        self.assertIn("placer_torch.torchplan", graph[(TOOLS[0], "megatron")])
        self.assertIn("placer_torch.experts", graph["placer_torch.torchplan"])  # a function-level import
        self.assertIn("placer_torch.exporter", graph["placer_torch.profiling"])  # relative


if __name__ == "__main__":
    unittest.main()
