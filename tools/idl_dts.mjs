// TypeScript declarations generated from WebIDL: the WebNN IDL (every
// interface, mixin, dictionary, enum and typedef) and the polyfill's own
// namespace (js/webnn-polyfill.idl), parsed with webidl2, the parser WPT's
// idlharness uses. Nothing in the output is written by hand.
//
//   node tools/idl_dts.mjs --out dist/webnn-polyfill.d.ts [IDL ...]
//
// Two stages: describe() turns webidl2's AST into a plain model (declarations
// with TypeScript type strings), emit() prints that model. Another front end
// producing the same model (e.g. a JSON schema of the IDL) can feed emit().

import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

const require = createRequire(import.meta.url);
const { parse } = require('webidl2');

const NUMBER = ['byte', 'octet', 'short', 'unsigned short', 'long', 'unsigned long', 'long long',
  'unsigned long long', 'float', 'unrestricted float', 'double', 'unrestricted double'];
const SCALARS = {
  ...Object.fromEntries(NUMBER.map((n) => [n, 'number'])),
  boolean: 'boolean', bigint: 'bigint', DOMString: 'string', USVString: 'string', ByteString: 'string',
  any: 'any', object: 'object', undefined: 'undefined',
  // Spelled out rather than lib.dom's alias, which older TypeScript versions lack.
  AllowSharedBufferSource: 'ArrayBufferLike | ArrayBufferView',
};

// A TypeScript type for a webidl2 type node; `ret`: in a return position
// (`undefined` there is `void`, as lib.dom writes it).
function tsType(t, ret = false) {
  let out;
  if (t.union) out = t.idlType.map((u) => tsType(u)).join(' | ');
  else if (t.generic === 'sequence') out = `${wrap(tsType(t.idlType[0]))}[]`;
  else if (t.generic === 'FrozenArray' || t.generic === 'ObservableArray') out = `readonly ${wrap(tsType(t.idlType[0]))}[]`;
  else if (t.generic === 'record') out = `Record<string, ${tsType(t.idlType[1])}>`;
  else if (t.generic === 'Promise') out = `Promise<${tsType(t.idlType[0], true)}>`;
  else if (t.generic) throw new Error(`unsupported generic ${t.generic}`);
  else out = t.idlType === 'undefined' && ret ? 'void' : (SCALARS[t.idlType] || t.idlType);
  return t.nullable ? `${wrap(out)} | null` : out;
}

// Parenthesised where it is an element type: (A | B)[], (readonly T[])[].
const wrap = (s) => (/[|&\s]/.test(s) ? `(${s})` : s);

function args(list) {
  return list.map((a) => {
    if (a.variadic) return `...${a.name}: ${wrap(tsType(a.idlType))}[]`;
    return `${a.name}${a.optional ? '?' : ''}: ${tsType(a.idlType)}`;
  }).join(', ');
}

function members(def) {
  const out = [];
  for (const m of def.members) {
    if (m.type === 'attribute') out.push({ kind: 'attribute', name: m.name, readonly: m.readonly, type: tsType(m.idlType, true) });
    else if (m.type === 'operation' && m.name) {
      out.push({ kind: 'operation', name: m.name, static: m.special === 'static', args: args(m.arguments), type: tsType(m.idlType, true) });
    } else if (m.type === 'constructor') out.push({ kind: 'constructor', args: args(m.arguments) });
    else if (m.type === 'field') out.push({ kind: 'field', name: m.name, optional: !m.required, type: tsType(m.idlType) });
    else if (m.type === 'const') out.push({ kind: 'const', name: m.name, type: tsType(m.idlType), value: m.value.value });
    else throw new Error(`${def.name}: unsupported member ${m.type}`);
  }
  return out;
}

// webidl2 AST (several files) -> the model emit() prints.
export function describe(sources) {
  const model = { sources: sources.map((s) => s.name), decls: [] };
  for (const { name, text } of sources) {
    for (const d of parse(text, { sourceName: name })) {
      const base = { name: d.name, source: name, partial: !!d.partial };
      if (d.type === 'enum') model.decls.push({ ...base, kind: 'enum', values: d.values.map((v) => v.value) });
      else if (d.type === 'typedef') model.decls.push({ ...base, kind: 'typedef', type: tsType(d.idlType) });
      else if (d.type === 'dictionary') model.decls.push({ ...base, kind: 'dictionary', inherits: d.inheritance, members: members(d) });
      else if (d.type === 'interface' || d.type === 'interface mixin') {
        model.decls.push({ ...base, kind: d.type === 'interface' ? 'interface' : 'mixin', inherits: d.inheritance,
          exposed: d.extAttrs.some((a) => a.name === 'Exposed'), members: members(d) });
      } else if (d.type === 'namespace') model.decls.push({ ...base, kind: 'namespace', members: members(d) });
      else if (d.type === 'includes') model.decls.push({ ...base, kind: 'includes', name: d.target, mixin: d.includes });
      else throw new Error(`${name}: unsupported definition ${d.type}`);
    }
  }
  return model;
}

function emitMember(m) {
  if (m.kind === 'attribute') return `${m.readonly ? 'readonly ' : ''}${m.name}: ${m.type};`;
  if (m.kind === 'operation') return `${m.name}(${m.args}): ${m.type};`;
  if (m.kind === 'field') return `${m.name}${m.optional ? '?' : ''}: ${m.type};`;
  if (m.kind === 'const') return `readonly ${m.name}: ${JSON.stringify(m.value)};`;
  return null;
}

// The model -> the .d.ts text: everything global (`declare global`), plus the
// ES-module entry's exports.
export function emit(model) {
  const lines = [];
  const say = (indent, s) => lines.push(`${'  '.repeat(indent)}${s}`);
  say(0, `// Generated by tools/idl_dts.mjs from ${model.sources.join(' and ')}. Do not edit.`);
  say(0, '');
  say(0, 'declare global {');
  const constructors = new Map();
  for (const d of model.decls) {
    if (d.kind === 'enum') say(1, `type ${d.name} = ${d.values.map((v) => JSON.stringify(v)).join(' | ')};`);
    else if (d.kind === 'typedef') say(1, `type ${d.name} = ${d.type};`);
    else if (d.kind === 'includes') say(1, `interface ${d.name} extends ${d.mixin} {}`);
    else if (d.kind === 'namespace') {
      say(1, `namespace ${d.name} {`);
      for (const m of d.members) {
        if (m.kind === 'attribute') say(2, `${m.readonly ? 'const' : 'let'} ${m.name}: ${m.type};`);
        else if (m.kind === 'operation') say(2, `function ${m.name}(${m.args}): ${m.type};`);
      }
      say(1, '}');
    } else {
      const heritage = d.inherits ? ` extends ${d.inherits}` : '';
      say(1, `interface ${d.name}${heritage} {`);
      for (const m of d.members) {
        const text = m.static ? null : emitMember(m);
        if (text) say(2, text);
      }
      say(1, '}');
      if (d.kind === 'interface' && (d.exposed || !d.partial)) {
        const ctors = constructors.get(d.name) || [];
        ctors.push(...d.members.filter((m) => m.kind === 'constructor' || m.static));
        constructors.set(d.name, ctors);
      }
    }
  }
  // Interface objects: `new X(...)` only where the IDL has a constructor.
  for (const [name, statics] of constructors) {
    say(1, `var ${name}: {`);
    say(2, `prototype: ${name};`);
    for (const m of statics) say(2, m.kind === 'constructor' ? `new(${m.args}): ${name};` : `${m.name}(${m.args}): ${m.type};`);
    say(1, '};');
  }
  say(0, '}');
  return lines.join('\n') + '\n';
}

// What the polyfill adds around the generated declarations: the page-set
// config global, a stand-in for WebGPU's GPUDevice (merged with @webgpu/types'
// when present), and the ES-module entry's exports.
const PROLOGUE = `
declare global {
  /** Set before the polyfill loads (see WebNNPolyfillConfig). */
  var WEBNN_POLYFILL_CONFIG: Partial<WebNNPolyfillConfig> | undefined;
  /** WebGPU's types (declared fully by @webgpu/types; these only merge with them). */
  interface GPUDevice { readonly __webnnPolyfillGPUDevice?: never }
  interface GPUBuffer { readonly __webnnPolyfillGPUBuffer?: never }
}

/** navigator.ml, as installed by importing the polyfill. */
export declare const ml: ML;
export default webnnPolyfill;
`;

function main(argv) {
  const outIndex = argv.indexOf('--out');
  if (outIndex < 0 || argv.length < outIndex + 2) throw new Error('usage: node tools/idl_dts.mjs --out FILE IDL...');
  const out = argv[outIndex + 1];
  const files = argv.filter((_, i) => i !== outIndex && i !== outIndex + 1);
  const model = describe(files.map((f) => ({ name: basename(f), text: readFileSync(f, 'utf8') })));
  writeFileSync(out, emit(model) + PROLOGUE);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
