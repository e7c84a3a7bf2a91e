// Where the gallery's model files come from: the server's /models/ (../shared/models or
// $WEBNN_MODELS, see tools/serve.py), a URL the user gave, or the public copy of the same
// files (config.js publicWeights). A source maps a path laid out like shared/models
// ('squeezenet1.0_nhwc/weights/', 'labels1001.txt', 'test.jpg') to a URL, and turns a
// failed download into an error that says what is missing and how to get it.

const HOW_TO_GET = 'To run without the network: get the files of github.com/webmachinelearning/test-data '
  + '(models/squeezenet1.0_nhwc, models/mobilenetv2_nhwc) and labels1001.txt and test.jpg of '
  + 'webnn-samples/image_classification into one folder laid out like shared/models, then start the '
  + 'gallery with WEBNN_MODELS=that-folder ./dev serve (or put it at ../shared/models), or pass ?weights=URL.';

export class WeightsSource {
  constructor(kind, base, publicWeights) {
    this.kind = kind;        // 'local' | 'public'
    this.base = base;
    this.publicWeights = publicWeights;
  }

  url(rel) {
    if (this.kind === 'local') return this.base + rel;
    return this.publicWeights.files[rel] || this.publicWeights.models + rel;
  }

  describe() {
    return this.kind === 'local' ? this.base : `the public copy (${this.publicWeights.models} and webnn-samples)`;
  }

  // A download of `url` failed with `error`: say why and what to do, on the error itself.
  explain(error, url) {
    const message = (error && error.message) || String(error);
    const network = error instanceof TypeError && /fetch|network|load failed/i.test(message);
    let text;
    if (this.kind === 'public' && network) {
      text = `could not download ${url}: this computer looks offline (or the host is blocked). `
        + 'This server has no local copy of the weights at /models/, so the gallery tried the public one.';
    } else if (network) {
      text = `could not download ${url} (${message}). If the weights are on another origin it must send CORS headers (this page is cross-origin isolated).`;
    } else {
      text = /HTTP 404/.test(message) ? `${url} is missing (HTTP 404) from ${this.describe()}` : message;
    }
    const e = new Error(text, { cause: error });
    e.name = 'WeightsUnavailable';
    e.hint = HOW_TO_GET;
    e.offline = this.kind === 'public' && network;
    return e;
  }

  async fetch(rel) {
    const url = this.url(rel);
    let r;
    try {
      r = await fetch(url);
    } catch (e) {
      throw this.explain(e, url);
    }
    if (!r.ok) throw this.explain(new Error(`${url}: HTTP ${r.status}`), url);
    return r;
  }
}

const probes = new Map();

// The source for files under `probeRel` (e.g. 'squeezenet1.0_nhwc/weights/conv1_kernel.npy'):
// in 'auto' mode /models/ wins when it has that file, else the public copy.
export function resolveWeights(cfg, probeRel = 'labels1001.txt') {
  if (cfg.weightsMode === 'local') return Promise.resolve(new WeightsSource('local', cfg.weightsBase, cfg.publicWeights));
  if (cfg.weightsMode === 'public') return Promise.resolve(new WeightsSource('public', cfg.weightsBase, cfg.publicWeights));
  const key = cfg.weightsBase + probeRel;
  if (!probes.has(key)) {
    probes.set(key, fetch(key, { method: 'HEAD' }).then((r) => r.ok, () => false).then((local) =>
      new WeightsSource(local ? 'local' : 'public', cfg.weightsBase, cfg.publicWeights)));
  }
  return probes.get(key);
}
