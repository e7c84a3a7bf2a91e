// The WebIDL tables the shim converts arguments with, taken from the schema that
// tools/idl_schema.mjs generates from the IDL file at build time (the Python core
// reads the same JSON, so they cannot drift). Nothing here is written by hand.
//   IDL_ENUMS[name] = [values]; IDL_DICTS[name] = [[member, type, default|null, required?], ...]
//   IDL_ALIASES[dict] = {alias: member}; IDL_OPS[name] = {params: [[name, type]], options, returnsSequence}

import IDL_SCHEMA from '../../py/webnn_core/idl_schema.json';

export const IDL_ENUMS = IDL_SCHEMA.enums;
export const IDL_DICTS = IDL_SCHEMA.dictionaries;
export const IDL_ALIASES = IDL_SCHEMA.aliases;
export const IDL_OPS = IDL_SCHEMA.ops;
