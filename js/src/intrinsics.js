// Intrinsics saved when the polyfill is evaluated: a page may replace the
// globals later (JSON.stringify, Object.keys, MessageChannel, ...), and the
// polyfill must keep working and never run the page's replacements.

const uncurryThis = Function.prototype.bind.call(Function.prototype.bind, Function.prototype.call);
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);

export const jsonParse = JSON.parse;
export const objectKeys = Object.keys;
export const numberIsFinite = Number.isFinite;
export const isArray = Array.isArray;
export const hasOwn = uncurryThis(Object.prototype.hasOwnProperty);
export const charCodeAt = uncurryThis(String.prototype.charCodeAt);
export const stringSlice = uncurryThis(String.prototype.slice);
export const stringIndexOf = uncurryThis(String.prototype.indexOf);
export const numberToString = uncurryThis(Number.prototype.toString);
export const reflectOwnKeys = Reflect.ownKeys;
export const reflectApply = Reflect.apply;
export const reflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
export const isView = ArrayBuffer.isView;
export const SavedArrayBuffer = ArrayBuffer;
export const SavedSharedArrayBuffer = typeof SharedArrayBuffer === 'undefined' ? null : SharedArrayBuffer;
export const SavedUint8Array = Uint8Array;
export const SavedDOMException = DOMException;
export const SavedMessageChannel = typeof MessageChannel === 'undefined' ? null : MessageChannel;
export const savedPortPostMessage = typeof MessagePort === 'undefined' ? null : uncurryThis(MessagePort.prototype.postMessage);
export const savedSetTimeout = setTimeout;
export const savedQueueMicrotask = typeof queueMicrotask === 'function' ? queueMicrotask : (fn) => Promise.resolve().then(fn);
// A monotonic clock in ms (engineStats' timings).
export const now = typeof performance === 'object' && performance && typeof performance.now === 'function'
  ? Function.prototype.bind.call(performance.now, performance) : Date.now;
export const SavedWeakRef = typeof WeakRef === 'function' ? WeakRef : null;
export const objectDefineProperty = Object.defineProperty;
export const savedFetch = typeof fetch === 'function' ? fetch : null;
// WebAssembly's functions (call them with WebAssembly as `this`); null without WebAssembly.
export const savedWebAssembly = typeof WebAssembly === 'object' ? {
  validate: WebAssembly.validate, compile: WebAssembly.compile, compileStreaming: WebAssembly.compileStreaming,
  instantiate: WebAssembly.instantiate, Memory: WebAssembly.Memory,
} : null;
export const typedArrayBuffer = uncurryThis(Object.getOwnPropertyDescriptor(typedArrayProto, 'buffer').get);
export const typedArraySet = uncurryThis(typedArrayProto.set);
export const typedArrayByteLength = uncurryThis(Object.getOwnPropertyDescriptor(typedArrayProto, 'byteLength').get);
// UTF-8 text into / out of a Uint8Array (the engine's long payloads and replies).
const savedEncoder = new TextEncoder();
const savedDecoder = new TextDecoder();
const encodeIntoFn = TextEncoder.prototype.encodeInto;
const decodeFn = TextDecoder.prototype.decode;
export const encodeInto = (text, view) => reflectApply(encodeIntoFn, savedEncoder, [text, view]);
export const decodeUtf8 = (view) => reflectApply(decodeFn, savedDecoder, [view]);

// CreateDataProperty: also a key such as "__proto__" becomes an own property.
export function defineDataProperty(obj, key, value) {
  objectDefineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}
