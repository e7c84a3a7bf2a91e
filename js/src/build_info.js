// Facts the bundler fills in (tools/build.py passes them to esbuild as
// defines): the version shared by the npm and Python packages, the core wheel's
// file name, the Pyodide version of the runtime files, and, in the ES-module
// build only, the module's own URL (the runtime files sit beside it); and the
// runtime manifest: sha256 and size of every runtime file, the numpy wheel's
// name and the build-time engine snapshot (startup.js verifies against it).

export const POLYFILL_VERSION = __WEBNN_POLYFILL_VERSION__;
export const CORE_WHEEL = __WEBNN_CORE_WHEEL__;
export const PYODIDE_VERSION = __WEBNN_PYODIDE_VERSION__;
export const SCRIPT_URL = __WEBNN_MODULE_URL__;
export const RUNTIME_MANIFEST = __WEBNN_RUNTIME_MANIFEST__;
// The grammar library's wheel beside the runtime (js/src/xla.js loads it on first use).
export const LARK_WHEEL = __WEBNN_LARK_WHEEL__;
