// The build-time snapshot whatever the connection (by default only where it pays).
self.WEBNN_POLYFILL_CONFIG = { buildSnapshot: true };
importScripts('/dist/webnn-polyfill.js', 'checks.js');
const reply = (port) => runChecks().then((r) => port.postMessage(r), (e) => port.postMessage({ error: String(e), stack: e.stack }));
if (typeof onconnect !== 'undefined' || self.constructor.name === 'SharedWorkerGlobalScope') {
  self.onconnect = (e) => reply(e.ports[0]);
} else {
  reply(self);
}
