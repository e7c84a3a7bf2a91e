// Generate the WebNN schema from the WebIDL file: one JSON document that the JS
// shim (js/src/idl_tables.js: argument conversion) and the Python core
// (webnn_core/schema.py: defaults, enum checks, opSupportLimits members) both
// read, so they cannot drift. Parsed with webidl2, the parser WPT's idlharness uses.
//
//   node tools/idl_schema.mjs [--idl 2026-09|2025-03|FILE] [--out FILE]
//
// Type codes (the shim's compact form): operand, tensor, u32! ([EnforceRange]
// unsigned long), u32, i32!, u64!, f64 (double), f32 (float), number (MLNumber),
// bool, usv, str, buffer, gpudevice, an enum or dictionary name, T[] for
// sequence<T>, A|B for a union. Dictionary members: [name, type, default,
// required?] in WebIDL order (least-derived dictionary first, each sorted).
// spec/extensions.json adds what the polyfill accepts beyond the IDL (documented
// in the README): extra enum values, extra members, member aliases.

import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve, basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { parse } = require('webidl2');

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const IDL_VERSIONS = { '2026-09': 'spec/webnn-2026-09.idl', '2025-03': 'spec/webnn-2025-03.idl' };
export const DEFAULT_IDL = '2026-09';

const SCALARS = {
  'unsigned long': 'u32', long: 'i32', 'unsigned long long': 'u64', double: 'f64', float: 'f32',
  'unrestricted double': 'f64u', boolean: 'bool', USVString: 'usv', DOMString: 'str',
  MLNumber: 'number', MLOperand: 'operand', MLTensor: 'tensor', AllowSharedBufferSource: 'buffer',
  GPUDevice: 'gpudevice',
};

function typeCode(t, typedefs, extAttrs = []) {
  const attrs = [...extAttrs, ...(t.extAttrs || [])];
  if (t.union) return t.idlType.map((u) => typeCode(u, typedefs)).join('|');
  if (t.generic === 'sequence') return `${typeCode(t.idlType[0], typedefs)}[]`;
  if (t.generic) return `${t.generic}<${t.idlType.map((u) => typeCode(u, typedefs)).join(',')}>`;
  const name = t.idlType;
  if (!SCALARS[name] && typedefs[name]) return typeCode(typedefs[name], typedefs, attrs);
  const code = SCALARS[name] || name;
  return attrs.some((a) => a.name === 'EnforceRange') ? `${code}!` : code;
}

function defaultValue(d) {
  if (!d) return undefined;
  if (d.type === 'string' || d.type === 'boolean') return d.value;
  if (d.type === 'number') return Number(d.value);
  if (d.type === 'sequence') return [];
  if (d.type === 'dictionary') return {};
  if (d.type === 'null') return null;
  throw new Error(`unsupported default ${JSON.stringify(d)}`);
}

export function buildSchema(idlText, idlName, extensions) {
  const defs = parse(idlText);
  const typedefs = {};
  const enums = {};
  const rawDicts = {};
  const interfaces = {};
  for (const d of defs) {
    if (d.type === 'typedef') typedefs[d.name] = d.idlType;
    else if (d.type === 'enum') enums[d.name] = d.values.map((v) => v.value);
    else if (d.type === 'dictionary') {
      const prev = rawDicts[d.name] || { inheritance: null, members: [] };
      rawDicts[d.name] = { inheritance: d.inheritance || prev.inheritance, members: [...prev.members, ...d.members] };
    } else if (d.type === 'interface') {
      const it = interfaces[d.name] || (interfaces[d.name] = { operations: {}, attributes: [] });
      for (const m of d.members) {
        if (m.type === 'operation' && m.name) {
          (it.operations[m.name] || (it.operations[m.name] = [])).push({
            params: m.arguments.map((a) => [a.name, typeCode(a.idlType, typedefs, a.extAttrs), a.optional]),
            returns: typeCode(m.idlType, typedefs),
          });
        } else if (m.type === 'attribute') {
          it.attributes.push(m.name);
        }
      }
    }
  }
  for (const [name, values] of Object.entries(extensions.enumValues || {})) {
    enums[name] = [...enums[name], ...values.filter((v) => !enums[name].includes(v))];
  }
  Object.assign(enums, extensions.enums || {});

  const ownMembers = (name) => {
    const own = rawDicts[name].members.map((m) => {
      const entry = [m.name, typeCode(m.idlType, typedefs, m.extAttrs), defaultValue(m.default)];
      if (m.required) entry.push(true);
      return entry;
    });
    for (const [member, type, dflt] of (extensions.members || {})[name] || []) {
      if (!own.some((m) => m[0] === member)) own.push([member, type, dflt]);
    }
    return own.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  };
  const dictionaries = {};
  for (const name of Object.keys(rawDicts)) {
    const chain = [];
    for (let n = name; n; n = rawDicts[n].inheritance) chain.unshift(n);
    dictionaries[name] = chain.flatMap(ownMembers);
  }
  // Aliases apply only where the target member exists and the alias is not a member itself.
  const aliases = {};
  for (const [dict, map] of Object.entries(extensions.aliases || {})) {
    for (const [alias, target] of Object.entries(map)) {
      const members = dictionaries[dict] || [];
      if (members.some((m) => m[0] === target) && !members.some((m) => m[0] === alias)) {
        (aliases[dict] || (aliases[dict] = {}))[alias] = target;
      }
    }
  }

  // MLGraphBuilder operations built generically (input/constant/build are hand-written in the shim).
  const ops = {};
  const SPECIAL = new Set(['input', 'constant', 'build']);
  for (const [name, overloads] of Object.entries(interfaces.MLGraphBuilder.operations)) {
    if (SPECIAL.has(name)) continue;
    if (overloads.length !== 1) throw new Error(`MLGraphBuilder.${name}: unexpected overloads`);
    const { params, returns } = overloads[0];
    const last = params[params.length - 1];
    if (!last || !last[2] || !dictionaries[last[1]]) throw new Error(`MLGraphBuilder.${name}: no options dictionary`);
    ops[name] = {
      params: params.slice(0, -1).map(([p, t]) => [p, t]),
      options: last[1],
      returnsSequence: returns === 'operand[]',
    };
  }

  // opSupportLimits(): the members of MLOpSupportLimits; op entries name their operand keys.
  const limitsDict = dictionaries.MLOpSupportLimits;
  const supportLimits = { context: {}, ops: {} };
  for (const [member, type] of limitsDict) {
    if (ops[member]) supportLimits.ops[member] = dictionaries[type].map((m) => m[0]);
    else supportLimits.context[member] = type;
  }
  const tensorLimits = dictionaries.MLTensorLimits || dictionaries.MLSupportLimits;

  return {
    idl: idlName,
    generatedBy: 'tools/idl_schema.mjs',
    enums,
    dictionaries,
    aliases,
    extensionAliases: extensions.aliases || {},
    ops,
    supportLimits,
    tensorLimitsMembers: tensorLimits.map((m) => m[0]),
    interfaces,
  };
}

export function resolveIdl(choice) {
  const rel = IDL_VERSIONS[choice || DEFAULT_IDL];
  return resolve(ROOT, rel || choice);
}

function main(argv) {
  let idl = process.env.WEBNN_IDL || DEFAULT_IDL;
  let out = resolve(ROOT, 'py/webnn_core/idl_schema.json');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--idl') idl = argv[++i];
    else if (argv[i] === '--out') out = resolve(argv[++i]);
    else throw new Error(`usage: node tools/idl_schema.mjs [--idl ${Object.keys(IDL_VERSIONS).join('|')}|FILE] [--out FILE]`);
  }
  const path = resolveIdl(idl);
  const extensions = JSON.parse(readFileSync(resolve(ROOT, 'spec/extensions.json'), 'utf8'));
  const schema = buildSchema(readFileSync(path, 'utf8'), basename(path), extensions);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(schema, null, 1)}\n`);
  process.stderr.write(`idl_schema: ${basename(path)} -> ${out} (${Object.keys(schema.ops).length} ops)\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
