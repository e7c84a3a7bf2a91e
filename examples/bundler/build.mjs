// Bundle main.js (which imports webnn-polyfill) into out/app.js, and copy the
// polyfill's runtime files beside it: a bundled module's import.meta.url is the
// bundle's URL, and the polyfill loads its runtime from beside itself.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const pkgJson = require.resolve('webnn-polyfill/package.json');
const { webnnPolyfill } = JSON.parse(readFileSync(pkgJson, 'utf8'));

mkdirSync('out', { recursive: true });
await esbuild.build({ entryPoints: ['main.js'], bundle: true, format: 'esm', outfile: 'out/app.js', logLevel: 'warning' });
for (const file of webnnPolyfill.runtime) copyFileSync(join(dirname(pkgJson), file), join('out', file));
console.log(`out/app.js + ${webnnPolyfill.runtime.length} runtime files`);
