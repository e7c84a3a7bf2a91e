// The image classifiers of the gallery and the benchmark, and the timed path
// through the WebNN API that both use: context -> weights -> build -> infer.
import { loadSqueezeNetWeights, buildSqueezeNet } from './squeezenet.js';
import { loadMobileNetV2Weights, buildMobileNetV2 } from './mobilenetv2.js';
import { fetchLabels, topK } from './image.js';
import { WeightsSource } from './weights.js';

export const MODELS = {
  squeezenet: {
    id: 'squeezenet', title: 'SqueezeNet 1.0', dir: 'squeezenet1.0_nhwc/weights/',
    probe: 'squeezenet1.0_nhwc/weights/conv1_kernel.npy',  // present when the folder has the model
    load: loadSqueezeNetWeights, build: buildSqueezeNet, latencyOnly: false,
    note: 'SqueezeNet 1.0 (TF-Lite weights, NHWC): 26 convolutions, 5 MB of weights.',
  },
  mobilenetv2: {
    id: 'mobilenetv2', title: 'MobileNetV2 (latency only)', dir: 'mobilenetv2_nhwc/weights/',
    probe: 'mobilenetv2_nhwc/weights/Const_100.npy',
    load: loadMobileNetV2Weights, build: buildMobileNetV2, latencyOnly: true,
    note: 'MobileNetV2 1.0/224 (NHWC): 52 convolutions incl. 17 depthwise, 8.8 MB of weights. '
      + 'The logits weights are not distributed, so they are synthesized (seeded random): '
      + 'timings are real, the labels are meaningless.',
  },
};

export const INPUT_SHAPE = [1, 224, 224, 3];
export const OUTPUT_SHAPE = [1, 1001];

const now = () => performance.now();

// A fresh task (not a timer): readTensor() settles through setTimeout, and
// timers chained from timer tasks are clamped to 4 ms after a few levels;
// hopping through a message task between runs keeps that out of the timings.
export function yieldTask() {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => { ch.port1.close(); resolve(); };
    ch.port2.postMessage(0);
  });
}

// Untimed runs before a timing loop, at least 1 and until `ms` have passed:
// engines run wasm on a baseline tier first and tier hot code up in the
// background, so the first runs measure the compiler, not the model.
export async function warmUp(runOnce, ms) {
  if (!(ms > 0)) return 0;
  const until = now() + ms;
  let n = 0;
  while (n < 1 || now() < until) { await yieldTask(); await runOnce(); n++; }
  return n;
}

export function median(values) {
  const s = values.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// A WeightsSource (lib/weights.js), or a base URL laid out like shared/models.
const asSource = (weights) => (weights instanceof WeightsSource ? weights : new WeightsSource('local', weights));

// Labels are shared by both models; cached per URL.
const labelCache = new Map();
export function loadLabels(weights) {
  const source = asSource(weights);
  const url = source.url('labels1001.txt');
  if (!labelCache.has(url)) {
    labelCache.set(url, fetchLabels(url).catch((e) => { labelCache.delete(url); throw source.explain(e, url); }));
  }
  return labelCache.get(url);
}

// Weights are cached per model (switching device rebuilds the graph, not the download).
const weightCache = new Map();
function loadWeights(model, weights, onProgress) {
  const source = asSource(weights);
  const url = source.url(model.dir);
  const cached = weightCache.has(url);
  if (!cached) {
    weightCache.set(url, model.load(url, onProgress).catch((e) => { weightCache.delete(url); throw source.explain(e, url); }));
  } else {
    onProgress(1);
  }
  return weightCache.get(url).then((weights) => ({ weights, cached }));
}

// Create a context, load the weights, build the graph. Timings in ms:
// context (engine start on first use), weights, build. onStage(stage, fraction).
// weights: a WeightsSource (lib/weights.js) or weightsBase: a base URL laid out like shared/models.
export async function createClassifier(modelId, { deviceType = 'cpu', weightsBase = '/models/', weights: source = null, onStage = () => {} } = {}) {
  const model = MODELS[modelId];
  if (!model) throw new Error(`unknown model "${modelId}"`);
  if (!globalThis.navigator || !navigator.ml) throw new Error('navigator.ml is missing: the WebNN polyfill did not install (is this a secure context?)');
  const timings = {};
  let t = now();
  onStage('engine', 0);
  const context = await navigator.ml.createContext({ deviceType });
  timings.contextMs = now() - t;
  onStage('weights', 0);
  t = now();
  const { weights, cached } = await loadWeights(model, source || weightsBase, (f) => onStage('weights', f));
  timings.weightsMs = now() - t;
  timings.weightsCached = cached;
  onStage('build', 0);
  t = now();
  const builder = new MLGraphBuilder(context);
  const graph = await builder.build({ output: model.build(builder, weights) });
  timings.buildMs = now() - t;
  const tIn = await context.createTensor({ dataType: 'float32', shape: INPUT_SHAPE, writable: true });
  const tOut = await context.createTensor({ dataType: 'float32', shape: OUTPUT_SHAPE, readable: true });
  onStage('ready', 1);

  // One inference: write the input, dispatch, read the probabilities back.
  async function infer(input) {
    context.writeTensor(tIn, input);
    context.dispatch(graph, { input: tIn }, { output: tOut });
    return new Float32Array(await context.readTensor(tOut));
  }

  return {
    model, context, graph, timings, infer,
    // First inference + `runs` more (fewer if they take over budgetMs, but at
    // least 3); returns {probabilities, firstMs, medianMs, minMs, runsMs}.
    // warmupMs > 0: untimed runs (at least 1) after the first, before timing.
    async run(input, runs = 10, onRun = () => {}, budgetMs = Infinity, warmupMs = 0) {
      let t0 = now();
      const probabilities = await infer(input);
      const firstMs = now() - t0;
      await warmUp(() => infer(input), warmupMs);
      const runsMs = [];
      const tStart = now();
      for (let i = 0; i < runs && !(i >= Math.min(3, runs) && now() - tStart > budgetMs); i++) {
        await yieldTask();
        t0 = now();
        await infer(input);
        runsMs.push(now() - t0);
        onRun(i + 1, runs);
      }
      return {
        probabilities, firstMs, runsMs,
        medianMs: runsMs.length ? median(runsMs) : firstMs,
        minMs: runsMs.length ? Math.min(...runsMs) : firstMs,
      };
    },
    destroy() { try { graph.destroy(); tIn.destroy(); tOut.destroy(); context.destroy(); } catch (e) { /* already gone */ } },
  };
}

export { topK };
