"""js/src/ is ES modules with explicit imports and exports, bundled by esbuild.

The import graph comes from esbuild's own parser (its metafile), not from
regular expressions over the sources."""
import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "js" / "src"
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
ENTRIES = ["install.js", "module.js"]

pytestmark = pytest.mark.skipif(not ESBUILD.exists(), reason="esbuild is not installed (run ./dev setup: npm ci)")


def import_graph(entry: str) -> dict[str, list[str]]:
    """{module: [modules it imports]} for everything reachable from js/src/<entry>."""
    proc = subprocess.run([str(ESBUILD), str(SRC / entry), "--bundle", "--format=esm", "--metafile=/dev/stdout",
                           "--outfile=/dev/null", "--log-level=error",
                           "--define:__WEBNN_POLYFILL_VERSION__=\"0\"", "--define:__WEBNN_CORE_WHEEL__=\"w\"",
                           "--define:__WEBNN_PYODIDE_VERSION__=\"0\"", "--define:__WEBNN_MODULE_URL__=null"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    meta = json.loads(proc.stdout)
    return {name: [i["path"] for i in info["imports"]] for name, info in meta["inputs"].items()}


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": ["b"], "b": ["c"], "c": ["a"]}) == [["a", "b", "c", "a"]]
    assert cycles({"a": ["b", "c"], "b": ["c"], "c": []}) == []


@pytest.mark.parametrize("entry", ENTRIES)
def test_js_src_has_no_import_cycles(entry):
    graph = import_graph(entry)
    assert len(graph) > 5, graph
    assert cycles(graph) == []


def test_every_js_src_module_is_in_the_bundle_and_only_js_src():
    graph = {}
    for entry in ENTRIES:
        graph.update(import_graph(entry))
    # The one non-js/src input: the WebIDL schema generated from the IDL (tools/idl_schema.mjs).
    assert graph.pop("py/webnn_core/idl_schema.json", None) == []
    assert sorted(Path(p).name for p in graph) == sorted(p.name for p in SRC.glob("*.js"))
    assert all(Path(p).parent == Path("js/src") for p in graph), graph


def test_modules_share_names_only_through_imports():
    """No module reads another's top-level name without importing it: each file
    parses on its own as a module (node --check) and uses none of the names the
    others declare unless it imports or declares them itself."""
    declared = {}
    for path in SRC.glob("*.js"):
        text = path.read_text()
        subprocess.run(["node", "--check", "--input-type=module"], input=text, text=True, check=True,
                       capture_output=True)
        declared[path.name] = set(re.findall(r"^(?:export )?(?:const|let|class|(?:async )?function)\s+([A-Za-z_$][\w$]*)",
                                             text, re.M))
    for path in SRC.glob("*.js"):
        code = re.sub(r"//[^\n]*|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|\"(?:[^\"\\\n]|\\.)*\"", "", path.read_text())
        imported = {n.split(" as ")[-1].strip() for group in re.findall(r"import\s*\{([^}]*)\}", code)
                    for n in group.split(",") if n.strip()}
        # Its own names, at any depth (a local `ml` is not module.js's `ml`).
        local = set(re.findall(r"\b(?:const|let|var|class|function)\s+([A-Za-z_$][\w$]*)", code))
        own = declared[path.name] | imported | local
        for other, names in declared.items():
            if other == path.name:
                continue
            for name in sorted(names - own):
                used = re.search(r"(?<![\w$.])" + re.escape(name) + r"(?![\w$])", code)
                assert not used, f"{path.name} uses {name} from {other} without importing it"
