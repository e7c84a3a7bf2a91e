// Gallery configuration. A classic script: load it BEFORE /dist/webnn-polyfill.js
// (in pages and in workers via importScripts) so that the polyfill sees
// WEBNN_POLYFILL_CONFIG.
//
// A deployed gallery edits DEFAULTS (e.g. weightsBase: 'https://example.org/webnn-models/')
// or passes query parameters, which win over the defaults:
//   ?weights=URL   base URL of the model files, laid out like shared/models:
//                  URL/squeezenet1.0_nhwc/weights/*.npy, URL/mobilenetv2_nhwc/weights/*.npy,
//                  URL/labels1001.txt, URL/test.jpg. Cross-origin hosts must send CORS
//                  headers (the gallery is cross-origin isolated: COEP require-corp).
//   ?fast=0        run the polyfill with fastPaths:false (numpy reference kernels only)
//   ?runs=N        repeated inferences for the median (classification pages)
//   ?debug=1       polyfill debug logging
(function () {
  const DEFAULTS = {
    weightsBase: '/models/',
    polyfillUrl: '/dist/webnn-polyfill.js',
    fastPaths: true,
    runs: 10,
    debug: false,
  };
  const q = new URLSearchParams(self.location.search);
  const flag = (v, d) => (v === null ? d : !/^(0|false|no|off)$/i.test(v));
  const base = (u) => (u.endsWith('/') ? u : u + '/');
  const cfg = Object.assign({}, DEFAULTS, self.GALLERY_DEFAULTS || {});
  if (q.get('weights')) cfg.weightsBase = q.get('weights');
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
