"""Bad input never crashes: seeded random mutations of valid SkriptND models
(deleted characters, inserted tokens, duplicated snippets) either load or raise
a typed, positioned NNEF error - never another Python exception."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from webnn_core.errors import WebNNError
from webnn_core.nnef.errors import NNEFError
from webnn_core.nnef2 import load, shapes
import test_nnef2_eval as E

ALEXNET = (Path(__file__).parent / "fixtures" / "alexnet.sknd").read_text()
TOKENS = ["..", "...", "?", "??", "[", "]", "(", ")", "{", "}", ";", ",", "0", "-1", "x", "i", "|", "~", "<", ">",
          ":", "=", "+=", "true", "1.5", "real", "int", "@input", "nn.relu", '"s"']
RICH = E.graph(
    """p = my_matmul(x, w); q = poly(x); r = colmax(x); t = diag(sq); u = my_matmul(x, w, z);
    [a, b] = layout.unstack{axis=0}(x); v = with s = a do..(i -> 2) { m = math.mul(s, 2.0); yield m; };
    k = if 1 > 0 then nn.conv{padding=1}(img, f) else img; g = nn.max_pool{size=2, stride=2}(k);""",
    "@input { x: real[2, 3]; w: real[3, 4]; sq: real[3, 3]; z: real[2, 4]; img: real[1, 2, 6, 6]; "
    "f: real[4, 2, 3, 3]; } @output { p: real[2, 4]; q: real[2, 3]; r: real[3]; t: real[3, 3]; u: real[2, 4]; "
    "v: real[3]; g: real[1, 4, 3, 3]; }", E.LOWERED)["main.sknd"]


def mutations(text, seed, count):
    rng = random.Random(seed)
    for _ in range(count):
        t = text
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t))
            r = rng.random()
            if r < 0.3:
                t = t[:i] + t[i + 1:]
            elif r < 0.7:
                t = t[:i] + rng.choice(TOKENS) + t[i:]
            else:
                j = rng.randrange(len(t))
                t = t[:i] + t[j:j + 5] + t[i:]
        yield t


@pytest.mark.parametrize("text, compose", [(ALEXNET, shapes), (RICH, load)], ids=["alexnet-shapes", "rich-build"])
def test_mutated_models_fail_cleanly(text, compose):
    compose({"main.sknd": text})       # the unmutated model is valid
    for t in mutations(text, 11, 120):
        try:
            compose({"main.sknd": t})
        except (NNEFError, WebNNError) as e:
            assert "Traceback" not in str(e)
