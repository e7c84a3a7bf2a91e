// The gallery's ONNX Runtime Web card: onnxruntime-web runs the digit classifier's ONNX export
// through its WebNN execution provider (on this polyfill) and through its own wasm kernels.
// Which EP really ran is told by counting the WebNN graphs ORT built and dispatched: the page
// instruments its own view of the API (the polyfill itself patches nothing).
import { $, catchGlobalErrors, carryQuery, showError, fmtMs, loadScript } from './lib/ui.js';

const ORT_URL = '/ort/ort.min.js';  // tools/serve.py mounts the onnxruntime-web that ./dev serve installed
const MODEL_URL = '/generated/digits-mlp.onnx';
const DATA_URL = '/generated/digits-mlp.json';

const counts = { builds: 0, dispatches: 0, computes: 0 };
function count(proto, name, key) {
  const original = proto[name];
  Object.defineProperty(proto, name, {
    configurable: true, writable: true, enumerable: false,
    value: function (...args) { counts[key] += 1; return original.apply(this, args); },
  });
}

async function prerequisites() {
  const missing = [];
  const [model, data] = await Promise.all([fetch(MODEL_URL), fetch(DATA_URL)]);
  if (!model.ok || !data.ok) {
    missing.push('the digit model is not built: run ./dev serve (tools/build.py trains it; the ONNX export needs the onnx package from requirements-dev.txt)');
  }
  try {
    await loadScript(ORT_URL);
  } catch {
    missing.push('onnxruntime-web is not installed here: ./dev serve installs it from npm into .cache/node-ort/ (the npm registry must be reachable once), or run ./dev clients ort');
  }
  if (missing.length) throw new Error(missing.join('; '));
  return { model: new Uint8Array(await model.arrayBuffer()), data: await data.json() };
}

const argmax = (p) => p.reduce((best, v, i) => (v > p[best] ? i : best), 0);

async function runAll(ort, model, samples, options) {
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, options);
  const createMs = performance.now() - t0;
  const out = [];
  const t1 = performance.now();
  for (const s of samples) {
    const pixels = new ort.Tensor('float32', Float32Array.from(s.image), [1, 64]);
    const r = await session.run({ pixels });
    out.push(Array.from(r.probabilities.data));
  }
  const runMs = (performance.now() - t1) / samples.length;
  await session.release();
  return { probabilities: out, createMs, runMs };
}

async function run(ort, model, data, deviceType) {
  const samples = data.samples;
  const before = { ...counts };
  const webnn = await runAll(ort, model, samples, { executionProviders: [{ name: 'webnn', deviceType }] });
  const built = counts.builds - before.builds;
  const dispatched = counts.dispatches + counts.computes - before.dispatches - before.computes;
  const wasm = await runAll(ort, model, samples, { executionProviders: ['wasm'] });
  const rows = samples.map((s, i) => ({
    label: s.label, sklearn: s.sklearnLabel, webnn: argmax(webnn.probabilities[i]), wasm: argmax(wasm.probabilities[i]),
    maxDiff: Math.max(...webnn.probabilities[i].map((v, k) => Math.abs(v - s.sklearnProbabilities[k]))),
  }));
  return {
    deviceType, ranOn: built > 0 && dispatched >= samples.length ? 'webnn' : 'wasm', builds: built, dispatches: dispatched,
    createMs: { webnn: webnn.createMs, wasm: wasm.createMs }, runMs: { webnn: webnn.runMs, wasm: wasm.runMs }, rows,
    webnnProbabilities: webnn.probabilities,
  };
}

function show(r) {
  const agree = r.rows.filter((x) => x.webnn === x.sklearn).length;
  $('#verdict').textContent = r.ranOn === 'webnn'
    ? `Ran on the WebNN EP (${r.deviceType}): ORT built ${r.builds} WebNN graph(s) and dispatched ${r.dispatches} time(s). `
      + `${agree}/${r.rows.length} labels equal scikit-learn's; session create ${fmtMs(r.createMs.webnn)} (wasm EP ${fmtMs(r.createMs.wasm)}), `
      + `${fmtMs(r.runMs.webnn)} per run (wasm EP ${fmtMs(r.runMs.wasm)}).`
    : `ORT did not run the model on WebNN (no WebNN graph built): it fell back to its wasm kernels.`;
  const body = $('#table tbody');
  body.textContent = '';
  r.rows.forEach((x, i) => {
    const tr = document.createElement('tr');
    const cells = [i, x.label, x.sklearn, x.webnn, x.wasm, x.maxDiff.toExponential(1)];
    cells.forEach((v, k) => {
      const td = document.createElement('td');
      td.textContent = String(v);
      if ((k === 3 && x.webnn !== x.sklearn) || (k === 1 && x.label !== x.sklearn)) td.className = 'miss';
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
  $('#table').hidden = false;
}

async function main() {
  catchGlobalErrors($('#error'));
  carryQuery();
  const status = $('#status');
  try {
    count(MLGraphBuilder.prototype, 'build', 'builds');
    count(MLContext.prototype, 'dispatch', 'dispatches');
    count(MLContext.prototype, 'compute', 'computes');
    status.textContent = 'Loading onnxruntime-web and the model…';
    const { model, data } = await prerequisites();
    const ort = globalThis.ort;
    ort.env.wasm.wasmPaths = '/ort/';
    const go = async () => {
      document.body.dataset.state = 'busy';
      status.textContent = 'Running…';
      try {
        const r = await run(ort, model, data, $('#device').value);
        show(r);
        window.result = r;
        status.textContent = `onnxruntime-web ${ort.env.versions?.web || ''}`;
        document.body.dataset.state = 'done';
      } catch (e) {
        showError($('#error'), e, 'The run failed');
        window.result = { error: String(e && e.message || e) };
        document.body.dataset.state = 'error';
      }
    };
    $('#form').addEventListener('submit', (e) => { e.preventDefault(); go(); });
    const device = new URLSearchParams(location.search).get('device');
    if (device) $('#device').value = device;
    await go();
  } catch (e) {
    showError($('#error'), e, 'This card cannot run here');
    window.result = { unavailable: String(e && e.message || e) };
    status.textContent = '';
    document.body.dataset.state = 'error';
  }
}
main();
