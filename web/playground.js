import { $, requirePolyfill, Status, fmtMs, showError, clearError, catchGlobalErrors, carryQuery } from './lib/ui.js';
import { formatTensor } from './lib/tensorfmt.js';

const status = new Status($('#status'));
const errorBox = $('#error');
catchGlobalErrors(errorBox);
carryQuery();

const DATA_TYPES = { float32: Float32Array, float16: null, int32: Int32Array, uint32: Uint32Array, int8: Int8Array, uint8: Uint8Array };
const INPUT_NAMES = ['A', 'B'];

// arity 1 or 2; param: [label, parse(text) -> options/extra args, default text]
const list = (t) => (t.trim() === '' ? [] : t.split(/[\s,;\[\]]+/).filter(Boolean).map(Number));
const OPS = {
  add: { arity: 2 }, sub: { arity: 2 }, mul: { arity: 2 }, div: { arity: 2 },
  max: { arity: 2 }, min: { arity: 2 }, pow: { arity: 2 }, matmul: { arity: 2 },
  relu: { arity: 1 }, sigmoid: { arity: 1 }, tanh: { arity: 1 }, exp: { arity: 1 },
  abs: { arity: 1 }, neg: { arity: 1 }, sqrt: { arity: 1 }, gelu: { arity: 1 },
  clamp: { arity: 1, param: ['min, max', '0, 6', (t) => { const [a, b] = list(t); return [{ minValue: a, maxValue: b }]; }] },
  softmax: { arity: 1, param: ['axis', '1', (t) => [list(t)[0] ?? 0]] },
  transpose: { arity: 1, param: ['permutation', '1, 0', (t) => [{ permutation: list(t) }]] },
  reshape: { arity: 1, param: ['new shape', '3, 2', (t) => [list(t)]] },
  reduceSum: { arity: 1, param: ['axes', '1', (t) => [{ axes: list(t) }]] },
  reduceMean: { arity: 1, param: ['axes', '1', (t) => [{ axes: list(t) }]] },
  leakyRelu: { arity: 1, param: ['alpha', '0.1', (t) => [{ alpha: list(t)[0] }]] },
};

const PRESETS = {
  'relu(A × B)': {
    inputs: [['float32', '2, 3', '1 -2 3 -4 5 -6'], ['float32', '3, 2', '1 2 3 4 5 6']],
    steps: [['matmul', 'A', 'B'], ['relu', 's1']],
  },
  'softmax(A × Bᵀ)': {
    inputs: [['float32', '2, 3', '1 2 3 4 5 6'], ['float32', '2, 3', '0.1 0.2 0.3 -0.1 0 0.1']],
    steps: [['transpose', 'B', null, '1, 0'], ['matmul', 'A', 's1'], ['softmax', 's2', null, '1']],
  },
  'broadcast: A + B, clamp': {
    inputs: [['float32', '2, 3', '1 2 3 4 5 6'], ['float32', '3', '10 -10 0.5']],
    steps: [['add', 'A', 'B'], ['clamp', 's1', null, '0, 6']],
  },
  'integers: (A − B) · A, reduceSum': {
    inputs: [['int32', '2, 2', '7 8 9 10'], ['int32', '2, 2', '1 2 3 4']],
    steps: [['sub', 'A', 'B'], ['mul', 's1', 'A'], ['reduceSum', 's2', null, '0, 1']],
  },
};

// ---------------------------------------------------------------- the form
function inputEditor(name, [dtype, shape, values]) {
  const div = document.createElement('div');
  div.className = 'tensor-in';
  div.dataset.name = name;
  div.innerHTML = `<strong><code>${name}</code></strong>
    <div class="row">
      <label>data type <select name="dtype">${Object.keys(DATA_TYPES).filter((t) => DATA_TYPES[t]).map((t) => `<option>${t}</option>`).join('')}</select></label>
      <label>shape <input type="text" name="shape" placeholder="e.g. 2, 3 (empty: scalar)"></label>
    </div>
    <label>values <input type="text" name="values" placeholder="numbers, row-major; one number fills"></label>`;
  div.querySelector('[name=dtype]').value = dtype;
  div.querySelector('[name=shape]').value = shape;
  div.querySelector('[name=values]').value = values;
  return div;
}

function stepNames(upTo) {
  return [...INPUT_NAMES, ...Array.from({ length: upTo }, (_, i) => `s${i + 1}`)];
}

function renumber() {
  const rows = [...document.querySelectorAll('#steps .step')];
  rows.forEach((row, i) => {
    row.querySelector('.nm').textContent = `s${i + 1} =`;
    row.dataset.name = `s${i + 1}`;
    for (const sel of row.querySelectorAll('select.arg')) {
      const keep = sel.value;
      sel.innerHTML = stepNames(i).map((n) => `<option>${n}</option>`).join('');
      sel.value = stepNames(i).includes(keep) ? keep : stepNames(i)[stepNames(i).length - 1];
    }
  });
}

function syncStep(row) {
  const op = OPS[row.querySelector('[name=op]').value];
  row.querySelector('[name=arg2]').hidden = op.arity < 2;
  const param = row.querySelector('[name=param]');
  param.hidden = !op.param;
  if (op.param) {
    param.placeholder = op.param[0];
    param.title = op.param[0];
    if (!param.value || param.dataset.forOp !== row.querySelector('[name=op]').value) param.value = op.param[1];
    param.dataset.forOp = row.querySelector('[name=op]').value;
  }
}

function addStep([op, a1, a2, param] = ['relu', null, null, null]) {
  const row = document.createElement('div');
  row.className = 'step';
  row.innerHTML = `<span class="nm"></span>
    <select name="op" aria-label="op">${Object.keys(OPS).map((o) => `<option>${o}</option>`).join('')}</select>
    <span>(</span><select name="arg1" class="arg" aria-label="first operand"></select>
    <select name="arg2" class="arg" aria-label="second operand"></select>
    <input type="text" name="param" aria-label="parameter"><span>)</span>
    <button type="button" class="secondary remove" title="remove this step" aria-label="remove step">×</button>`;
  $('#steps').append(row);
  renumber();
  row.querySelector('[name=op]').value = op;
  if (a1) row.querySelector('[name=arg1]').value = a1;
  if (a2) row.querySelector('[name=arg2]').value = a2;
  if (param != null) { row.querySelector('[name=param]').value = param; row.querySelector('[name=param]').dataset.forOp = op; }
  syncStep(row);
  row.querySelector('[name=op]').addEventListener('change', () => syncStep(row));
  row.querySelector('.remove').addEventListener('click', () => { row.remove(); renumber(); });
  return row;
}

function loadPreset(name) {
  const p = PRESETS[name];
  $('#inputs').innerHTML = '';
  INPUT_NAMES.forEach((n, i) => $('#inputs').append(inputEditor(n, p.inputs[i])));
  $('#steps').innerHTML = '';
  for (const s of p.steps) addStep(s);
}

// ---------------------------------------------------------------- reading the form
function parseInput(div) {
  const name = div.dataset.name;
  const dataType = div.querySelector('[name=dtype]').value;
  const shapeText = div.querySelector('[name=shape]').value;
  const shape = list(shapeText);
  if (shape.some((d) => !Number.isInteger(d) || d < 1)) throw new TypeError(`${name}: the shape "${shapeText}" must be positive integers, e.g. "2, 3"`);
  const size = shape.reduce((a, b) => a * b, 1);
  const values = list(div.querySelector('[name=values]').value);
  if (values.some((v) => Number.isNaN(v))) throw new TypeError(`${name}: the values must be numbers`);
  if (values.length !== size && values.length !== 1) {
    throw new TypeError(`${name}: shape [${shape}] needs ${size} value${size === 1 ? '' : 's'} (or one to fill), got ${values.length}`);
  }
  const Ctor = DATA_TYPES[dataType];
  const data = new Ctor(size);
  if (values.length === 1) data.fill(values[0]); else data.set(values);
  return { name, dataType, shape, data };
}

function readSteps() {
  return [...document.querySelectorAll('#steps .step')].map((row) => {
    const opName = row.querySelector('[name=op]').value;
    const op = OPS[opName];
    const args = [row.querySelector('[name=arg1]').value];
    if (op.arity === 2) args.push(row.querySelector('[name=arg2]').value);
    const paramText = op.param ? row.querySelector('[name=param]').value : null;
    const extra = op.param ? op.param[2](paramText) : [];
    return { name: row.dataset.name, opName, args, extra, paramText };
  });
}

function codeFor(inputs, steps) {
  const lines = ['const context = await navigator.ml.createContext();', 'const builder = new MLGraphBuilder(context);'];
  for (const i of inputs) lines.push(`const ${i.name} = builder.input('${i.name}', { dataType: '${i.dataType}', shape: [${i.shape.join(', ')}] });`);
  for (const s of steps) {
    const extra = s.extra.map((e) => JSON.stringify(e).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', '));
    lines.push(`const ${s.name} = builder.${s.opName}(${[...s.args, ...extra].join(', ')});`);
  }
  const outs = steps.map((s) => s.name);
  lines.push(`const graph = await builder.build({ ${outs.join(', ')} });`);
  lines.push('// then: context.writeTensor(...) each input, context.dispatch(graph, inputs, outputs), await context.readTensor(...)');
  return lines.join('\n');
}

// ---------------------------------------------------------------- running
let contextPromise = null;
let busy = false;

async function run() {
  if (busy) return;
  busy = true;
  $('#run').disabled = true;
  clearError(errorBox);
  try {
    requirePolyfill();
    const inputs = [...document.querySelectorAll('#inputs .tensor-in')].map(parseInput);
    const steps = readSteps();
    if (!steps.length) throw new TypeError('add at least one step');
    $('#code').textContent = codeFor(inputs, steps);
    const engineStarted = webnnPolyfill.engineStats.startMs != null;
    status.show(engineStarted ? 'Building the graph…' : 'Starting the WebNN engine (Pyodide + numpy, a few seconds)…');
    if (!contextPromise) contextPromise = navigator.ml.createContext().catch((e) => { contextPromise = null; throw e; });
    const context = await contextPromise;
    status.show('Building the graph…');
    const t0 = performance.now();
    const builder = new MLGraphBuilder(context);
    const operands = {};
    for (const i of inputs) operands[i.name] = builder.input(i.name, { dataType: i.dataType, shape: i.shape });
    for (const s of steps) {
      try {
        operands[s.name] = builder[s.opName](...s.args.map((a) => operands[a]), ...s.extra);
      } catch (e) {
        e.message = `step ${s.name} = ${s.opName}(${[...s.args, s.paramText].filter((x) => x != null).join(', ')}): ${e.message}`;
        throw e;
      }
    }
    const outputs = Object.fromEntries(steps.map((s) => [s.name, operands[s.name]]));
    const graph = await builder.build(outputs);
    const tensors = {};
    for (const i of inputs) {
      tensors[i.name] = await context.createTensor({ dataType: i.dataType, shape: i.shape, writable: true });
      context.writeTensor(tensors[i.name], i.data);
    }
    const outTensors = {};
    for (const [name, op] of Object.entries(outputs)) {
      outTensors[name] = await context.createTensor({ dataType: op.dataType, shape: op.shape, readable: true });
    }
    const used = Object.fromEntries(inputs.filter((i) => graphUses(steps, i.name)).map((i) => [i.name, tensors[i.name]]));
    context.dispatch(graph, used, outTensors);
    const results = {};
    for (const [name, t] of Object.entries(outTensors)) {
      const op = outputs[name];
      const Ctor = DATA_TYPES[op.dataType] || Float32Array;
      results[name] = { dataType: op.dataType, shape: op.shape, data: new Ctor(await context.readTensor(t)) };
    }
    const ms = performance.now() - t0;
    for (const t of [...Object.values(tensors), ...Object.values(outTensors)]) t.destroy();
    graph.destroy();
    showOutputs(results, steps[steps.length - 1].name);
    status.done(`Built and ran ${steps.length} op${steps.length === 1 ? '' : 's'} in ${fmtMs(ms)}`);
  } catch (e) {
    status.fail();
    $('#outputs').innerHTML = '<p class="muted">No output: see the error above.</p>';
    showError(errorBox, e, 'The graph could not be built or run');
  } finally {
    busy = false;
    $('#run').disabled = false;
  }
}

// An input that no step reads is not part of the built graph (build() keeps
// what the outputs reach), so it must not be bound either.
function graphUses(steps, name) {
  return steps.some((s) => s.args.includes(name));
}

function showOutputs(results, finalName) {
  const box = $('#outputs');
  box.innerHTML = '';
  for (const [name, r] of Object.entries(results)) {
    const div = document.createElement('div');
    div.className = 'out' + (name === finalName ? ' final' : '');
    div.dataset.name = name;
    const h = document.createElement('h3');
    h.textContent = `${name}: ${r.dataType} [${r.shape.join(', ')}]`;
    const pre = document.createElement('pre');
    pre.className = 'values';
    pre.textContent = formatTensor(r.data, r.shape);
    div.append(h, pre);
    box.append(div);
  }
}

// ---------------------------------------------------------------- wire up
$('#preset').innerHTML = Object.keys(PRESETS).map((n) => `<option>${n}</option>`).join('');
$('#preset').addEventListener('change', () => { loadPreset($('#preset').value); run(); });
$('#add').addEventListener('click', () => {
  const n = document.querySelectorAll('#steps .step').length;
  addStep(['relu', n ? `s${n}` : 'A']);
});
$('#run').addEventListener('click', run);
loadPreset(Object.keys(PRESETS)[0]);
run();
