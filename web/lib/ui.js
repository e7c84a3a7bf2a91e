// Small UI helpers shared by the gallery pages: a status line with progress
// and elapsed time, readable errors, number formatting, and the readiness hooks
// the browser tests wait on (document.body.dataset.state = busy | done | error,
// document.body.dataset.ready = 'true' once the first run is over).

export const $ = (sel, root = document) => root.querySelector(sel);

export function fmtMs(ms) {
  if (ms == null || !isFinite(ms)) return '–';
  if (ms >= 10000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

// The status line: <div class="status" id="status"><span class="spinner"></span>
// <span class="stage"></span><progress></progress><span class="elapsed"></span></div>
export class Status {
  constructor(el) {
    this.el = el;
    this.el.setAttribute('role', 'status');
    this.el.setAttribute('aria-live', 'polite');
    this.el.innerHTML = '<span class="spinner" aria-hidden="true"></span><span class="stage"></span>'
      + '<progress max="1"></progress><span class="elapsed"></span>';
    this.stage = this.el.querySelector('.stage');
    this.bar = this.el.querySelector('progress');
    this.elapsed = this.el.querySelector('.elapsed');
    this.spinner = this.el.querySelector('.spinner');
    this.timer = null;
  }

  // fraction: null/undefined = indeterminate
  show(text, fraction) {
    this.el.classList.remove('timing');
    if (!this.timer) {
      this.t0 = performance.now();
      this.timer = setInterval(() => this.tick(), 200);
      document.body.dataset.state = 'busy';
    }
    this.el.hidden = false;
    this.spinner.hidden = false;
    this.stage.textContent = text;
    if (fraction == null) this.bar.removeAttribute('value');
    else this.bar.value = Math.max(0, Math.min(1, fraction));
    this.bar.hidden = false;
    this.tick();
  }

  // The same line while the page times something (inference runs): nothing animates and the
  // elapsed clock stands still. A running CSS animation has the browser draw a frame every
  // 16 ms; on a 2-core machine that CPU is taken from the kernel pool's threads and the
  // median shown would be the spinner's, not the model's (docs/performance.md).
  timing(text, fraction) {
    this.show(text, fraction);
    this.el.classList.add('timing');
    if (fraction == null) this.bar.hidden = true;  // an indeterminate bar animates too
  }

  tick() {
    if (this.el.classList.contains('timing')) return;
    this.elapsed.textContent = `${((performance.now() - this.t0) / 1000).toFixed(1)} s`;
  }

  done(text) {
    this.el.classList.remove('timing');
    clearInterval(this.timer);
    this.timer = null;
    this.spinner.hidden = true;
    this.bar.hidden = true;
    this.stage.textContent = text || 'Done';
    this.elapsed.textContent = '';
    document.body.dataset.state = 'done';
    document.body.dataset.ready = 'true';
  }

  fail() {
    this.el.classList.remove('timing');
    clearInterval(this.timer);
    this.timer = null;
    this.el.hidden = true;
    document.body.dataset.state = 'error';
    document.body.dataset.ready = 'true';
  }
}

// The engine's load progress (webnnPolyfill 'progress' events) on a status
// line while it starts; returns a function that stops listening. The phases
// the last event named stay in document.body.dataset.engineProgress (tests).
const ENGINE_PHASES = {
  fetch: 'fetching the runtime', compile: 'compiling WebAssembly', restore: 'restoring the engine snapshot',
  init: 'starting Python', packages: 'installing numpy and webnn_core', import: 'importing numpy',
  snapshot: 'saving an engine snapshot for the next visit', ready: 'ready',
};

export function followEngineProgress(status) {
  const polyfill = self.webnnPolyfill;
  if (!polyfill || typeof polyfill.addEventListener !== 'function') return () => {};
  const show = (p) => {
    const mb = (n) => (n / 1e6).toFixed(1);
    const bytes = p.total ? ` (${mb(Math.min(p.loaded, p.total))} of ${mb(p.total)} MB)` : '';
    status.show(`Starting the WebNN engine: ${ENGINE_PHASES[p.phase] || p.phase}…${p.phase === 'fetch' ? bytes : ''}`, p.fraction);
    document.body.dataset.engineProgress = p.phase;
  };
  const listener = (e) => show(e.detail);
  polyfill.addEventListener('progress', listener);
  if (polyfill.progress().phase !== 'idle') show(polyfill.progress());
  return () => polyfill.removeEventListener('progress', listener);
}

// Throws a readable error when the polyfill script did not load or install.
export function requirePolyfill() {
  if (!self.isSecureContext) throw new Error('WebNN needs a secure context: open the gallery over http://localhost or https://');
  if (typeof self.webnnPolyfill === 'undefined' && !(self.navigator && self.navigator.ml)) {
    const url = self.GALLERY_CONFIG ? self.GALLERY_CONFIG.polyfillUrl : '/dist/webnn-polyfill.js';
    throw Object.assign(new Error(`the WebNN polyfill script (${url}) did not load`), { hint: 'Run ./dev build (or ./dev serve, which builds first).' });
  }
}

// Make an error readable: its name, message and what the user can do about it.
export function describeError(e) {
  const name = (e && e.name) || 'Error';
  let message = (e && e.message) || String(e);
  const hints = [];
  if (e && e.name === 'WeightsUnavailable') { /* its own hint says what to get */ }
  else if (/HTTP 404/.test(message)) hints.push('A model file was not found. Check the weights base URL (?weights=…; default /models/).');
  else if (/Failed to fetch|NetworkError|HTTP \d+/.test(message)) hints.push('A download failed. If the weights are hosted on another origin, it must allow CORS (this page is cross-origin isolated).');
  if (/engine failed to start/.test(message)) hints.push('The polyfill runtime (Pyodide) could not be loaded from /dist/. Run ./dev build, or check the network panel.');
  if (/navigator\.ml is missing|WebNN polyfill did not install/.test(message)) hints.push('Open the page over http://localhost or https:// (WebNN needs a secure context).');
  if (e && e.hint) hints.push(e.hint);
  return { title: `${name}: ${message}`, hints, stack: e && e.stack };
}

export function showError(el, e, context = 'Something went wrong') {
  const d = describeError(e);
  el.hidden = false;
  el.setAttribute('role', 'alert');
  el.innerHTML = '';
  const strong = document.createElement('strong');
  strong.textContent = context;
  el.append(strong, document.createTextNode(d.title));
  for (const h of d.hints) {
    const p = document.createElement('div');
    p.className = 'small';
    p.textContent = h;
    el.append(p);
  }
  console.error(e);
}

export function clearError(el) { el.hidden = true; el.textContent = ''; }

// Uncaught errors (a script that failed to load, a bug) also land in the page.
export function catchGlobalErrors(el) {
  self.addEventListener('error', (ev) => {
    if (ev.target && ev.target !== self && ev.target.src) {
      showError(el, new Error(`could not load ${ev.target.src}`), 'A script failed to load');
    } else if (ev.error) {
      showError(el, ev.error, 'Unexpected error');
    }
    document.body.dataset.state = 'error';
  }, true);
  self.addEventListener('unhandledrejection', (ev) => {
    showError(el, ev.reason, 'Unexpected error');
    document.body.dataset.state = 'error';
  });
}

// Keep the gallery query (?weights=…&fast=0) on in-gallery links.
export function carryQuery(root = document) {
  const q = self.GALLERY_CONFIG ? self.GALLERY_CONFIG.query : '';
  if (!q) return;
  for (const a of root.querySelectorAll('a[data-carry]')) {
    const u = new URL(a.getAttribute('href'), location.href);
    for (const [k, v] of new URLSearchParams(q)) if (!u.searchParams.has(k)) u.searchParams.set(k, v);
    a.href = u.pathname + u.search;
  }
}

export function topFiveList(ol, top, meaningless = false) {
  ol.innerHTML = '';
  ol.classList.toggle('meaningless', meaningless);
  for (const t of top) {
    const li = document.createElement('li');
    const label = document.createElement('span');
    label.className = 'label';
    label.textContent = t.label;
    label.title = `class ${t.index}`;
    const prob = document.createElement('span');
    prob.className = 'prob';
    prob.textContent = `${(t.probability * 100).toFixed(1)} %`;
    const wrap = document.createElement('span');
    wrap.className = 'barwrap';
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.display = 'block';
    bar.style.width = `${Math.max(0.5, t.probability * 100)}%`;
    wrap.append(bar);
    li.append(label, prob, wrap);
    ol.append(li);
  }
}

// Insert a classic script and wait for it (engines and libraries the pages time or probe).
export function loadScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`could not load ${url}`));
    document.head.appendChild(s);
  });
}
