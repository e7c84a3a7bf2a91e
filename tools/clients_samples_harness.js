// Injected by tools/clients_samples.py into every webnn-samples page, after the polyfill
// script and before the sample's own scripts. It observes the WebNN calls the sample makes
// (no op semantics: it copies what readTensor returns, for the driver to compare), and,
// when the driver asks with ?harness-layout=nchw|nhwc, reports that layout as the context's
// preferredInputLayout: the samples pick NCHW or NHWC models from it, and the polyfill
// reports one (NCHW, docs/clients.md), so this is how the driver reaches both.
(() => {
  const query = new URLSearchParams(location.search);
  const harness = { reads: [], dispatches: 0, contexts: [], keep: 4 };
  self.__samplesHarness = harness;
  if (typeof MLContext === 'undefined') {
    harness.error = 'the WebNN polyfill did not install (no MLContext)';
    return;
  }
  const proto = MLContext.prototype;
  const readTensor = proto.readTensor;
  const copy = (r, out) => {
    if (out === undefined) return new Uint8Array(r.slice(0));
    const view = ArrayBuffer.isView(out) ? out : new Uint8Array(out);
    return new Uint8Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
  };
  proto.readTensor = async function (tensor, out) {
    const result = await readTensor.apply(this, arguments);
    harness.reads.push({ shape: Array.from(tensor.shape), dataType: tensor.dataType, bytes: copy(result, out), at: performance.now() });
    if (harness.reads.length > harness.keep) harness.reads.shift();
    return result;
  };
  const dispatch = proto.dispatch;
  proto.dispatch = function () {
    harness.dispatches++;
    return dispatch.apply(this, arguments);
  };
  const layout = query.get('harness-layout');
  if (layout) {
    const limits = proto.opSupportLimits;
    proto.opSupportLimits = function () {
      return Object.assign(limits.apply(this, arguments), { preferredInputLayout: layout });
    };
  }
})();
