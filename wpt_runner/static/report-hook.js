// testharnessreport.js served by wpt_runner in place of the tree's own copy.
//
// It switches testharness.js to explicit timeouts (the runner owns the
// per-file deadline and calls timeout() when it expires) unless the server
// prefixed it with `self.__wptRunnerStandardTimeouts = true` (--standard-timeouts:
// testharness's own 10 s / 60 s), and records every result on
// self.__wptRunner, which the runner polls.
(function() {
  "use strict";
  var SUBTEST = ["PASS", "FAIL", "TIMEOUT", "NOTRUN", "PRECONDITION_FAILED"];
  var HARNESS = ["OK", "ERROR", "TIMEOUT", "PRECONDITION_FAILED"];
  var state = self.__wptRunner = {
    complete: false,  // set once the completion callback ran
    status: null,     // harness status
    message: null,
    tests: null,      // all subtests, from the completion callback
    results: [],      // subtests as they finish (kept if the page never completes)
    backend: null     // where the polyfill's gpu-context graphs ran (see gpuGraphs)
  };
  function text(v) {
    return v === undefined || v === null ? null : String(v);
  }
  function convert(t) {
    return {
      name: text(t.name),
      status: SUBTEST[t.status] || text(t.status),
      message: text(t.message)
    };
  }
  if (typeof setup === "function") {
    // Draw results into the page only when a person is looking at it.
    setup({explicit_timeout: self.__wptRunnerStandardTimeouts !== true, output: !navigator.webdriver});
  }
  add_result_callback(function(t) {
    state.results.push(convert(t));
  });
  // The polyfill's tally of this global's gpu-context graphs (engineStats.webgpu):
  // built and dispatched on the WebGPU backend vs on its cpu fallback, with reasons.
  // In a window whose tests ran in a dedicated worker: what the worker posted
  // (wrappers.WORKER_BACKEND_JS); null without the polyfill, or from other workers.
  function gpuGraphs() {
    try {
      var stats = self.webnnPolyfill && self.webnnPolyfill.engineStats.webgpu;
      if (!stats || !stats.graphs) return self.__wptRunnerWorkerBackend || null;
      var g = stats.graphs, reasons = {};
      for (var k in g.reasons) reasons[k] = g.reasons[k];
      return {available: stats.available, adapter: stats.adapter, reason: stats.reason,
              gpu: g.gpu, cpu: g.cpu, dispatchesGpu: g.dispatchesGpu, dispatchesCpu: g.dispatchesCpu,
              reasons: reasons};
    } catch (e) {
      return null;
    }
  }
  add_completion_callback(function(tests, harness_status) {
    state.backend = gpuGraphs();
    state.tests = Array.prototype.map.call(tests, convert);
    state.status = HARNESS[harness_status.status] || text(harness_status.status);
    state.message = text(harness_status.message);
    state.complete = true;
  });
})();
