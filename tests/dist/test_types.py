"""TypeScript declarations generated from the IDL (dist/webnn-polyfill.d.ts,
tools/idl_dts.mjs): a file using the whole API type-checks with
`tsc --noEmit --strict` through the package's `types` export, wrong calls do not."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
TSC = ROOT / "node_modules" / ".bin" / "tsc"
HERE = Path(__file__).resolve().parent / "types"

pytestmark = pytest.mark.skipif(not TSC.exists() or not (DIST / "webnn-polyfill.d.ts").exists(),
                                reason="typescript (npm ci) or dist/webnn-polyfill.d.ts missing (run ./dev build)")

TSCONFIG = {"compilerOptions": {"strict": True, "noEmit": True, "target": "es2022", "module": "esnext",
                                "moduleResolution": "bundler", "lib": ["es2022", "dom", "dom.iterable"],
                                "types": [], "skipLibCheck": False}}


def tsc(tmp_path: Path, *files: str) -> subprocess.CompletedProcess:
    """Type-check `files` (from tests/dist/types/) in a project where
    node_modules/webnn-polyfill is dist/, as an installed package would be."""
    (tmp_path / "node_modules").mkdir(exist_ok=True)
    link = tmp_path / "node_modules" / "webnn-polyfill"
    if not link.exists():
        os.symlink(DIST, link)
    for f in files:
        (tmp_path / f).write_text((HERE / f).read_text())
    (tmp_path / "tsconfig.json").write_text(json.dumps({**TSCONFIG, "files": list(files)}))
    return subprocess.run([str(TSC), "-p", str(tmp_path), "--pretty", "false"], capture_output=True, text=True,
                          cwd=tmp_path)


def idl_operations() -> set[str]:
    """MLGraphBuilder's operations, read from the IDL by webidl2 (not from our output)."""
    code = ("const {parse} = require('webidl2'); const fs = require('fs');"
            "const defs = parse(fs.readFileSync('spec/webnn-2026-09.idl', 'utf8'));"
            "console.log(JSON.stringify(defs.filter(d => d.name === 'MLGraphBuilder')"
            ".flatMap(d => d.members).filter(m => m.type === 'operation').map(m => m.name)));")
    return set(json.loads(subprocess.run(["node", "-e", code], cwd=ROOT, check=True, capture_output=True,
                                         text=True).stdout))


def test_whole_api_type_checks_strictly(tmp_path):
    proc = tsc(tmp_path, "usage.ts")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_usage_calls_every_builder_operation():
    called = set(re.findall(r"\bb\.(\w+)\(", (HERE / "usage.ts").read_text()))
    operations = idl_operations()
    assert len(operations) > 90
    assert operations - called == set()


def test_wrong_calls_fail_to_type_check(tmp_path):
    # Every line marked @ts-expect-error must really be an error (else TS2578).
    proc = tsc(tmp_path, "rejected.ts")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (HERE / "rejected.ts").read_text().count("@ts-expect-error") >= 10


def test_a_wrong_call_is_reported(tmp_path):
    proc = tsc(tmp_path, "wrong_call.ts")
    assert proc.returncode != 0
    assert re.search(r"wrong_call\.ts\(7,\d+\): error TS2345: Argument of type 'string' is not assignable to "
                     r"parameter of type 'MLOperand'", proc.stdout), proc.stdout


def test_declarations_cover_the_idl(tmp_path):
    """Every interface, dictionary, enum and typedef of the IDL is declared."""
    code = ("const {parse} = require('webidl2'); const fs = require('fs');"
            "const defs = parse(fs.readFileSync('spec/webnn-2026-09.idl', 'utf8'));"
            "console.log(JSON.stringify(defs.filter(d => d.name && d.type !== 'includes').map(d => [d.type, d.name])));")
    defs = json.loads(subprocess.run(["node", "-e", code], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    dts = (DIST / "webnn-polyfill.d.ts").read_text()
    for kind, name in defs:
        keyword = "type" if kind in ("enum", "typedef") else "interface"
        assert re.search(rf"^  {keyword} {name}\b", dts, re.M), (kind, name)
    for name in ("ML", "MLContext", "MLGraph", "MLGraphBuilder", "MLOperand", "MLTensor"):
        assert re.search(rf"^  var {name}: \{{", dts, re.M), name
