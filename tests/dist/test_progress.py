"""Long commands show progress on a terminal and stay quiet (no bar, no escape codes)
elsewhere (issue 22, item 4): tools/progress.py, used by ./dev bench, ./dev fuzz and
the runtime download (tools/runtime.py)."""
import http.server
import io
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import progress  # noqa: E402
import runtime  # noqa: E402

pytest.importorskip("rich")


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr does in an interactive shell."""

    def isatty(self):
        return True


def run_steps(stream):
    with progress.Progress(stream=stream, prefix="x: ") as p:
        task = p.add("steps", total=3)
        for i in range(3):
            p.log(f"step {i}")
            p.advance(task)
    return stream.getvalue()


def test_not_a_terminal_gives_plain_lines_only():
    out = run_steps(io.StringIO())
    assert out == "x: step 0\nx: step 1\nx: step 2\n"


def test_a_terminal_gets_a_bar():
    out = run_steps(Terminal())
    assert "\x1b[" in out  # rich's cursor/colour control: the bar was drawn
    for i in range(3):
        assert f"x: step {i}" in out


@pytest.fixture
def served_file(tmp_path):
    payload = bytes(range(256)) * 4096  # 1 MiB, several read chunks
    (tmp_path / "blob.bin").write_bytes(payload)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/blob.bin", payload
    server.shutdown()


@pytest.mark.parametrize("terminal", [False, True])
def test_runtime_download_is_byte_exact_and_quiet_off_a_terminal(served_file, tmp_path, monkeypatch, terminal):
    url, payload = served_file
    err = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    dest = tmp_path / "out.bin"
    runtime.download(url, dest)
    assert dest.read_bytes() == payload
    out = err.getvalue()
    assert f"runtime: fetching {url}" in out
    assert ("\x1b[" in out) == terminal
