// WebIDL machinery: argument conversion by type code (see tools/idl_schema.mjs) and
// helpers that make plain JS classes behave like WebIDL interfaces
// (non-constructible interface objects, enumerable operations with the right
// length, brand checks, "get x" accessors, Symbol.toStringTag).

import { IDL_ALIASES, IDL_DICTS, IDL_ENUMS } from './idl_tables.js';
import {
  SavedArrayBuffer, SavedSharedArrayBuffer, SavedUint8Array, charCodeAt, isArray, isView, numberIsFinite,
  numberToString, objectKeys, reflectGetOwnPropertyDescriptor, reflectOwnKeys, stringSlice,
} from './intrinsics.js';

const MAX_U32 = 4294967295;

function typeError(message) {
  return new TypeError(message);
}

// WebIDL's ToNumber: unary plus, which (unlike Number()) throws a TypeError for
// a BigInt, also one an object yields (Object(1n), {valueOf: () => 1n}).
function toNumber(value, what) {
  if (typeof value === 'bigint') throw typeError(`${what}: cannot convert a BigInt to a number`);
  if (typeof value === 'symbol') throw typeError(`${what}: cannot convert a Symbol to a number`);
  if (!isObjectLike(value)) return +value;
  try {
    return +value;
  } catch (e) {
    if (e instanceof TypeError) throw typeError(`${what}: cannot convert the value to a number (${e.message})`);
    throw e;  // the page's own valueOf/toString threw: rethrow it as is
  }
}

function enforceRange(value, lo, hi, what) {
  const x = toNumber(value, what);
  if (!Number.isFinite(x)) throw typeError(`${what}: ${value} is not a finite number`);
  const t = Math.trunc(x);
  if (t < lo || t > hi) throw typeError(`${what}: ${value} is outside [${lo}, ${hi}]`);
  return t === 0 ? 0 : t;
}

function unsignedLong(value, what) {
  // No [EnforceRange]: ToNumber, NaN/Infinity -> 0, truncate, modulo 2^32.
  const x = toNumber(value, what);
  if (!Number.isFinite(x)) return 0;
  const t = Math.trunc(x) % 4294967296;
  return t < 0 ? t + 4294967296 : t === 0 ? 0 : t;
}

function toStringValue(value, what) {
  if (typeof value === 'symbol') throw typeError(`${what}: cannot convert a Symbol to a string`);
  return String(value);
}

export function toUSVString(value, what) {
  const s = toStringValue(value, what);
  return typeof s.toWellFormed === 'function' ? s.toWellFormed() : s;
}

function toSequence(value, what, convertItem) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    throw typeError(`${what}: expected a sequence`);
  }
  const iteratorMethod = value[Symbol.iterator];
  if (typeof iteratorMethod !== 'function') throw typeError(`${what}: expected an iterable sequence`);
  const out = [];
  for (const item of { [Symbol.iterator]: () => iteratorMethod.call(value) }) {
    out.push(convertItem(item, `${what}[${out.length}]`));
  }
  return out;
}

function isObjectLike(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function');
}

// MLNumber = (bigint or unrestricted double); JSON carries specials as tags.
function toMLNumber(value, what) {
  if (typeof value === 'bigint') return { $i: value.toString() };
  return encodeDouble(toNumber(value, what));
}

function encodeDouble(x) {
  if (Number.isNaN(x)) return { $n: 'NaN' };
  if (x === Infinity) return { $n: 'Infinity' };
  if (x === -Infinity) return { $n: '-Infinity' };
  if (Object.is(x, -0)) return { $n: '-0' };
  return x;
}

// The converter registry: type code -> (value, what) -> converted value.
// `operand` is installed by the API module (it needs the MLOperand brand).
export const converters = {
  'u32!': (v, what) => enforceRange(v, 0, MAX_U32, what),
  'u32': unsignedLong,
  'i32!': (v, what) => enforceRange(v, -2147483648, 2147483647, what),
  'f64': (v, what) => {
    const x = toNumber(v, what);
    if (!Number.isFinite(x)) throw typeError(`${what}: ${v} is not a finite number`);
    return x;
  },
  'f32': (v, what) => {
    const x = toNumber(v, what);
    const f = Math.fround(x);
    if (!Number.isFinite(x) || !Number.isFinite(f)) throw typeError(`${what}: ${v} is not a finite float`);
    return f;
  },
  'bool': (v) => Boolean(v),
  'usv': toUSVString,
  'str': toStringValue,
  'number': toMLNumber,
};

export function convert(type, value, what) {
  if (type.includes('|')) return convertUnion(type, value, what);
  if (type.endsWith('[]')) {
    const item = type.slice(0, -2);
    return toSequence(value, what, (v, w) => convert(item, v, w));
  }
  if (IDL_ENUMS[type]) {
    const s = toStringValue(value, what);
    if (!IDL_ENUMS[type].includes(s)) throw typeError(`${what}: '${s}' is not a valid value for enumeration ${type}`);
    return s;
  }
  if (IDL_DICTS[type]) return convertDictionary(type, value, what);
  const c = converters[type];
  if (!c) throw new Error(`webnn-polyfill: no converter for IDL type ${type}`);
  return c(value, what);
}

// (unsigned long or sequence<unsigned long>): objects become the sequence, the rest numbers.
function convertUnion(type, value, what) {
  const [scalar, sequence] = type.split('|');
  if (isObjectLike(value) && typeof value[Symbol.iterator] === 'function') return convert(sequence, value, what);
  return convert(scalar, value, what);
}

// Returns a plain object holding the members that are present (defaults applied).
function convertDictionary(name, value, what) {
  if (value !== undefined && value !== null && !isObjectLike(value)) {
    throw typeError(`${what}: ${name} must be an object`);
  }
  const out = {};
  for (const [member, type, defaultValue, required] of IDL_DICTS[name]) {
    const v = value == null ? undefined : value[member];
    if (v === undefined) {
      if (required) throw typeError(`${what}: required member '${member}' of ${name} is missing`);
      if (defaultValue !== null && defaultValue !== undefined) out[member] = defaultValue;
      continue;
    }
    out[member] = convert(type, v, `${what}.${member}`);
  }
  // Older drafts' member names (spec/extensions.json), read only when the new member is absent.
  for (const [alias, member] of Object.entries(IDL_ALIASES[name] || {})) {
    const v = value == null ? undefined : value[alias];
    if (v === undefined || (value[member] !== undefined)) continue;
    const type = IDL_DICTS[name].find((m) => m[0] === member)[1];
    out[member] = convert(type, v, `${what}.${alias}`);
  }
  return out;
}

// A converted record<USVString, T>: its [key, value] pairs in order. Never a
// plain object, so keys such as "__proto__" or the bridge's tags stay data.
export class NamedRecord {
  constructor() { this.entries = []; }
  get(key) {
    for (const entry of this.entries) if (entry[0] === key) return entry[1];
    return undefined;
  }
}

export function convertRecord(value, what, convertValue) {
  if (!isObjectLike(value)) throw typeError(`${what}: expected an object (record)`);
  const out = new NamedRecord();
  const keys = reflectOwnKeys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (typeof key !== 'string') continue;
    const desc = reflectGetOwnPropertyDescriptor(value, key);
    if (!desc || !desc.enumerable) continue;
    const name = toUSVString(key, what);
    const converted = convertValue(value[key], `${what}['${key}']`);
    // Keys are unique after USVString conversion except for lone surrogates: the last one wins.
    const entries = out.entries;
    let j = 0;
    while (j < entries.length && entries[j][0] !== name) j++;
    entries[j] = [name, converted];
  }
  return out;
}

// The bridge's JSON, written by hand: ASCII only (non-ASCII escaped, so no text
// conversion in the engine can mangle it), records as tagged pair lists, and
// nothing of the page's (no toJSON, no replaced JSON.stringify) is consulted.
export function encodeJson(value) {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'number': return numberIsFinite(value) ? `${value}` : 'null';
    case 'boolean': return value ? 'true' : 'false';
    case 'string': return encodeJsonString(value);
    case 'bigint': return `${value}`;
    default: break;
  }
  let out;
  if (value instanceof NamedRecord) {
    out = '{"$r":[';
    const entries = value.entries;
    for (let i = 0; i < entries.length; i++) {
      out += `${i ? ',' : ''}[${encodeJsonString(entries[i][0])},${encodeJson(entries[i][1])}]`;
    }
    return `${out}]}`;
  }
  if (isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += `${i ? ',' : ''}${encodeJson(value[i])}`;
    return `${out}]`;
  }
  out = '{';
  const keys = objectKeys(value);
  for (let i = 0; i < keys.length; i++) {
    out += `${i ? ',' : ''}${encodeJsonString(keys[i])}:${encodeJson(value[keys[i]])}`;
  }
  return `${out}}`;
}

// Strings longer than this keep their non-ASCII characters in the JSON: a payload
// holding one is that long too, so it crosses into the engine as UTF-8 bytes
// (engine.js), never through Pyodide's string conversion; shorter ones are ASCII.
export const RAW_JSON_STRING = 1 << 14;

// JSON string: runs that need no escape are appended as slices (a label may be
// millions of characters), the rest as escapes; lone surrogates always escaped.
function encodeJsonString(s) {
  const raw = s.length > RAW_JSON_STRING;
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = charCodeAt(s, i);
    if (c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c) continue;
    if (raw && c >= 0x7f) {
      if (c < 0xd800 || c > 0xdfff) continue;
      if (c <= 0xdbff && i + 1 < s.length) {
        const d = charCodeAt(s, i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) { i++; continue; }
      }
    }
    if (i > start) out += stringSlice(s, start, i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else out += `\\u${stringSlice(numberToString(c + 0x10000, 16), 1)}`;
    start = i + 1;
  }
  return start === 0 ? `"${s}"` : `${out}${stringSlice(s, start)}"`;
}

// AllowSharedBufferSource: an ArrayBuffer, a SharedArrayBuffer, or a view on either.
export function toBufferSource(value, what) {
  if (isView(value)) return value;
  if (value instanceof SavedArrayBuffer) return value;
  if (SavedSharedArrayBuffer && value instanceof SavedSharedArrayBuffer) return value;
  throw typeError(`${what}: expected an ArrayBuffer, SharedArrayBuffer or ArrayBufferView`);
}

export function isSharedBuffer(buffer) {
  return !!SavedSharedArrayBuffer && buffer instanceof SavedSharedArrayBuffer;
}

// The bytes of a buffer source as a Uint8Array (a detached one has length 0).
export function bytesOf(source) {
  const buffer = isView(source) ? source.buffer : source;
  if (buffer.detached === true) return new SavedUint8Array(0);
  if (isView(source)) return new SavedUint8Array(buffer, source.byteOffset, source.byteLength);
  return new SavedUint8Array(source);
}

export function requireArgs(args, count, what) {
  if (args.length < count) {
    throw typeError(`${what}: ${count} argument${count === 1 ? '' : 's'} required, but only ${args.length} present`);
  }
}

// ---------------------------------------------------------------------------
// Interfaces.

export const INTERNAL = Symbol('webnn-polyfill internal');

// Make `cls` look like a WebIDL interface object: non-enumerable own property of
// the global, right name and length, Symbol.toStringTag on the prototype.
export function defineInterface(cls, name, length) {
  Object.defineProperty(cls, 'name', { value: name, configurable: true });
  Object.defineProperty(cls, 'length', { value: length, configurable: true });
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: name, configurable: true });
  return cls;
}

// Regular operations: enumerable, writable, configurable own properties of the
// prototype, with the given name and length.
export function defineOperation(proto, name, length, fn) {
  Object.defineProperty(fn, 'name', { value: name, configurable: true });
  Object.defineProperty(fn, 'length', { value: length, configurable: true });
  Object.defineProperty(proto, name, { value: fn, writable: true, enumerable: true, configurable: true });
}

// Promise-returning operations reject instead of throwing (WebIDL).
export function promiseOperation(fn) {
  return function (...args) {
    try {
      return Promise.resolve(fn.apply(this, args));
    } catch (e) {
      return Promise.reject(e);
    }
  };
}

export function defineAttribute(proto, name, getter) {
  Object.defineProperty(getter, 'name', { value: `get ${name}`, configurable: true });
  Object.defineProperty(proto, name, { get: getter, enumerable: true, configurable: true });
}
