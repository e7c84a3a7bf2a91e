// Gallery configuration. A classic script: load it BEFORE /dist/webnn-polyfill.js
// (in pages and in workers via importScripts) so that the polyfill sees
// WEBNN_POLYFILL_CONFIG.
//
// A deployed gallery edits DEFAULTS (e.g. weightsBase: 'https://example.org/webnn-models/')
// or passes query parameters, which win over the defaults.
//
// Where the SqueezeNet / MobileNetV2 weights come from (web/lib/weights.js resolves it):
//   default        the server's /models/ (tools/serve.py mounts ../shared/models or
//                  $WEBNN_MODELS there) when it has the model's files, else the public copy
//                  of the same files (publicWeights: the W3C webnn-samples' test-data
//                  repository and the samples' own labels and photo).
//   ?weights=URL   only URL, laid out like shared/models:
//                  URL/squeezenet1.0_nhwc/weights/*.npy, URL/mobilenetv2_nhwc/weights/*.npy,
//                  URL/labels1001.txt, URL/test.jpg. Cross-origin hosts must send CORS
//                  headers (the gallery is cross-origin isolated: COEP require-corp).
//   ?weights=public  only the public copy (never /models/).
//   ?fast=0        run the polyfill with fastPaths:false (numpy reference kernels only)
//   ?runs=N        repeated inferences for the median (classification pages)
//   ?debug=1       polyfill debug logging
(function () {
  const DEFAULTS = {
    weightsBase: '/models/',
    // The public location of the files that ../shared/models holds (byte-identical):
    // the .npy weights of webnn-samples' test-data repository, and the labels and sample
    // photo of webnn-samples' image classification page. Both hosts send
    // Access-Control-Allow-Origin: *, which a cross-origin isolated page needs.
    publicWeights: {
      models: 'https://raw.githubusercontent.com/webmachinelearning/test-data/main/models/',
      files: {
        'labels1001.txt': 'https://raw.githubusercontent.com/webmachinelearning/webnn-samples/master/image_classification/labels/labels1001.txt',
        'test.jpg': 'https://raw.githubusercontent.com/webmachinelearning/webnn-samples/master/image_classification/images/test.jpg',
      },
    },
    polyfillUrl: '/dist/webnn-polyfill.js',
    fastPaths: true,
    runs: 10,
    debug: false,
  };
  const q = new URLSearchParams(self.location.search);
  const flag = (v, d) => (v === null ? d : !/^(0|false|no|off)$/i.test(v));
  const base = (u) => (u.endsWith('/') ? u : u + '/');
  const cfg = Object.assign({}, DEFAULTS, self.GALLERY_DEFAULTS || {});
  // 'auto': /models/ when it has the files, else the public copy; 'local': only weightsBase
  // (given by ?weights=URL or a deployment's GALLERY_DEFAULTS); 'public': only the public copy.
  const w = q.get('weights');
  if (w === 'public') cfg.weightsMode = 'public';
  else if (w) { cfg.weightsBase = w; cfg.weightsMode = 'local'; }
  else cfg.weightsMode = cfg.weightsMode || (self.GALLERY_DEFAULTS && self.GALLERY_DEFAULTS.weightsBase ? 'local' : 'auto');
  cfg.weightsBase = new URL(base(cfg.weightsBase), self.location.href).href;
  cfg.fastPaths = flag(q.get('fast'), cfg.fastPaths);
  cfg.debug = flag(q.get('debug'), cfg.debug);
  const runs = parseInt(q.get('runs'), 10);
  if (runs > 0) cfg.runs = Math.min(runs, 1000);
  // The query string to hand on to links and workers (only what differs from the defaults).
  const keep = new URLSearchParams();
  for (const k of ['weights', 'fast', 'runs', 'debug']) if (q.get(k) !== null) keep.set(k, q.get(k));
  cfg.query = keep.toString() ? '?' + keep.toString() : '';
  self.GALLERY_CONFIG = Object.freeze(cfg);
  self.WEBNN_POLYFILL_CONFIG = Object.assign({}, self.WEBNN_POLYFILL_CONFIG || {},
    { fastPaths: cfg.fastPaths, debug: cfg.debug });
})();
