"""Build the SIMD microkernels (csrc/) twice from the same source:

  * wasm32 + simd128  -> dist/webnn-kernels.wasm   (the browser's fast path)
  * wasm32 + simd128 + relaxed-simd -> dist/webnn-kernels-relaxed.wasm: the
    same kernels with f32x4.relaxed_madd (fused multiply-add where the CPU has
    it); js/src/simd.js loads it where the engine validates it, else the former
  * the threads builds of both (wasm atomics + bulk memory, imported *shared*
    memory) -> dist/webnn-kernels-threads.wasm, dist/webnn-kernels-threads-relaxed.wasm:
    what js/src/kernel_pool.js runs in the calling thread and its workers
    (issue 17 item 2, docs/threads.md)
  * native, shared    -> .cache/kernels/libwebnn_kernels.so  (pytest via ctypes)

The wasm module imports Pyodide's memory and must never write memory it does
not own: the build fails if it has a data section, imports anything but
`env.memory`, or touches a global (the shadow-stack pointer).

    python tools/build_kernels.py [--wasm-only | --native-only] [--quiet]

Missing clang or wasm-ld skips that build with a warning (the polyfill then
runs numpy-only); `--strict` turns a skip into an error.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
DIST = ROOT / "dist"
WASM_OUT = DIST / "webnn-kernels.wasm"
WASM_RELAXED_OUT = DIST / "webnn-kernels-relaxed.wasm"
WASM_THREADS_OUT = DIST / "webnn-kernels-threads.wasm"
WASM_THREADS_RELAXED_OUT = DIST / "webnn-kernels-threads-relaxed.wasm"
NATIVE_DIR = ROOT / ".cache" / "kernels"
NATIVE_OUT = NATIVE_DIR / "libwebnn_kernels.so"
SOURCE = CSRC / "kernels.c"

# Both builds: same arithmetic (no FMA contraction), no libc, no builtins that
# would turn loops into memcpy/memset calls.
COMMON_FLAGS = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-builtin", "-fvisibility=hidden", "-std=c11",
                "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-unused-function"]
WASM_FLAGS = ["--target=wasm32", "-msimd128", "-ffreestanding", "-nostdlib",
              "-Wl,--no-entry", "-Wl,--import-memory", "-Wl,--export-dynamic",
              "-Wl,--strip-debug"]
WASM_EXPORTS = ["wk_abi_version", "wk_fused_madd", "wk_gemm", "wk_pack_b", "wk_conv2d", "wk_dwconv2d",
                "wk_maxpool2d", "wk_avgpool2d", "wk_clamp", "wk_powq", "wk_binary", "wk_shuffle", "wk_transpose",
                "wk_erf", "wk_layer_norm", "wk_pack_oihw", "wk_chanavg"]


class BuildError(Exception):
    pass


def _log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"build_kernels: {msg}", file=sys.stderr)


def find_clang() -> str | None:
    for name in (os.environ.get("CLANG"), "clang", "clang-16", "clang-15", "clang-14"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def find_wasm_ld() -> str | None:
    for name in ("wasm-ld", "wasm-ld-16", "wasm-ld-15", "wasm-ld-14"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def sources_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(CSRC.glob("*.[ch]")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    h.update(" ".join(COMMON_FLAGS + WASM_FLAGS).encode())
    return h.hexdigest()[:16]


# -- wasm verification --------------------------------------------------------
def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def _name(data: bytes, pos: int) -> tuple[str, int]:
    n, pos = _uleb(data, pos)
    return data[pos:pos + n].decode(), pos + n


def wasm_sections(data: bytes) -> list[tuple[int, bytes]]:
    if data[:8] != b"\0asm\x01\0\0\0":
        raise BuildError("not a wasm module")
    pos, out = 8, []
    while pos < len(data):
        sid = data[pos]
        size, pos = _uleb(data, pos + 1)
        out.append((sid, data[pos:pos + size]))
        pos += size
    return out


def wasm_imports(section: bytes) -> list[tuple[str, str, int]]:
    count, pos = _uleb(section, 0)
    out = []
    for _ in range(count):
        mod, pos = _name(section, pos)
        field, pos = _name(section, pos)
        kind = section[pos]
        pos += 1
        if kind == 0:  # func: type index
            _, pos = _uleb(section, pos)
        elif kind == 1:  # table: reftype + limits
            pos += 1
            flags, pos = _uleb(section, pos)
            _, pos = _uleb(section, pos)
            if flags & 1:
                _, pos = _uleb(section, pos)
        elif kind == 2:  # memory: limits
            flags, pos = _uleb(section, pos)
            _, pos = _uleb(section, pos)
            if flags & 1:
                _, pos = _uleb(section, pos)
        elif kind == 3:  # global: valtype + mut
            pos += 2
        out.append((mod, field, kind))
    return out


def wasm_exports(section: bytes) -> list[str]:
    count, pos = _uleb(section, 0)
    names = []
    for _ in range(count):
        name, pos = _name(section, pos)
        pos += 1
        _, pos = _uleb(section, pos)
        names.append(name)
    return names


def verify_wasm(path: Path, objdump: str | None) -> dict:
    """Fail unless the module is safe to run in Pyodide's memory."""
    data = path.read_bytes()
    sections = wasm_sections(data)
    ids = [sid for sid, _ in sections]
    if 11 in ids:
        raise BuildError(f"{path.name} has a data section (static data would overwrite Pyodide's memory)")
    imports = wasm_imports(dict(sections)[2]) if 2 in ids else []
    if imports != [("env", "memory", 2)]:
        raise BuildError(f"{path.name} must import only env.memory, imports {imports}")
    exports = wasm_exports(dict(sections)[7]) if 7 in ids else []
    missing = [e for e in WASM_EXPORTS if e not in exports]
    if missing:
        raise BuildError(f"{path.name} does not export {missing}")
    if objdump:
        text = subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True, check=True).stdout
        uses = [line.strip() for line in text.splitlines() if "global.get" in line or "global.set" in line]
        if uses:
            raise BuildError(f"{path.name} uses the shadow stack (globals): {uses[:3]}")
        checked = "no data section, no global access"
    else:
        # Without a disassembler: the only global wasm-ld may define is the
        # stack pointer; accept it only if no code byte sequence could be a
        # global.get/global.set of index 0 (0x23 0x00 / 0x24 0x00).
        code = dict(sections).get(10, b"")
        if b"\x23\x00" in code or b"\x24\x00" in code:
            raise BuildError(f"{path.name} may use the shadow stack (install llvm-objdump to check precisely)")
        checked = "no data section, no global access (byte scan)"
    return {"size": len(data), "exports": exports, "checked": checked}


# clang 14 knows relaxed SIMD only as the proposal's prototype: its f32x4.fma
# is opcode 0xaf (0xfd 0xaf 0x01); the standard f32x4.relaxed_madd is 0x105
# (0xfd 0x85 0x02), same length. csrc/simd.h passes the operands so that the
# standard instruction computes what the kernels mean (x * b + acc).
PROTO_FMA = bytes([0xFD, 0xAF, 0x01])
RELAXED_MADD = bytes([0xFD, 0x85, 0x02])
RELAXED_PROTOTYPES = ("f32x4.fma", "f32x4.fms", "f64x2.fma", "f64x2.fms", "laneselect", "relaxed", "dot_i8x16")


def patch_relaxed(path: Path, objdump: str) -> int:
    """Rewrite clang 14's prototype f32x4.fma instructions to f32x4.relaxed_madd,
    at the instruction offsets the disassembler reports. Returns the count."""
    data = bytearray(path.read_bytes())
    code_start = None
    pos = 8
    while pos < len(data):
        sid = data[pos]
        size, body = _uleb(data, pos + 1)
        if sid == 10:
            code_start = body
        pos = body + size
    text = subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    count = 0
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        mnemonic = parts[1].strip() if len(parts) > 1 else ""
        if any(p in mnemonic for p in RELAXED_PROTOTYPES):
            if mnemonic != "f32x4.fma":
                raise BuildError(f"unexpected relaxed-SIMD instruction {mnemonic!r} (only f32x4.fma is patched)")
            offset = int(line.split(":")[0], 16)
            at = code_start + offset
            if bytes(data[at:at + 3]) != PROTO_FMA:
                raise BuildError(f"f32x4.fma at code offset {offset:#x} is not encoded as fd af 01")
            data[at:at + 3] = RELAXED_MADD
            count += 1
    if "f32x4.fma" in text and not count:
        raise BuildError("could not locate the f32x4.fma instructions")
    path.write_bytes(bytes(data))
    return count


def find_objdump() -> str | None:
    for name in ("llvm-objdump", "llvm-objdump-16", "llvm-objdump-15", "llvm-objdump-14"):
        if shutil.which(name):
            return shutil.which(name)
    return None


# -- builds ---------------------------------------------------------------------
# The threads builds (issue 17 item 2, docs/threads.md): the same kernels for a shared
# WebAssembly.Memory that the kernel pool's workers instantiate them on.
THREADS_FLAGS = ["-matomics", "-mbulk-memory", "-Wl,--shared-memory", "-Wl,--max-memory=2147483648"]


def build_wasm(out: Path = WASM_OUT, quiet: bool = False, relaxed: bool = False, threads: bool = False) -> Path:
    clang = find_clang()
    if not clang:
        raise BuildError("clang not found (./dev setup installs it)")
    wasm_ld = find_wasm_ld()
    if not wasm_ld:
        raise BuildError("wasm-ld not found (./dev setup installs lld)")
    objdump = find_objdump()
    if relaxed and not objdump:
        raise BuildError("llvm-objdump not found (needed to encode relaxed SIMD)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # clang looks for "wasm-ld" on PATH; Debian may name it wasm-ld-14.
        bindir = Path(tmp) / "bin"
        bindir.mkdir()
        (bindir / "wasm-ld").symlink_to(wasm_ld)
        env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
        tmp_out = Path(tmp) / out.name
        flags = WASM_FLAGS + (["-mrelaxed-simd"] if relaxed else []) + (THREADS_FLAGS if threads else [])
        cmd = [clang, *COMMON_FLAGS, *flags, "-o", str(tmp_out), str(SOURCE)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise BuildError(f"wasm compile failed:\n{' '.join(cmd)}\n{proc.stderr}")
        if proc.stderr.strip() and not quiet:
            print(proc.stderr, file=sys.stderr)
        info = verify_wasm(tmp_out, objdump)
        if relaxed:
            n = patch_relaxed(tmp_out, objdump)
            if not n:
                raise BuildError("the relaxed build has no multiply-adds to encode")
            info["checked"] += f", {n} relaxed_madd"
        shutil.copyfile(tmp_out, out)
    _log(f"{out.name}: {info['size']} bytes, {len(info['exports'])} exports, {info['checked']}", quiet)
    return out


def build_wasm_relaxed(out: Path = WASM_RELAXED_OUT, quiet: bool = False) -> Path:
    return build_wasm(out, quiet=quiet, relaxed=True)


def build_wasm_threads(out: Path = WASM_THREADS_OUT, quiet: bool = False) -> Path:
    return build_wasm(out, quiet=quiet, threads=True)


def build_wasm_threads_relaxed(out: Path = WASM_THREADS_RELAXED_OUT, quiet: bool = False) -> Path:
    return build_wasm(out, quiet=quiet, relaxed=True, threads=True)


def build_native(out: Path = NATIVE_OUT, quiet: bool = False) -> Path:
    cc = find_clang() or shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        raise BuildError("no C compiler found")
    out.parent.mkdir(parents=True, exist_ok=True)
    flags = list(COMMON_FLAGS)
    if "gcc" in Path(cc).name or Path(cc).name == "cc":
        flags = [f for f in flags if f != "-fno-builtin"] + ["-fno-tree-loop-distribute-patterns"]
    tmp_out = out.with_suffix(".so.tmp")
    cmd = [cc, *flags, "-shared", "-fPIC", "-o", str(tmp_out), str(SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"native compile failed:\n{' '.join(cmd)}\n{proc.stderr}")
    os.replace(tmp_out, out)
    (out.parent / "digest").write_text(sources_digest())
    _log(f"{out} ({Path(cc).name})", quiet)
    return out


def native_up_to_date(out: Path = NATIVE_OUT) -> bool:
    stamp = out.parent / "digest"
    return out.exists() and stamp.exists() and stamp.read_text() == sources_digest()


def ensure_native(quiet: bool = True) -> Path:
    """Build the native library unless it is current (used by tests)."""
    if not native_up_to_date():
        build_native(quiet=quiet)
    return NATIVE_OUT


def build(wasm: bool = True, native: bool = True, strict: bool = False, quiet: bool = False) -> dict:
    """Build what can be built; returns {"wasm": path|None, "native": path|None, "warnings": [...]}."""
    result = {"wasm": None, "wasm_relaxed": None, "wasm_threads": None, "wasm_threads_relaxed": None,
              "native": None, "warnings": []}
    steps = (("wasm", wasm, build_wasm, WASM_OUT), ("wasm_relaxed", wasm, build_wasm_relaxed, WASM_RELAXED_OUT),
             ("wasm_threads", wasm, build_wasm_threads, WASM_THREADS_OUT),
             ("wasm_threads_relaxed", wasm, build_wasm_threads_relaxed, WASM_THREADS_RELAXED_OUT),
             ("native", native, build_native, None))
    for kind, enabled, fn, shipped in steps:
        if not enabled:
            continue
        try:
            result[kind] = fn(quiet=quiet)
        except BuildError as e:
            if strict:
                raise
            msg = f"skipping the {kind} kernels: {e}"
            result["warnings"].append(msg)
            print(f"build_kernels: warning: {msg}", file=sys.stderr)
            if shipped is not None and shipped.exists():
                shipped.unlink()  # never ship a stale module
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--wasm-only", action="store_true")
    g.add_argument("--native-only", action="store_true")
    p.add_argument("--strict", action="store_true", help="fail instead of skipping when a toolchain is missing")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        build(wasm=not args.native_only, native=not args.wasm_only, strict=args.strict, quiet=args.quiet)
    except BuildError as e:
        print(f"build_kernels: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
