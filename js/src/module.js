// The ES-module entry (dist/webnn-polyfill.mjs): importing it installs
// navigator.ml like the classic script, and hands back the same objects.

import './install.js';

export const ml = globalThis.navigator ? globalThis.navigator.ml : undefined;
export default globalThis.webnnPolyfill;
