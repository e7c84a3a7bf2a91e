import { MODELS, createClassifier, loadLabels, topK } from './lib/models.js';
import { imageToTensor } from './lib/image.js';
import { resolveWeights } from './lib/weights.js';
import { $, requirePolyfill, Status, followEngineProgress, fmtMs, showError, clearError, catchGlobalErrors, carryQuery, topFiveList } from './lib/ui.js';

const cfg = self.GALLERY_CONFIG;
const status = new Status($('#status'));
const errorBox = $('#error');
catchGlobalErrors(errorBox);
carryQuery();

const q = new URLSearchParams(location.search);
if (MODELS[q.get('model')]) $('#model').value = q.get('model');
if (['cpu', 'gpu', 'npu'].includes(q.get('device'))) $(`input[name=device][value=${q.get('device')}]`).checked = true;
$('#runs').value = cfg.runs;
$('#fast').textContent = cfg.fastPaths ? 'on' : 'off (?fast=0)';
$('#weights-base').textContent = cfg.weightsMode === 'public' ? 'the public copy' : cfg.weightsBase;

let uploaded = null;       // {name, blob}
let busy = false;
const classifiers = new Map();  // `${model}/${device}` -> classifier

const device = () => $('input[name=device]:checked').value;

function setTiming(k, text) { $(`#timings tr[data-k=${k}] td.num`).textContent = text; }

function syncNotice() { $('#latency-note').hidden = !MODELS[$('#model').value].latencyOnly; }
$('#model').addEventListener('change', syncNotice);
syncNotice();

function useFile(file) {
  if (!file) return;
  if (!/^image\//.test(file.type)) {
    showError(errorBox, new TypeError(`"${file.name}" is not an image (${file.type || 'unknown type'})`), 'Cannot use this file');
    return;
  }
  uploaded = { name: file.name, blob: file };
  const opt = $('#sample option[value=""]');
  opt.hidden = false;
  opt.textContent = `Uploaded: ${file.name}`;
  $('#sample').value = '';
  run();
}
$('#file').addEventListener('change', (e) => useFile(e.target.files[0]));
const drop = $('#drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); useFile(e.dataTransfer.files[0]); });

// Which backend ran the graph: the gpu device is WebGPU only where an adapter exists;
// elsewhere (or for a graph with an op the GPU kernels lack) it is the cpu fallback, with the reason.
// A context in the polyfill's timeline worker (the default in a window) answers with a promise.
async function backendOf(context) {
  const b = webnnPolyfill.engineStats.kernels.backend ? await webnnPolyfill.engineStats.kernels.backend(context) : null;
  if (!b || b.backend !== 'webgpu') return { kind: 'cpu', text: 'cpu kernels' };
  if (!b.webgpu) return { kind: 'cpu-fallback', text: `cpu fallback: ${b.reason}` };
  if (b.partitions.length) return { kind: 'cpu-fallback', text: `cpu fallback: ${b.partitions[b.partitions.length - 1].reason}` };
  return { kind: 'webgpu', text: `WebGPU on ${b.adapter}` };
}

// The device switch says what each device last ran on and how long it took.
const ranOn = {};  // device -> {backend, medianMs, model}
function showDeviceRun() {
  const r = ranOn[device()];
  const out = $('#device-ran');
  out.textContent = r ? `${device()} ran ${r.model} on ${r.backend.text} · median ${fmtMs(r.medianMs)} per inference` : `${device()}: not run yet`;
  out.dataset.backend = r ? r.backend.kind : '';
}
for (const radio of document.querySelectorAll('input[name=device]')) radio.addEventListener('change', showDeviceRun);
showDeviceRun();

async function imageBlob(source) {
  const sample = $('#sample').value;
  if (!sample && uploaded) return uploaded;
  const r = await source.fetch(sample);
  return { name: sample, blob: await r.blob() };
}

async function run() {
  if (busy) return;
  busy = true;
  $('#go').disabled = true;
  clearError(errorBox);
  const modelId = $('#model').value;
  const model = MODELS[modelId];
  const dev = device();
  const runs = Math.max(1, Math.min(200, parseInt($('#runs').value, 10) || cfg.runs));
  try {
    requirePolyfill();
    status.show('Finding the weights…');
    const source = await resolveWeights(cfg, model.probe);
    $('#weights-base').textContent = source.describe();
    document.body.dataset.weights = source.kind;
    status.show('Reading the image…');
    const { name, blob } = await imageBlob(source);
    let bitmap;
    try {
      bitmap = await createImageBitmap(blob);
    } catch (e) {
      throw new TypeError(`could not decode the image "${name}" (${e.message})`);
    }
    $('#preview').getContext('2d').drawImage(bitmap, 0, 0, 224, 224);
    $('#image-name').textContent = `${name} (${bitmap.width}×${bitmap.height}, resized to 224×224)`;
    const input = await imageToTensor(bitmap);

    const key = `${modelId}/${dev}`;
    let c = classifiers.get(key);
    const fresh = !c;
    if (!c) {
      const engineStarted = webnnPolyfill.engineStats.startMs != null;
      let unfollow = () => {};
      c = await createClassifier(modelId, {
        deviceType: dev, weights: source,
        onStage: (stage, f) => {
          if (stage !== 'engine') unfollow();
          if (stage === 'engine') {
            if (engineStarted) status.show(`Creating a ${dev} context…`);
            else unfollow = followEngineProgress(status);  // the polyfill's load progress on the bar
          } else if (stage === 'weights') status.show(`Loading ${model.title} weights… ${Math.round(f * 100)} %`, f);
          else if (stage === 'build') status.show('Building the graph…');
        },
      }).finally(() => unfollow());
      classifiers.set(key, c);
    }
    setTiming('engine', fmtMs(webnnPolyfill.engineStats.startMs));
    setTiming('context', fresh ? fmtMs(c.timings.contextMs) : 'reused');
    setTiming('weights', !fresh ? 'reused' : c.timings.weightsCached ? 'already loaded' : fmtMs(c.timings.weightsMs));
    setTiming('build', fresh ? fmtMs(c.timings.buildMs) : 'reused');
    status.timing('Running the first inference…');
    const labels = await loadLabels(source);
    // Let the status paint before the (synchronous) dispatch blocks the thread.
    await new Promise((r) => setTimeout(r, 30));
    const r = await c.run(input, runs, (i, n) => status.timing(`Repeating inference ${i}/${n}…`, i / n));
    setTiming('first', fmtMs(r.firstMs));
    setTiming('median', `${fmtMs(r.medianMs)} (n=${runs})`);
    setTiming('min', fmtMs(r.minMs));
    const top = topK(r.probabilities, labels, 5);
    topFiveList($('#top5'), top, model.latencyOnly);
    const backend = await backendOf(c.context);
    ranOn[dev] = { backend, medianMs: r.medianMs, model: model.title };
    showDeviceRun();
    document.body.dataset.backend = backend.kind;
    setTiming('backend', backend.text);
    $('#result-model').textContent = `· ${model.title} on ${dev} (${backend.text})${model.latencyOnly ? ' · synthesized logits, labels meaningless' : ''}`;
    document.body.dataset.model = modelId;
    document.body.dataset.top1 = top[0].label;
    status.done(`${model.title} on ${dev}: top-1 “${top[0].label}”${model.latencyOnly ? ' (meaningless: synthesized logits)' : ''}, median ${fmtMs(r.medianMs)} per inference`);
  } catch (e) {
    status.fail();
    if (e && e.offline) document.body.dataset.offline = 'true';
    showError(errorBox, e, e && e.name === 'WeightsUnavailable' ? `${model.title} needs its weights` : `Classification with ${model.title} failed`);
  } finally {
    busy = false;
    $('#go').disabled = false;
  }
}

$('#go').addEventListener('click', run);
$('#sample').addEventListener('change', () => { if ($('#sample').value) run(); });
run();
