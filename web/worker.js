// A classic dedicated worker: the polyfill is imported here, not in the page.
// The query string (?weights=…&fast=0) arrives in self.location.search.
importScripts('config.js');
importScripts(self.GALLERY_CONFIG.polyfillUrl);

const cfg = self.GALLERY_CONFIG;
const post = (m) => self.postMessage(m);
post({
  type: 'scope', global: self.constructor.name, ml: !!(self.navigator && self.navigator.ml),
  document: typeof document !== 'undefined', isolated: !!self.crossOriginIsolated,
});

let classifierPromise = null;
let input = null;
let queue = Promise.resolve();

async function classify() {
  const [{ MODELS, createClassifier, loadLabels, topK }, { imageToTensor }, { resolveWeights }] = await Promise.all([
    import('./lib/models.js'), import('./lib/image.js'), import('./lib/weights.js')]);
  const source = await resolveWeights(cfg, MODELS.squeezenet.probe);
  let fresh = false;
  if (!classifierPromise) {
    fresh = true;
    classifierPromise = createClassifier('squeezenet', {
      weights: source,
      onStage: (stage, f) => {
        if (stage === 'engine') {
          // The polyfill's load progress in this worker, on the page's bar.
          const onProgress = ({ detail: p }) => {
            post({ type: 'stage', text: `Worker: starting the WebNN engine (${p.phase})…`, fraction: p.fraction });
            if (p.phase === 'ready') self.webnnPolyfill.removeEventListener('progress', onProgress);
          };
          self.webnnPolyfill.addEventListener('progress', onProgress);
          onProgress({ detail: self.webnnPolyfill.progress() });
        }
        else if (stage === 'weights') post({ type: 'stage', text: `Worker: loading SqueezeNet weights… ${Math.round(f * 100)} %`, fraction: f });
        else if (stage === 'build') post({ type: 'stage', text: 'Worker: building the graph…' });
      },
    }).catch((e) => { classifierPromise = null; throw e; });
  }
  const c = await classifierPromise;
  if (!input) input = await imageToTensor(await (await source.fetch('test.jpg')).blob());  // OffscreenCanvas in workers
  const labels = await loadLabels(source);
  post({ type: 'stage', phase: 'infer', text: 'Worker: running inference…' });
  const runs = Math.min(cfg.runs, 10);
  const r = await c.run(input, runs, (i, n) => post({ type: 'stage', phase: 'infer', text: `Worker: repeating inference ${i}/${n}…`, fraction: i / n }));
  post({
    type: 'result', top5: topK(r.probabilities, labels, 5), runs,
    engineMs: self.webnnPolyfill.engineStats.startMs,
    weightsMs: fresh ? c.timings.weightsMs : null, buildMs: fresh ? c.timings.buildMs : null,
    firstMs: r.firstMs, medianMs: r.medianMs,
  });
}

self.onmessage = ({ data }) => {
  if (data && data.type === 'run') {
    queue = queue.then(classify).catch((e) => post({ type: 'error', name: (e && e.name) || 'Error', message: (e && e.message) || String(e), hint: e && e.hint }));
  }
};
