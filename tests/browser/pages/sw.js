// Service worker: the polyfill must be imported synchronously at the top level.
importScripts('/dist/webnn-polyfill.js', 'checks.js');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', (e) => {
  runChecks().then((r) => e.source.postMessage(r), (err) => e.source.postMessage({ error: String(err), stack: err.stack }));
});
