import { $, Status, fmtMs, showError, catchGlobalErrors, carryQuery, topFiveList } from './lib/ui.js';

const cfg = self.GALLERY_CONFIG;
const status = new Status($('#status'));
const errorBox = $('#error');
catchGlobalErrors(errorBox);
carryQuery();

// Main-thread heartbeat: a 50 ms timer; the longest extra delay between its ticks
// while the worker runs the inferences (the same inferences in the page would
// hold the main thread for their whole duration).
let last = performance.now();
let worst = 0;
let watching = false;
let ticks = 0;
setInterval(() => {
  const t = performance.now();
  if (watching) worst = Math.max(worst, t - last - 50);
  last = t;
  ticks++;
  $('#heartbeat').textContent = `${ticks} timer ticks so far` + (watching || worst ? `, longest stall during inference ${Math.max(0, worst).toFixed(0)} ms` : '');
}, 50);

const set = (table, k, v) => { $(`#${table} tr[data-k=${k}] td.num`).textContent = v; };
const worker = new Worker(`worker.js${cfg.query}`);
worker.onerror = (e) => {
  e.preventDefault();
  status.fail();
  showError(errorBox, new Error(e.message || 'the worker script failed to load (worker.js)'), 'The worker failed');
};
worker.onmessage = ({ data }) => {
  if (data.type === 'scope') {
    set('scope', 'global', data.global);
    set('scope', 'ml', data.ml ? 'yes' : 'no');
    set('scope', 'document', data.document ? 'yes' : 'no (a worker)');
    set('scope', 'isolated', data.isolated ? 'yes' : 'no');
  } else if (data.type === 'stage') {
    if (data.phase === 'infer' && !watching) { watching = true; worst = 0; }
    status.show(data.text, data.fraction);
  } else if (data.type === 'result') {
    set('timings', 'engine', fmtMs(data.engineMs));
    set('timings', 'weights', data.weightsMs == null ? 'reused' : fmtMs(data.weightsMs));
    set('timings', 'build', data.buildMs == null ? 'reused' : fmtMs(data.buildMs));
    set('timings', 'first', fmtMs(data.firstMs));
    set('timings', 'median', `${fmtMs(data.medianMs)} (n=${data.runs})`);
    topFiveList($('#top5'), data.top5);
    document.body.dataset.top1 = data.top5[0].label;
    watching = false;
    const busyMs = data.firstMs + data.medianMs * data.runs;
    status.done(`Classified in the worker: top-1 “${data.top5[0].label}”. About ${fmtMs(busyMs)} of inference ran off the main thread; its longest stall meanwhile: ${fmtMs(Math.max(0, worst))}`);
    $('#again').disabled = false;
  } else if (data.type === 'error') {
    watching = false;
    status.fail();
    showError(errorBox, Object.assign(new Error(data.message), { name: data.name, hint: data.hint }), 'The worker reported an error');
    $('#again').disabled = false;
  }
};
$('#again').addEventListener('click', () => {
  $('#again').disabled = true;
  worker.postMessage({ type: 'run' });
});
status.show('Starting the worker…');
worker.postMessage({ type: 'run' });
