// The gallery's default example: a digit classifier that needs no download. Its weights are
// trained at build time by tools/train_digits.py (scikit-learn's MLPClassifier on the digits
// scikit-learn ships) into /generated/digits-mlp.json; this page rebuilds the network with
// MLGraphBuilder and runs it through navigator.ml.
import { $, Status, followEngineProgress, requirePolyfill, showError, catchGlobalErrors, fmtMs } from './lib/ui.js';

const MODEL_URL = '/generated/digits-mlp.json';
const status = new Status($('#status'));
const errorBox = $('#error');
catchGlobalErrors(errorBox);

// The network, op by op: x [1, 64] (pixels 0..16) -> softmax probabilities [1, 10].
export function buildDigitsGraph(builder, m) {
  const f32 = (shape, values) => builder.constant({ dataType: 'float32', shape }, new Float32Array(values));
  const x = builder.input('pixels', { dataType: 'float32', shape: [1, 64] });
  const scaled = builder.mul(x, f32([1, 1], [1 / 16]));  // the model was trained on pixels / 16
  const hidden = builder.relu(builder.add(builder.matmul(scaled, f32([64, m.hidden], m.w1)), f32([m.hidden], m.b1)));
  const logits = builder.add(builder.matmul(hidden, f32([m.hidden, 10], m.w2)), f32([10], m.b2));
  return { probabilities: builder.softmax(logits, 1) };
}

// The drawing -> the dataset's encoding: the ink's bounding box scaled into a 32x32 bitmap,
// then the number of inked pixels in each 4x4 block (0..16), as scikit-learn's digits were made.
export function padToPixels(canvas) {
  const { width, height } = canvas;
  const rgba = canvas.getContext('2d').getImageData(0, 0, width, height).data;
  let x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (rgba[(y * width + x) * 4] < 128) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
    }
  }
  const pixels = new Float32Array(64);
  if (x1 < 0) return pixels;
  const bw = x1 - x0 + 1, bh = y1 - y0 + 1;
  const scale = 32 / Math.max(bw, bh);
  const dw = Math.max(1, Math.round(bw * scale)), dh = Math.max(1, Math.round(bh * scale));
  const small = Object.assign(document.createElement('canvas'), { width: 32, height: 32 });
  const g = small.getContext('2d', { willReadFrequently: true });
  g.fillStyle = '#fff';
  g.fillRect(0, 0, 32, 32);
  g.drawImage(canvas, x0, y0, bw, bh, Math.floor((32 - dw) / 2), Math.floor((32 - dh) / 2), dw, dh);
  const bits = g.getImageData(0, 0, 32, 32).data;
  for (let y = 0; y < 32; y++) {
    for (let x = 0; x < 32; x++) {
      if (bits[(y * 32 + x) * 4] < 160) pixels[(y >> 2) * 8 + (x >> 2)] += 1;
    }
  }
  return pixels;
}

function paint(canvas, values) {
  const g = canvas.getContext('2d');
  const img = g.createImageData(8, 8);
  values.forEach((v, i) => { const c = 255 - Math.round(v / 16 * 255); img.data.set([c, c, c, 255], i * 4); });
  g.putImageData(img, 0, 0);
}

async function loadModel() {
  let r;
  try {
    r = await fetch(MODEL_URL);
  } catch (e) {
    throw Object.assign(new Error(`could not load ${MODEL_URL} (${e.message})`), { hint: 'Is ./dev serve still running?' });
  }
  if (!r.ok) {
    throw Object.assign(new Error(`${MODEL_URL}: HTTP ${r.status}: the digit classifier has not been trained`), {
      name: 'ModelMissing',
      hint: 'It is trained by the build: run ./dev serve (or python3 tools/build.py, or python3 tools/train_digits.py), which needs scikit-learn (pip install scikit-learn).',
    });
  }
  return r.json();
}

const state = { model: null, samples: [], selected: -1, runner: null, device: 'cpu' };

// A context, the graph and its tensors for one device; kept until the device changes.
async function makeRunner(deviceType) {
  const context = await navigator.ml.createContext({ deviceType });
  const builder = new MLGraphBuilder(context);
  const t0 = performance.now();
  const graph = await builder.build(buildDigitsGraph(builder, state.model));
  const buildMs = performance.now() - t0;
  const input = await context.createTensor({ dataType: 'float32', shape: [1, 64], writable: true });
  const output = await context.createTensor({ dataType: 'float32', shape: [1, 10], readable: true });
  return {
    deviceType, buildMs,
    async run(pixels) {
      context.writeTensor(input, pixels);
      context.dispatch(graph, { pixels: input }, { probabilities: output });
      return new Float32Array(await context.readTensor(output));
    },
    destroy() { try { graph.destroy(); input.destroy(); output.destroy(); context.destroy(); } catch (e) { /* gone */ } },
  };
}

let queue = Promise.resolve();
function classify(pixels) {
  queue = queue.then(() => classifyNow(pixels)).catch((e) => { status.fail(); showError(errorBox, e, 'Classification failed'); });
  return queue;
}

async function classifyNow(pixels) {
  document.body.dataset.state = 'busy';
  paint($('#seen'), pixels);
  if (!state.runner || state.runner.deviceType !== state.device) {
    if (state.runner) state.runner.destroy();
    state.runner = null;
    const engineStarted = webnnPolyfill.engineStats && webnnPolyfill.engineStats.startMs != null;
    const unfollow = engineStarted ? (status.show(`Creating a ${state.device} context…`), () => {}) : followEngineProgress(status);
    try {
      state.runner = await makeRunner(state.device);
    } finally { unfollow(); }
  }
  const t0 = performance.now();
  const probs = await state.runner.run(pixels);
  const ms = performance.now() - t0;
  let label = 0;
  probs.forEach((p, i) => { if (p > probs[label]) label = i; });
  $('#bars').innerHTML = '';
  probs.forEach((p, d) => {
    const cls = d === label ? ' class="top"' : '';
    $('#bars').insertAdjacentHTML('beforeend', `<span${cls}>${d}</span><div><div class="bar-fill" style="width:${(p * 100).toFixed(1)}%"></div></div><span${cls}>${(p * 100).toFixed(1)}%</span>`);
  });
  $('#prediction').textContent = `It is a ${label} (${(probs[label] * 100).toFixed(1)} %), on ${state.runner.deviceType}`;
  const out = $('#result-panel').dataset;
  out.label = String(label);
  out.probabilities = JSON.stringify(Array.from(probs));
  out.pixels = JSON.stringify(Array.from(pixels));
  if (state.selected >= 0) {
    const s = state.samples[state.selected];
    const diff = Math.max(...s.sklearnProbabilities.map((p, i) => Math.abs(p - probs[i])));
    $('#compare').textContent = `True label ${s.label}; scikit-learn predicts ${s.sklearnLabel}; `
      + `largest difference from scikit-learn's probabilities: ${diff.toExponential(2)}`;
    out.maxDiff = String(diff);
  } else {
    $('#compare').textContent = 'A drawn digit: no reference answer.';
    delete out.maxDiff;
  }
  status.done(`Classified in ${fmtMs(ms)} (dispatch + read); graph built in ${fmtMs(state.runner.buildMs)}`);
}

function select(i) {
  state.selected = i;
  document.querySelectorAll('#samples button').forEach((b, j) => b.setAttribute('aria-pressed', String(j === i)));
  const s = state.samples[i];
  const pad = $('#pad');
  const g = pad.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, pad.width, pad.height);
  return classify(Float32Array.from(s.image));
}

function setUpPad() {
  const pad = $('#pad');
  const g = pad.getContext('2d', { willReadFrequently: true });
  const clear = () => { g.fillStyle = '#fff'; g.fillRect(0, 0, pad.width, pad.height); };
  clear();
  let last = null;
  const at = (ev) => {
    const r = pad.getBoundingClientRect();
    return [(ev.clientX - r.left) * pad.width / r.width, (ev.clientY - r.top) * pad.height / r.height];
  };
  pad.addEventListener('pointerdown', (ev) => {
    if (state.selected >= 0) { state.selected = -1; clear(); document.querySelectorAll('#samples button').forEach((b) => b.setAttribute('aria-pressed', 'false')); }
    last = at(ev);
    pad.setPointerCapture(ev.pointerId);
  });
  pad.addEventListener('pointermove', (ev) => {
    if (!last) return;
    const p = at(ev);
    g.strokeStyle = '#000';
    g.lineWidth = 18;
    g.lineCap = 'round';
    g.beginPath();
    g.moveTo(...last);
    g.lineTo(...p);
    g.stroke();
    last = p;
  });
  const end = () => { if (last) { last = null; classify(padToPixels(pad)); } };
  pad.addEventListener('pointerup', end);
  pad.addEventListener('pointercancel', end);
  $('#clear').addEventListener('click', () => { state.selected = -1; clear(); classify(new Float32Array(64)); });
}

async function main() {
  requirePolyfill();
  status.show('Loading the trained weights…');
  state.model = await loadModel();
  state.samples = state.model.samples;
  $('#about').textContent = `${state.model.model}, trained at build time with scikit-learn ${state.model.sklearn}; `
    + `held-out accuracy ${(state.model.accuracy * 100).toFixed(1)} % on ${state.model.testCount} digits.`;
  $('#code').textContent = buildDigitsGraph.toString();
  state.samples.forEach((s, i) => {
    const b = document.createElement('button');
    b.title = `test digit, true label ${s.label}, scikit-learn says ${s.sklearnLabel}`;
    b.setAttribute('aria-pressed', 'false');
    if (s.label !== s.sklearnLabel) b.className = 'miss';
    const c = Object.assign(document.createElement('canvas'), { width: 8, height: 8 });
    paint(c, s.image);
    b.append(c, document.createTextNode(String(s.label)));
    b.addEventListener('click', () => select(i));
    $('#samples').append(b);
  });
  $('#device').addEventListener('change', () => {
    state.device = $('#device').value;
    classify(state.selected >= 0 ? Float32Array.from(state.samples[state.selected].image) : padToPixels($('#pad')));
  });
  setUpPad();
  await select(0);
}

main().catch((e) => { status.fail(); showError(errorBox, e, e && e.name === 'ModelMissing' ? 'The digit classifier is missing' : 'The page could not start'); });
