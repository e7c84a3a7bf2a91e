// The WebNN IDL as the fuzzer's plain JSON (parsed by webidl2): interfaces with
// their regular operations, dictionaries with inherited members, enums, typedefs.
//   node tests/fuzz/idl_json.mjs path/to/webnn.idl
import { readFileSync } from 'node:fs';
import { parse } from 'webidl2';

const text = (t) => {
  if (!t) return null;
  if (t.union) return { union: t.idlType.map(text), nullable: t.nullable };
  if (t.generic) return { generic: t.generic, of: t.idlType.map(text), nullable: t.nullable };
  return { name: t.idlType, nullable: t.nullable };
};
const attrs = (list) => (list || []).map((a) => a.name);

const out = { interfaces: {}, dictionaries: {}, enums: {}, typedefs: {} };
for (const def of parse(readFileSync(process.argv[2], 'utf8'))) {
  if (def.type === 'interface' || def.type === 'interface mixin') {
    const iface = out.interfaces[def.name] ||= { operations: [], constructors: [] };
    for (const m of def.members) {
      const args = (m.arguments || []).map((a) => ({
        name: a.name, optional: a.optional, variadic: a.variadic, type: text(a.idlType), extAttrs: attrs(a.idlType.extAttrs).concat(attrs(a.extAttrs)),
      }));
      if (m.type === 'constructor') iface.constructors.push(args);
      else if (m.type === 'operation' && m.name && !m.special) iface.operations.push({ name: m.name, args });
    }
  } else if (def.type === 'dictionary') {
    const d = out.dictionaries[def.name] ||= { inherits: def.inheritance || null, members: [] };
    for (const m of def.members) {
      d.members.push({ name: m.name, required: m.required, type: text(m.idlType), extAttrs: attrs(m.idlType.extAttrs).concat(attrs(m.extAttrs)) });
    }
  } else if (def.type === 'enum') {
    out.enums[def.name] = def.values.map((v) => v.value);
  } else if (def.type === 'typedef') {
    out.typedefs[def.name] = text(def.idlType);
  }
}
process.stdout.write(JSON.stringify(out));
