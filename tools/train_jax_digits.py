"""Train the gallery's JAX digit classifier and export it as StableHLO.

    python3 tools/train_jax_digits.py        # needs jax==0.10.2 and scikit-learn (dev machine only)

Data: the 8x8 handwritten digits that scikit-learn ships (1797 images, no
download). Model: a 64-32-10 MLP with tanh, trained with full-batch Adam in plain
JAX for 300 steps (seeded, about 10 s on one core). Writes into web/xla/:
  digits.mlir   `jax.jit(predict).lower(...).as_text()`: parameter 0 is the image
                [1, 8, 8] (pixel values 0..16), parameters 1-4 the weights;
                result 0 the class probabilities [1, 10], result 1 the label [1] (i32)
  weights.npz   arg1..arg4 (float32, about 10 kB)
  samples.json  held-out test images with their labels and JAX's own probabilities
  model.py.txt  the source of `predict`, shown on the gallery page
"""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "web" / "xla"


def predict(image, w1, b1, w2, b2):
    """image: [1, 8, 8] pixel values 0..16 -> (probabilities [1, 10], label [1])."""
    import jax
    import jax.numpy as jnp

    x = image.reshape(1, 64) / 16.0
    hidden = jnp.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    return jax.nn.softmax(logits, axis=-1), jnp.argmax(logits, axis=-1).astype(jnp.int32)


def main():
    import jax
    import jax.numpy as jnp
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float32)
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(images))
    test, train = order[:297], order[297:]
    x_train = jnp.asarray(images[train].reshape(-1, 64) / 16.0)
    y_train = jnp.asarray(labels[train])

    key = jax.random.PRNGKey(0)
    k1, k2 = jax.random.split(key)
    params = [jax.random.normal(k1, (64, 32)) * 0.2, jnp.zeros(32), jax.random.normal(k2, (32, 10)) * 0.2, jnp.zeros(10)]

    def loss(p, x, y):
        w1, b1, w2, b2 = p
        logits = jnp.tanh(x @ w1 + b1) @ w2 + b2
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(y)), y])

    @jax.jit
    def step(p, m, v, t):
        g = jax.grad(loss)(p, x_train, y_train)
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        p = [w - 0.01 * (a / (1 - 0.9 ** t)) / (jnp.sqrt(c / (1 - 0.999 ** t)) + 1e-8) for w, a, c in zip(p, m, v)]
        return p, m, v

    m = [jnp.zeros_like(w) for w in params]
    v = [jnp.zeros_like(w) for w in params]
    for t in range(1, 301):
        params, m, v = step(params, m, v, t)
    params = [np.asarray(w, np.float32) for w in params]

    f = jax.jit(predict)
    correct = int(sum(int(f(images[i][None], *params)[1][0]) == labels[i] for i in test))
    print(f"test accuracy: {correct}/{len(test)} = {correct / len(test):.3f}")

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "digits.mlir").write_text(f.lower(images[test[0]][None], *params).as_text())
    np.savez(OUT / "weights.npz", **{f"arg{i + 1}": w for i, w in enumerate(params)})
    samples = []
    for i in test[:24]:
        probs, label = f(images[i][None], *params)
        samples.append({"image": images[i].astype(int).tolist(), "label": int(labels[i]),
                        "jaxProbabilities": np.asarray(probs, np.float32)[0].tolist(), "jaxLabel": int(label[0])})
    (OUT / "samples.json").write_text(json.dumps({"testAccuracy": [correct, len(test)], "samples": samples}) + "\n")
    (OUT / "model.py.txt").write_text(inspect.getsource(predict))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
