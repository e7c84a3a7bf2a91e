"""tools/profile_build.py --ort: a recording of bridge calls (as the browser recorder
writes it, with the handles that session had) replays through webnn_core.bridge.call
with the handles this process hands out, and a call that fails on replay is an error."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import profile_build  # noqa: E402


def recording(x_shape=(1, 4)):
    """create_context -> 41, new_builder -> 42, input -> 43, constant -> 44, add -> 45, build -> 46."""
    def call(method, payload, result=None, nbytes=None):
        return {"method": method, "payload": json.dumps(payload, separators=(",", ":")), "bytes": nbytes, "result": result, "ms": 0.1}
    desc = {"dataType": "float32", "shape": list(x_shape)}
    return [
        call("create_context", ["cpu", "default", {"fastPaths": True, "threads": 1}], "41"),
        call("new_builder", [{"$o": 41}], "42"),
        call("builder_input", [{"$o": 42}, "x", desc], json.dumps([43, "float32", list(x_shape)])),
        call("builder_constant", [{"$o": 42}, desc], json.dumps([44, "float32", list(x_shape)]), nbytes=16),
        call("builder_op", [{"$o": 42}, "add", [{"$o": 43}, {"$o": 44}], {}], json.dumps([45, "float32", list(x_shape)])),
        call("builder_build", [{"$o": 42}, {"$r": [["y", {"$o": 45}]]}], "46"),
    ]


def test_a_recording_replays_with_this_processes_handles():
    stats = {}
    profile_build.replay(recording(), stats)
    assert {k: len(v) for k, v in stats.items()} == {"create_context": 1, "new_builder": 1, "builder_input": 1,
                                                      "builder_constant": 1, "builder_op": 1, "builder_build": 1}
    report = profile_build.replay_report(recording(), 2, 0)
    assert "builder_build" in report and "6 bridge calls" in report


def test_a_call_failing_on_replay_is_an_error():
    calls = recording()
    calls[4]["payload"] = json.dumps([{"$o": 42}, "add", [{"$o": 43}, {"$o": 99}], {}])  # 99: never made
    with pytest.raises(RuntimeError, match="builder_op failed on replay"):
        profile_build.replay(calls)
