// Installation: interface objects on the global and `navigator.ml`, in
// windows and in dedicated, shared and service workers ([SecureContext]).

import { POLYFILL_VERSION } from './build_info.js';
import { INTERNAL, defineAttribute } from './webidl.js';
import { CONFIG, ENGINE_STATS, IS_TIMELINE_HOST, RUNTIME_BASE } from './config.js';
import { ENGINE, engine } from './engine.js';
import { PROGRESS, PROGRESS_EVENTS, exportEngineSnapshot, prefetchRuntime } from './startup.js';
import { ML, MLContext, MLGraph, MLGraphBuilder, MLOperand, MLTensor } from './api.js';
import { exportNNEF, loadNNEF } from './nnef.js';
import { loadStableHLO } from './xla.js';
import { startTimelineHost } from './timeline_host.js';
import { prespawnTimelineWorker } from './timeline.js';

const INTERFACES = { ML, MLContext, MLGraph, MLGraphBuilder, MLOperand, MLTensor };

function navigatorPrototype() {
  if (typeof Navigator !== 'undefined' && globalThis.navigator instanceof Navigator) return Navigator.prototype;
  if (typeof WorkerNavigator !== 'undefined' && globalThis.navigator instanceof WorkerNavigator) return WorkerNavigator.prototype;
  return null;
}

function install() {
  if (!globalThis.isSecureContext) return false;
  const navProto = navigatorPrototype();
  const hasNative = !!(globalThis.navigator && 'ml' in globalThis.navigator);
  if (hasNative && !CONFIG.replaceNative) return false;
  for (const [name, cls] of Object.entries(INTERFACES)) {
    Object.defineProperty(globalThis, name, { value: cls, writable: true, enumerable: false, configurable: true });
  }
  const ml = new ML(INTERNAL);
  if (navProto) {
    const NavCtor = navProto.constructor;
    defineAttribute(navProto, 'ml', function () {
      if (!(this instanceof NavCtor)) throw new TypeError("'get ml' called on an object that is not a navigator");
      return ml;
    });
  }
  Object.defineProperty(globalThis, 'webnnPolyfill', {
    value: Object.freeze({
      version: POLYFILL_VERSION,
      config: CONFIG,
      runtimeBase: RUNTIME_BASE,
      engineStats: ENGINE_STATS,
      ready: () => engine().then(() => true),
      // Load progress: 'progress' events whose detail is {phase, loaded, total,
      // fraction} (also CONFIG.onProgress); progress() is the latest.
      addEventListener: (type, listener, options) => PROGRESS_EVENTS.addEventListener(type, listener, options),
      removeEventListener: (type, listener, options) => PROGRESS_EVENTS.removeEventListener(type, listener, options),
      progress: () => ({ ...PROGRESS }),
      // For tools/engine_snapshot.py only: a fresh engine's snapshot, gzipped.
      ...(CONFIG.snapshotTooling ? { _exportEngineSnapshot: exportEngineSnapshot } : {}),
      // The Pyodide instance, for tools and debugging (null before the engine starts).
      pyodide: () => (ENGINE ? ENGINE.pyodide : null),
      // NNEF import/export (js/src/nnef.js).
      loadNNEF: (context, source, options) => loadNNEF(context, source, options),
      exportNNEF: (graph, options) => exportNNEF(graph, options),
      // StableHLO (JAX) programs (js/src/xla.js).
      loadStableHLO: (context, text, options) => loadStableHLO(context, text, options),
    }),
    writable: false, enumerable: false, configurable: true,
  });
  return true;
}

// In the timeline worker a page started (js/src/timeline.js) this script serves that
// page's contexts; it takes the page's runtime instead of fetching its own.
if (IS_TIMELINE_HOST) startTimelineHost();
else if (install() && CONFIG.prefetch !== false) {
  prefetchRuntime();
  prespawnTimelineWorker();
}
