// The WebIDL tables the shim converts arguments with, taken from IDL_SCHEMA: the
// schema tools/idl_schema.mjs generates from the IDL file at build time (the
// Python core reads the same JSON). Nothing here is written by hand.
//   IDL_ENUMS[name] = [values]; IDL_DICTS[name] = [[member, type, default|null, required?], ...]
//   IDL_ALIASES[dict] = {alias: member}; IDL_OPS[name] = {params: [[name, type]], options, returnsSequence}

const IDL_ENUMS = IDL_SCHEMA.enums;
const IDL_DICTS = IDL_SCHEMA.dictionaries;
const IDL_ALIASES = IDL_SCHEMA.aliases;
const IDL_OPS = IDL_SCHEMA.ops;
