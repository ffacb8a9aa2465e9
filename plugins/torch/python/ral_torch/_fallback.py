"""compile(fallback=True): a module the compiler cannot take whole is traced with torch.fx, and the
maximal runs of nodes the compiler handles are compiled, each as a module of its own, while the
rest stays in PyTorch (_Fallback)."""

import copy
import inspect
import logging
import operator
from typing import Dict, List, Optional

import torch
from torch import Tensor

from . import _checks
from ._checks import TracingError
from ._compiler import CompileError, UnsupportedOperatorError
from ._compiled import CompiledModule, _Spec, _make
from ._export import _first_line, _summary, _warn

_log = logging.getLogger("ral_torch")


_COMPUTE_OPS = ("call_module", "call_function", "call_method")
# How many times fallback halves a run of nodes that failed as one part (each costs a compile).
_MAX_SPLITS = 16


class FallbackWarning(UserWarning):
    """Issued by ral_torch.compile(fallback=True) when part of a module stays in PyTorch."""


class _Fallback:
    """Compiles the parts of a module the compiler supports and keeps the rest in PyTorch.

    torch.fx traces the module; running the traced graph on the example inputs gives every node's
    value (and, with dynamic dims, running it again with those dims grown by one tells which dims
    of each value follow them). A node is compiled when its value and inputs are tensors and the
    compiler imports it exported alone, without a TracerWarning; maximal runs of such nodes in the
    graph's order become parts, each compiled as one module and called from the traced graph in
    place of its nodes. Runs are contiguous in a topological order, so the result stays acyclic.

    An fx graph has no Python control flow, but a part's ONNX export may still fix what its
    example fixes (a size read by an operator's symbolic function, say), so each compiled part is
    also run on the values the graph computes from the second input (_checks.SecondInput) and
    compared with them; a part that differs stays in PyTorch. The assembled module is compared
    once more as a whole, and when even that differs (torch.fx fixed something itself), or
    forward() cannot be traced, the whole module stays in PyTorch.
    """

    def __init__(self, job, module, inputs, dynamic, name, structure, params, whole_error,
                 second):
        self.job, self.inputs, self.dynamic = job, inputs, dynamic
        self.name, self.structure, self.params = name, structure, params
        self.whole_error = whole_error
        self.second = second
        self._part_count = 0
        self._splits_left = _MAX_SPLITS
        try:
            self.model = copy.deepcopy(module).eval()
        except Exception as e:  # noqa: BLE001  (whatever the module's __deepcopy__ raises)
            raise self._failure(f"fallback=True works on a copy of {name}, and copy.deepcopy "
                                f"failed: {type(e).__name__}: {_first_line(str(e))}") from e

    def run(self) -> CompiledModule:
        gm, opaque = self._trace()
        if gm is None:
            return self._keep_all(opaque)
        try:
            values = _record(gm, self.inputs)
        except Exception as e:  # noqa: BLE001  (the traced graph raised where eager did not)
            return self._keep_all(f"its torch.fx graph fails on the example inputs: "
                                  f"{type(e).__name__}: {_first_line(str(e))}")
        grown = _record(gm, self._grown_inputs(), self._growth_failed) if self.dynamic else None
        check = None
        if self.second.inputs is not None:
            check = _record(gm, self.second.inputs, lambda e: None) or None
        compute = [n for n in gm.graph.nodes if _is_compute(n)]
        kept = {}  # node -> why it stays in PyTorch
        for n in compute:
            reason = self._unsupported_reason(gm, n, values, grown)
            if reason is not None:
                kept[n] = reason
        parts = []
        current = None
        for n in gm.graph.nodes:
            if not _is_compute(n):
                continue
            if n in kept:
                current = None
            else:
                if current is None:
                    current = []
                    parts.append(current)
                current.append(n)
        done_parts = []  # (nodes, compiled part)
        self._splits_left = _MAX_SPLITS
        for nodes in parts:
            self._compile_run(gm, nodes, values, grown, check, kept, done_parts)
        parts = [nodes for nodes, _ in done_parts]
        compiled_parts = {k: part for k, (_, part) in enumerate(done_parts)}
        result = self._assemble(gm, parts, compiled_parts)
        done = sum(len(parts[k]) for k in compiled_parts)
        coverage = done / len(compute) if compute else 1.0
        report = self._report(compute, kept, len(compiled_parts), coverage, opaque)
        spec = _Spec(self.params, range(len(self.params)), "graph", *self.structure)
        compiled = _make(result, spec, coverage, report)
        why = self.second.mismatch(compiled)
        if why is not None:
            return self._keep_all(f"its compiled parts together differ from eager PyTorch on "
                                  f"another input: {why}")
        _log.info("%s", report)
        if kept:
            _warn(report, FallbackWarning)
        return compiled

    def _keep_all(self, why: str) -> CompiledModule:
        report = (f"ral_torch.compile: {self.name}: nothing compiled for {self.job.device}; the "
                  f"whole module stays in PyTorch: {why}\n(the whole module did not compile: "
                  f"{_summary(self.whole_error)})")
        _log.info("%s", report)
        _warn(report, FallbackWarning)
        spec = _Spec(self.params, range(len(self.params)), "graph", *self.structure)
        return _make(self.model, spec, 0.0, report)

    def _failure(self, message: str) -> CompileError:
        whole = self.whole_error
        text = f"{whole}\n{message}"
        if isinstance(whole, UnsupportedOperatorError):
            return UnsupportedOperatorError(text, whole.operators, whole.diagnostics)
        if isinstance(whole, TracingError):
            return TracingError(text, whole.warnings)
        return CompileError(text, whole.returncode, whole.diagnostics)

    def _trace(self):
        """(the GraphModule, {submodule: why torch.fx traced it as one node}), or (None, why
        forward() cannot be traced)."""
        try:
            sig = inspect.signature(self.model.forward)
            later = list(sig.parameters.values())[len(self.inputs):]
            concrete = {p.name: p.default for p in later
                        if p.default is not inspect.Parameter.empty
                        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        except (TypeError, ValueError):
            concrete = {}
        tracer = _OpaqueOnFailureTracer()
        try:
            graph = tracer.trace(self.model, concrete_args=concrete or None)
        except Exception as e:  # noqa: BLE001  (tracing raises whatever the module does)
            return None, (f"torch.fx cannot trace its forward(): {type(e).__name__}: "
                          f"{_first_line(str(e))}")
        targets = {n.target for n in graph.nodes if n.op == "call_module"}
        opaque = {p: why for p, why in tracer.opaque.items() if p in targets}
        return torch.fx.GraphModule(tracer.root, graph, self.name), opaque

    def _grown_inputs(self):
        grown = []
        for i, x in enumerate(self.inputs):
            for d in sorted(self.dynamic.get(i, {})):
                if x.shape[d] > 0:
                    x = torch.cat([x, x.narrow(d, 0, 1)], d)  # values stay valid (indices)
                else:
                    shape = list(x.shape)
                    shape[d] = 1
                    x = torch.zeros(shape, dtype=x.dtype, device=x.device)
            grown.append(x)
        return grown

    def _growth_failed(self, e):
        dims = ", ".join(f"input {i} dims {sorted(d)}" for i, d in self.dynamic.items())
        raise ValueError(f"ral_torch.compile: {self.name} fails when its dynamic dims ({dims}) "
                         f"change size, so they cannot be dynamic: {type(e).__name__}: {e}") from e

    def _dynamic_of(self, node, values, grown) -> List[int]:
        """The dims of node's value that changed size with the dynamic dims of the inputs."""
        if grown is None:
            return []
        a, b = values[node], grown.get(node)
        if not isinstance(b, Tensor):
            return []
        if a.dim() != b.dim():
            return list(range(a.dim()))
        return [d for d in range(a.dim()) if a.shape[d] != b.shape[d]]

    def _dynamic_inputs(self, nodes, values, grown) -> Dict[int, Dict[int, str]]:
        # Symbols of their own per input: equal sizes are not promised across inputs.
        dynamic = {}
        for i, a in enumerate(nodes):
            dims = self._dynamic_of(a, values, grown)
            if dims:
                dynamic[i] = {d: f"input_{i}_dim{d}" for d in dims}
        return dynamic

    def _unsupported_reason(self, gm, n, values, grown) -> Optional[str]:
        value = values[n]
        if not isinstance(value, Tensor):
            return f"returns {type(value).__name__}, not a tensor"
        args = [a for a in n.all_input_nodes if a.op != "get_attr"]
        for a in args:
            if not isinstance(values[a], Tensor):
                return f"takes {type(values[a]).__name__} '{a.name}', computed in the graph"
        g = torch.fx.Graph()
        env = {a: g.placeholder(f"input_{i}") for i, a in enumerate(args)}
        for a in n.all_input_nodes:
            if a.op == "get_attr":
                env[a] = g.node_copy(a)
        g.output(g.node_copy(n, lambda a: env[a]))
        tiny = torch.fx.GraphModule(gm, g)
        inputs = [values[a] for a in args]
        dynamic = self._dynamic_inputs(args, values, grown)
        key = (_node_target_key(gm, n), _args_key(n, values),
               tuple((x.dtype, tuple(x.shape), tuple(sorted(dynamic.get(i, {}))))
                     for i, x in enumerate(inputs)))
        return self.job.node_supported(key, tiny, inputs, dynamic)

    def _compile_run(self, gm, nodes, values, grown, check, kept, done):
        """Compiles the run of nodes as one part, or, when it does not compile or differs from
        eager PyTorch, each half of it (while the split budget lasts), down to single nodes that
        stay in PyTorch."""
        part = self._compile_part(gm, self._part_count, nodes, values, grown, check)
        self._part_count += 1
        if not isinstance(part, str):
            done.append((nodes, part))
            return
        if len(nodes) == 1 or self._splits_left <= 0:
            for n in nodes:
                kept[n] = part
            return
        self._splits_left -= 1
        half = len(nodes) // 2
        self._compile_run(gm, nodes[:half], values, grown, check, kept, done)
        self._compile_run(gm, nodes[half:], values, grown, check, kept, done)

    def _compile_part(self, gm, k, nodes, values, grown, check):
        """The part's CompiledModule, or why it stays in PyTorch."""
        inside = set(nodes)
        inputs, outputs = [], []
        for n in nodes:
            for a in n.all_input_nodes:
                if a not in inside and a.op != "get_attr" and a not in inputs:
                    inputs.append(a)
            if any(u not in inside for u in n.users):
                outputs.append(n)
        g = torch.fx.Graph()
        env = {a: g.placeholder(f"input_{i}") for i, a in enumerate(inputs)}
        for n in nodes:
            for a in n.all_input_nodes:
                if a.op == "get_attr" and a not in env:
                    env[a] = g.node_copy(a)
            env[n] = g.node_copy(n, lambda a: env[a])
        g.output(env[outputs[0]] if len(outputs) == 1 else tuple(env[o] for o in outputs))
        part = torch.fx.GraphModule(gm, g, class_name=f"{self.name}_part{k}")
        example = [values[a] for a in inputs]
        dynamic = self._dynamic_inputs(inputs, values, grown)
        structure = ("tensor", 1) if len(outputs) == 1 else ("tuple", len(outputs))
        params = [f"input_{i}" for i in range(len(inputs))]
        size = "1 node" if len(nodes) == 1 else f"{len(nodes)} nodes"
        try:
            compiled = self.job.compile_whole(part, example, dynamic, f"{self.name}_part{k}",
                                                  structure, params)
        except CompileError as e:
            return f"its part ({size}) did not compile: {_first_line(str(e))}"
        why = _part_mismatch(compiled, inputs, outputs, check)
        if why is not None:
            return (f"its part ({size}) compiled, but differs from eager PyTorch on another "
                    f"input: {why}")
        object.__setattr__(compiled, "_fx_io", (inputs, outputs))
        return compiled

    def _assemble(self, gm, parts, compiled_parts):
        owner = {}
        for k in compiled_parts:
            for n in parts[k]:
                owner[n] = k
        g = torch.fx.Graph()
        env = {}
        for n in gm.graph.nodes:
            k = owner.get(n)
            if n.op == "call_function" and not _is_compute(n):
                continue  # _assert_is_none: the parameter it checks is dropped below
            if k is None:
                env[n] = g.node_copy(n, lambda a: env[a])
                continue
            if n is not parts[k][0]:
                continue  # emitted with the part's first node
            part = compiled_parts[k]
            inputs, outputs = part._fx_io
            target = f"ral_part{k}"
            gm.add_submodule(target, part)
            call = g.call_module(target, tuple(env[a] for a in inputs))
            if len(outputs) == 1:
                env[outputs[0]] = call
            else:
                for j, o in enumerate(outputs):
                    env[o] = g.call_function(operator.getitem, (call, j))
        for k in compiled_parts:
            object.__delattr__(compiled_parts[k], "_fx_io")
        # Attributes only the compiled parts read (they hold their own copies), and the
        # parameters fixed to their defaults when tracing, so that forward() takes the example
        # inputs only (TorchScript would type a None default as a tensor that cannot be None).
        placeholders = [n for n in g.nodes if n.op == "placeholder"]
        for n in reversed(list(g.nodes)):
            if n.op == "get_attr" and not n.users:
                g.erase_node(n)
        for n in placeholders[len(self.inputs):]:
            if not n.users:
                g.erase_node(n)
        g.lint()
        return torch.fx.GraphModule(gm, g, class_name=self.name)

    def _report(self, compute, kept, n_parts, coverage, opaque) -> str:
        done = len(compute) - len(kept)
        lines = [f"ral_torch.compile: {self.name}: {done} of {len(compute)} graph nodes compiled "
                 f"({coverage:.1%}) in {n_parts} part(s) for {self.job.device}"]
        if kept:
            lines.append("kept in PyTorch:")
            for n, why in kept.items():
                lines.append(f"  {n.name} ({_describe_target(n)}): {why}")
        if opaque:
            lines.append("traced as one node each (torch.fx cannot trace into them):")
            for path, why in opaque.items():
                lines.append(f"  module {path}: {why}")
        lines.append(f"(the whole module did not compile: {_summary(self.whole_error)})")
        return "\n".join(lines)


class _OpaqueOnFailureTracer(torch.fx.Tracer):
    """torch.fx's tracer, but a submodule it cannot trace into (Python control flow on a
    tensor, len() of a proxy, ...) becomes one call_module node instead of failing the trace;
    `opaque` says which and why. The nodes the failed attempt recorded are removed."""

    def __init__(self):
        super().__init__()
        self.opaque: Dict[str, str] = {}

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        if self.is_leaf_module(m, path) or path in self.opaque:
            return self.create_proxy("call_module", path, args, kwargs)
        before = set(self.graph.nodes)
        try:
            return super().call_module(m, forward, args, kwargs)
        except Exception as e:  # noqa: BLE001  (whatever tracing into it raised)
            for n in reversed(list(self.graph.nodes)):
                # get_attr nodes may be cached by the tracer for later uses: left, and removed
                # with the other unused ones when the graph is assembled.
                if n not in before and n.op != "get_attr" and not n.users:
                    self.graph.erase_node(n)
            self.opaque[path] = f"{type(e).__name__}: {_first_line(str(e))}"
            return self.create_proxy("call_module", path, args, kwargs)


def _part_mismatch(compiled, inputs, outputs, check) -> Optional[str]:
    """What differs between a compiled part and eager PyTorch's values for its nodes on the
    second input (None: nothing, or nothing to compare with)."""
    if check is None:
        return None
    args = [check.get(a) for a in inputs]
    want = [check.get(o) for o in outputs]
    if not all(isinstance(v, Tensor) for v in args + want):
        return None
    try:
        with torch.no_grad():
            got = _checks.as_list(compiled(*[a.detach().clone() for a in args]))
    except Exception as e:  # noqa: BLE001
        return f"it fails where eager PyTorch does not: {_first_line(str(e))}"
    return _checks.compare([w.detach() for w in want], got)


def _is_compute(n) -> bool:
    # torch.fx adds _assert_is_none for parameters fixed to None: bookkeeping, not computation.
    return n.op in _COMPUTE_OPS and n.target is not getattr(
        torch.fx._symbolic_trace, "_assert_is_none", None)


def _record(gm, inputs, on_error=None) -> dict:
    """Every node's value from running gm on inputs (copies of tensors: a later in-place node,
    such as nn.ReLU(inplace=True), would change the recorded value)."""
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            values[n] = v.detach().clone() if isinstance(v, Tensor) else v
            return v

    try:
        with torch.no_grad():
            Recorder(gm).run(*inputs)
    except Exception as e:  # noqa: BLE001
        if on_error is None:
            raise
        on_error(e)
    return values


def _node_target_key(gm, n) -> tuple:
    if n.op == "call_module":
        sub = gm.get_submodule(n.target)
        return (n.op, type(sub).__module__, type(sub).__qualname__, sub.extra_repr())
    if n.op == "call_function":
        return (n.op, getattr(n.target, "__module__", ""),
                getattr(n.target, "__qualname__", repr(n.target)))
    return (n.op, str(n.target))


def _args_key(n, values) -> str:
    """The node's arguments with graph values replaced by their type, as text."""
    def describe(a):
        v = values.get(a)
        if a.op == "get_attr" and isinstance(v, Tensor):
            return f"<attr {v.dtype} {tuple(v.shape)}>"
        return "<input>"
    return repr(torch.fx.node.map_arg((n.args, n.kwargs), describe))


def _describe_target(n) -> str:
    if n.op == "call_module":
        return f"module {n.target}"
    if n.op == "call_method":
        return f"Tensor.{n.target}"
    try:
        return torch.fx.node._get_qualified_name(n.target)
    except Exception:  # noqa: BLE001  (a callable without a qualified name)
        return repr(n.target)
