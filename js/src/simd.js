// SIMD microkernels: a standalone wasm32+simd128 module that shares Pyodide's
// linear memory and works in place on numpy buffers. (Stub: filled in by the
// CPU-speed work; the engine calls these two hooks.)

// Called just before loadPyodide(): a chance to capture Pyodide's memory.
function simdBeforeEngineLoad() {}

// Called once numpy and webnn_core are loaded.
async function simdAttach(pyodide) {}
