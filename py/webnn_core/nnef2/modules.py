"""Modules and imports (seed §2.15): `import x;` finds `x.sknd` in the model's
folder first (`a.b` -> `a/b.sknd`, nested modules), then the standard
library. Operator names resolve as `module.op`, or unqualified within the
module that uses them."""
from __future__ import annotations

from ..nnef.errors import NNEFSemanticError
from . import stdlib
from .parser import parse_module


class ModuleSet:
    def __init__(self, main, read=None):
        """main: the parsed main module; read(relative path) -> text or None."""
        self.read = read or (lambda path: None)
        self.modules = {main.name: main}
        self.standard = set()
        self.standard_ops = set()
        self.load_imports(main)

    def load_imports(self, module):
        for name, pos in module.imports:
            self.module(name, pos)

    def module(self, name, pos=None):
        if name in self.modules:
            return self.modules[name]
        path = name.replace(".", "/") + ".sknd"
        text = self.read(path)
        if text is not None:
            m = parse_module(text, path, name)
            if m.graphs:
                raise NNEFSemanticError(f"module '{name}' defines graph '{m.graphs[0].name}'; only the main "
                                        f"module may (seed §2.15)").at(m.graphs[0].pos)
        elif name in stdlib.MODULES:
            m = stdlib.module(name)
            self.standard.add(name)
            self.standard_ops.update(op.qualified for op in m.operators)
        else:
            raise NNEFSemanticError(f"module '{name}' not found (no {path} in the model, and it is not a "
                                    f"standard module: {', '.join(stdlib.MODULES)})").at(pos)
        self.modules[name] = m
        self.load_imports(m)
        return m

    def resolve(self, name, current, pos):
        if "." in name:
            mod, op = name.rsplit(".", 1)
            m = self.module(mod, pos)
        else:
            m, op = self.modules[current], name
        found = m.find(op)
        if found is None:
            where = f"module '{m.name}'"
            raise NNEFSemanticError(f"operator '{op}' is not defined in {where}").at(pos)
        return found
