"""The backend interface: the one seam between a built graph and the machine
that runs it.

A backend is an object owned by exactly one context (`Context.backend`); it
keeps every switch, cache and buffer of its own, so two contexts never share
state. The context does all WebNN validation (state, bindings, descriptors)
before it calls the backend; a backend only plans and runs.

    name                       "cpu", "webgpu", ...
    preferred_input_layout     "nchw" | "nhwc": the layout its conv/pool
                               kernels are fastest at (opSupportLimits)
    supports(op)               True when it can run every call of that op
                               (an op it cannot run is left out of
                               opSupportLimits(), and build() rejects it)
    op_support_limits(limits)  the registry's limits of the supported ops,
                               narrowed to what the backend runs
    plan(graph)                compile a built graph once (build()); returns
                               an opaque plan, the only place compile results
                               and run-time caches live (never node.attrs)
    allocate(dtype, shape)     tensor storage, zero-filled
    free(storage)              release it (createTensor's MLTensor.destroy())
    write(storage, array)      copy `array` into it; returns the storage
    read(storage)              its contents as a numpy array (a view: callers
                               that keep it copy it)
    device_read(storage)       None when read() can answer now; else what the
                               JS shim must read from the device (webgpu)
    export_problem(dtype, shape)
                               None when export() can rent such a tensor to the
                               context's GPUDevice, else why not (a sentence)
    export(storage)            exportToGPU: {"buffer": id, "bytes": n}, the device
                               buffer holding its current contents (webgpu)
    returned(storage)          the page gave it back: the device buffer is current
    release_plan(plan)         the graph is destroyed: free what its plan holds
    dispatch(plan, inputs, outputs)
                               run the plan with input storages, writing
                               each output storage; returns name -> storage
                               (a backend may return new storage objects)
    execute(plan, feeds)       run the plan on numpy arrays, return name ->
                               numpy array (compute(), Python callers)
    status()                   a plain dict for debugging
"""
from __future__ import annotations


class Backend:
    name = "abstract"
    preferred_input_layout = "nchw"

    def supports(self, op) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def op_support_limits(self, registry_limits: dict, ops: dict) -> dict:
        """`registry_limits` maps op name -> the registry's limits; keep the
        ops this backend runs (a backend narrowing data types overrides this)."""
        return {name: limits for name, limits in registry_limits.items() if self.supports(ops[name])}

    def plan(self, graph):  # pragma: no cover - interface
        raise NotImplementedError

    def allocate(self, dtype: str, shape: tuple):  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """The context is destroyed: release threads or devices this backend holds."""

    def free(self, storage) -> None:
        pass

    def write(self, storage, array):  # pragma: no cover - interface
        raise NotImplementedError

    def read(self, storage):  # pragma: no cover - interface
        raise NotImplementedError

    def device_read(self, storage):
        return None

    def export_problem(self, dtype: str, shape: tuple):
        return f"the {self.name} backend keeps tensors in the engine's memory, not in GPU buffers"

    def export(self, storage) -> dict:  # pragma: no cover - only after export_problem() said None
        raise NotImplementedError

    def returned(self, storage) -> None:  # pragma: no cover - only after export()
        raise NotImplementedError

    def release_plan(self, plan) -> None:
        pass

    def dispatch(self, plan, inputs: dict, outputs: dict) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def execute(self, plan, feeds: dict) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def status(self) -> dict:
        return {"backend": self.name}
