"""onnxruntime as an oracle for the ONNX semantics: one-node models or whole .onnx files.

onnx and onnxruntime are imported lazily; without them every entry point raises OracleMissing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

import numpy as np

from ..errors import OracleMissing


def load() -> tuple[Any, Any]:
    """(onnx, onnxruntime), or OracleMissing saying how to install them."""
    try:
        import onnx
        import onnxruntime
    except ImportError:
        raise OracleMissing(
            "onnx and onnxruntime are not installed; pip install 'irpool[onnx]'"
        ) from None
    return onnx, onnxruntime


class NodeOptions(TypedDict, total=False):
    """node_model's and run_node's keyword options."""

    domain: str
    n_outputs: int
    initializers: Mapping[int, np.ndarray] | None


def node_model(
    op_type: str,
    attrs: Mapping[str, object],
    inputs: Sequence[np.ndarray | None],
    opset: int,
    domain: str = "",
    n_outputs: int = 1,
    initializers: Mapping[int, np.ndarray] | None = None,
) -> Any:
    """A ModelProto with one node, its inputs named in0, in1, ...; `inputs[i]` None leaves that
    optional input empty, and `initializers` turns some inputs into constants."""
    load()
    from onnx import TensorProto, helper, numpy_helper

    names: list[str] = []
    graph_inputs = []
    inits = []
    for i, array in enumerate(inputs):
        if array is None:
            names.append("")
            continue
        name = f"in{i}"
        names.append(name)
        if initializers and i in initializers:
            inits.append(numpy_helper.from_array(initializers[i], name))
        else:
            dtype = helper.np_dtype_to_tensor_dtype(array.dtype)
            graph_inputs.append(helper.make_tensor_value_info(name, dtype, list(array.shape)))
    first = next(a for a in inputs if a is not None)
    out_type = helper.np_dtype_to_tensor_dtype(first.dtype)
    outputs = [helper.make_tensor_value_info("out0", out_type, None)]
    if n_outputs == 2:
        outputs.append(helper.make_tensor_value_info("out1", TensorProto.INT64, None))
    node = helper.make_node(op_type, names, [o.name for o in outputs], domain=domain)
    node.attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
    graph = helper.make_graph([node], "irpool_node", graph_inputs, outputs, initializer=inits)
    imports = [helper.make_opsetid("", opset if not domain else 22)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    return model


def session(model: Any, threads: int | None = None, spin: bool = True) -> Any:
    _, ort = load()
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # fatal only: onnxruntime logs a failed kernel on stderr itself (a second line besides
    # irpool's one-line error); irpool reports the failure in its own words
    options.log_severity_level = 4
    ort.set_default_logger_severity(4)
    if not isinstance(model, (bytes, str)) and model.ir_version > MAX_IR_VERSION:
        # onnx writes IR versions newer than onnxruntime reads; the pooling ops are unchanged
        model = _copy(model)
        model.ir_version = MAX_IR_VERSION
    data = model if isinstance(model, (bytes, str)) else model.SerializeToString()
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


MAX_IR_VERSION = 10


def _copy(model: Any) -> Any:
    onnx, _ = load()
    clone = onnx.ModelProto()
    clone.CopyFrom(model)
    return clone


def probe_tensors(
    model: Any, names: Sequence[str], feeds: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run a ModelProto in onnxruntime and return the named intermediate tensors too."""
    onnx, _ = load()
    from onnx import shape_inference

    clone = _copy(model)
    try:
        typed = shape_inference.infer_shapes(clone, strict_mode=False)
    except Exception:
        typed = clone
    known = {v.name: v for v in [*typed.graph.value_info, *typed.graph.output, *typed.graph.input]}
    existing = {o.name for o in clone.graph.output}
    for name in names:
        if name in existing:
            continue
        if name not in known:
            raise KeyError(name)
        info = onnx.ValueInfoProto()
        info.CopyFrom(known[name])
        clone.graph.output.append(info)
        existing.add(name)
    sess = session(clone)
    out_names = [o.name for o in sess.get_outputs()]
    values = sess.run(None, dict(feeds))
    return {n: np.asarray(v) for n, v in zip(out_names, values, strict=True)}


def run(model: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(a) for a in session(model).run(None, dict(feeds))]


def run_node(
    op_type: str,
    attrs: Mapping[str, object],
    inputs: Sequence[np.ndarray | None],
    opset: int,
    **options: Unpack[NodeOptions],
) -> list[np.ndarray]:
    """Run one node in onnxruntime on CPU (node_model's arguments): the given inputs that are
    not initializers are fed."""
    model = node_model(op_type, attrs, inputs, opset, **options)
    given = {f"in{i}": a for i, a in enumerate(inputs) if a is not None}
    return run(
        model, {graph_input.name: given[graph_input.name] for graph_input in model.graph.input}
    )


def finals_with_and_without(
    model: Any, names: Sequence[str], feeds: Mapping[str, np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The model's own outputs run as it stands, and run with the tensors `names` added as
    outputs (a probe): onnxruntime's graph rewrites depend on which tensors are outputs."""
    finals = [o.name for o in model.graph.output]
    plain = run(model, feeds)
    probed = probe_tensors(model, names, feeds)
    return plain, [probed[n] for n in finals]
