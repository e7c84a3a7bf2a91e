// Service worker: the polyfill must be imported synchronously at the top level.
// The build-time snapshot whatever the connection (by default only where it pays).
self.WEBNN_POLYFILL_CONFIG = { buildSnapshot: true };
importScripts('/dist/webnn-polyfill.js', 'checks.js');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', (e) => {
  runChecks().then((r) => e.source.postMessage(r), (err) => e.source.postMessage({ error: String(err), stack: err.stack }));
});
