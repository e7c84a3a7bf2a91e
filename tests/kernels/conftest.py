"""Fixtures for the microkernel tests: the kernels of csrc/ as a native library
(ctypes) and as the shipped wasm module (run by Node), attached in turn as
webnn_core.backends.cpu.fast's library."""
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _native():
    import build_kernels

    if not build_kernels.find_clang() and not shutil.which("cc"):
        pytest.skip("no C compiler for the native kernels")
    return build_kernels.ensure_native()


@pytest.fixture(scope="session")
def native_lib():
    return _native()


def _node_backend(wasm):
    import wasm_node

    reason = wasm_node.unavailable_reason(wasm)
    if reason:
        pytest.skip(reason)
    backend = wasm_node.NodeWasmBackend(wasm)
    try:
        backend.probe()
    except Exception as e:  # noqa: BLE001
        backend.close()
        pytest.skip(f"Node cannot run {wasm.name}: {e}")
    return backend


@pytest.fixture(scope="session")
def wasm_node_backend():
    import wasm_node

    backend = _node_backend(wasm_node.WASM)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def wasm_relaxed_node_backend():
    import wasm_node

    backend = _node_backend(wasm_node.WASM_RELAXED)
    yield backend
    backend.close()


@pytest.fixture(params=["native", "wasm", "wasm-relaxed"])
def backend(request, native_lib):
    """Attach one build of the kernels for the test; restore 'none' afterwards."""
    from webnn_core.backends.cpu import fast

    if request.param == "native":
        status = fast.attach_native(native_lib)
        assert status["backend"] == "native", status
    elif request.param == "wasm":
        fast.attach(request.getfixturevalue("wasm_node_backend"))
    else:
        fast.attach(request.getfixturevalue("wasm_relaxed_node_backend"))
    yield fast.library()
    fast.detach("test finished")


@pytest.fixture
def native(native_lib):
    from webnn_core.backends.cpu import fast

    fast.attach_native(native_lib)
    yield fast.library()
    fast.detach("test finished")


@pytest.fixture(params=[2, 3])
def pool(request, native, native_lib):
    """The kernel pool attached through the native stand-in port, with 2 and 3 threads."""
    from native_pool_port import NativePoolPort
    from webnn_core.backends.cpu import fast

    port = NativePoolPort(native_lib, request.param)
    fast.attach_pool(port, native.fused_madd, "native stand-in")
    yield fast.pool()
    fast.detach_pool()
    port.helpers.shutdown()
