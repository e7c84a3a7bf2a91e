// Extract the table-driven cases of WPT webnn conformance files as JSON, with
// each case's tolerance as WPT's own utils.js computes it. Reads the files from
// a WPT tree at run time (nothing of WPT is stored in this project).
//
//   node tools/wpt_cases.js WPT_ROOT webnn/conformance_tests/relu.https.any.js [...]
//
// Prints [{file, name, graph, tolerance: {metricType, value}}] on stdout.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [root, ...files] = process.argv.slice(2);
const out = [];
const jsonable = (v) => JSON.parse(JSON.stringify(v, (k, x) => {
  if (typeof x === 'bigint') return { $bigint: x.toString() };
  if (typeof x === 'number' && !Number.isFinite(x)) return { $number: String(x) };
  return x;
}));

for (const file of files) {
  const collected = [];
  const sandbox = {
    console, navigator: { ml: {} }, location: { search: '?cpu' }, self: {},
    promise_test() {}, test() {}, promise_setup() {}, setup() {}, assert_implements() {},
  };
  sandbox.self = sandbox;
  sandbox.globalThis = sandbox;
  vm.createContext(sandbox);
  // utils.js declares webnn_conformance_test as a const: rename it so ours takes its place.
  const utils = fs.readFileSync(path.join(root, 'webnn/resources/utils.js'), 'utf8')
    .replace('const webnn_conformance_test =', 'const __upstream_conformance_test =');
  vm.runInContext(utils, sandbox, { filename: 'utils.js' });
  vm.runInContext(
    'var webnn_conformance_test = (build, tol, test, cast) => __collect(test, tol, cast);',
    Object.assign(sandbox, {
      __collect: (test, tol, cast) => {
        let tolerance = null;
        try { tolerance = tol(test.graph, {}); } catch (e) { tolerance = { error: String(e) }; }
        collected.push({ file, name: test.name, graph: test.graph, tolerance, castToSupportedType: !!cast });
      },
    }));
  try {
    vm.runInContext(fs.readFileSync(path.join(root, file), 'utf8'), sandbox, { filename: file });
  } catch (e) {
    process.stderr.write(`${file}: ${e}\n`);
  }
  for (const c of collected) out.push(jsonable(c));
}
process.stdout.write(JSON.stringify(out));
