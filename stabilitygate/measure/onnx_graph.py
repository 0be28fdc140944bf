"""The ONNX graph of all-MiniLM-L6-v2, written with the `onnx` package's graph API from the weights' header.

The graph is the whole sentence-transformers model in float64, as the torch reference computes it:
BERT embeddings (word + token type + position, layer norm), six encoder layers (12-head attention,
GELU feed-forward, each followed by residual and layer norm), mean pooling over the attention mask and
L2 normalisation. GELU is the float64 polynomial of measure/onnx_gelu.py (onnxruntime has no float64
Erf). The weights stay in `model.safetensors`: each is an initializer whose external data is its byte
range in that file (untouched float32 numbers, cast to float64 in the graph; the Gather of the word
table is done in float32 and only its rows cast). So the graph itself is small (~0.3 MB) and the weights
are stored once. Only building the graph needs `onnx`; running it needs only onnxruntime.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.model_files import DEFAULT_MODEL, WEIGHTS_NAME, TensorEntry, not_installed, read_header
from stabilitygate.measure.onnx_gelu import GELU_LIMIT, GELU_PIECES, check_gelu_tables, gelu_tables

OPSET = 17
ONNX_VERSION = "1.23.2"  # pinned in pyproject.toml ([dev]); the wheel's build uses it
#: How an install that lacks onnx is told what to add (measure/model_files.py `not_installed`).
ONNX_PIECE = f"the onnx package that builds its graph once (pip install onnx=={ONNX_VERSION})"
IR_VERSION = 8  # what opset 17 needs; onnxruntime refuses IR versions newer than it knows
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "sentence_embedding"
HIDDEN = 384
HEADS = 12
LAYERS = 6
INTERMEDIATE = 1536
VOCABULARY = 30522
MAX_POSITIONS = 512
LAYER_NORM_EPS = 1e-12


class _Builder:
    """Nodes with generated output names, and the graph's constants."""

    def __init__(self, weights: dict[str, TensorEntry]) -> None:
        from onnx import TensorProto

        self.proto = TensorProto
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0
        self._floats: dict[str, str] = {}
        self.gelu_rows: list[str] = []  # the polynomial's coefficient tables, lowest power first

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        self._count += 1
        output = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def constant(self, name: str, values: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(values, name))
        return name

    def double(self, value: float) -> str:
        """A float64 scalar constant (one per distinct value)."""
        key = repr(float(value))
        if key not in self._floats:
            self._floats[key] = self.constant(f"const_{len(self._floats)}", np.array(value, dtype=np.float64))
        return self._floats[key]

    def stored(self, name: str, shape: tuple[int, ...]) -> str:
        """The float32 weight `name`, as it lies in model.safetensors (external data: nothing copied)."""
        entry = self.weights.get(name)
        if entry is None or entry.shape != shape or entry.dtype != np.dtype("<f4"):
            found = "missing" if entry is None else f"{entry.dtype} {entry.shape}"
            raise CannotMeasure(f"{DEFAULT_MODEL}: {WEIGHTS_NAME} has no float32 {name} of shape {shape} ({found})")
        tensor = self.proto()
        tensor.name = name
        tensor.data_type = self.proto.FLOAT
        tensor.dims.extend(shape)
        tensor.data_location = self.proto.EXTERNAL
        for key, value in (("location", WEIGHTS_NAME), ("offset", entry.start), ("length", entry.end - entry.start)):
            item = tensor.external_data.add()
            item.key, item.value = key, str(value)
        self.initializers.append(tensor)
        return name

    def weight(self, name: str, shape: tuple[int, ...]) -> str:
        """The weight cast to float64 (exact: the float32 numbers are the model's own)."""
        return self.op("Cast", self.stored(name, shape), to=self.proto.DOUBLE)

    def linear(self, x: str, prefix: str, n_in: int, n_out: int) -> str:
        """x @ W.T + b on a 2-D input, with W as stored ([out, in])."""
        w = self.weight(f"{prefix}.weight", (n_out, n_in))
        b = self.weight(f"{prefix}.bias", (n_out,))
        return self.op("Gemm", x, w, b, transB=1)

    def layer_norm(self, x: str, prefix: str) -> str:
        gamma = self.weight(f"{prefix}.weight", (HIDDEN,))
        beta = self.weight(f"{prefix}.bias", (HIDDEN,))
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=LAYER_NORM_EPS)


def _embeddings(g: _Builder, shape_2d: str) -> str:
    """Word + token type + position embeddings, layer-normalised: [tokens, hidden] (2-D)."""
    double = g.proto.DOUBLE
    words = g.stored("embeddings.word_embeddings.weight", (VOCABULARY, HIDDEN))
    word = g.op("Cast", g.op("Gather", words, "input_ids"), to=double)
    types = g.weight("embeddings.token_type_embeddings.weight", (2, HIDDEN))
    summed = g.op("Add", word, g.op("Gather", types, "token_type_ids"))
    length = g.op("Gather", shape_2d, g.constant("axis_1", np.array(1, dtype=np.int64)), axis=0)
    positions = g.op(
        "Range",
        g.constant("zero", np.array(0, dtype=np.int64)),
        length,
        g.constant("one", np.array(1, dtype=np.int64)),
    )
    table = g.stored("embeddings.position_embeddings.weight", (MAX_POSITIONS, HIDDEN))
    summed = g.op("Add", summed, g.op("Cast", g.op("Gather", table, positions), to=double))
    flat = g.op("Reshape", summed, g.constant("flat_shape", np.array([-1, HIDDEN], dtype=np.int64)))
    return g.layer_norm(flat, "embeddings.LayerNorm")


def _attention(g: _Builder, x: str, prefix: str, heads_shape: str, mask_bias: str) -> str:
    """Multi-head self-attention on [tokens, hidden]; the padded keys get -inf before the softmax."""
    scale = g.double(math.pow(HIDDEN / HEADS, -0.25))  # on q and k both, as torch's attention does

    def heads(name: str, perm: list[int]) -> str:
        projected = g.linear(x, f"{prefix}.self.{name}", HIDDEN, HIDDEN)
        return g.op("Transpose", g.op("Reshape", projected, heads_shape), perm=perm)

    q = g.op("Mul", heads("query", [0, 2, 1, 3]), scale)
    k = g.op("Mul", heads("key", [0, 2, 3, 1]), scale)
    scores = g.op("Add", g.op("MatMul", q, k), mask_bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), heads("value", [0, 2, 1, 3]))
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), "flat_shape")
    out = g.linear(merged, f"{prefix}.output.dense", HIDDEN, HIDDEN)
    return g.layer_norm(g.op("Add", out, x), f"{prefix}.output.LayerNorm")


def _gelu(g: _Builder, x: str) -> str:
    """max(x, 0) + GELU(-|x|) from the piecewise polynomial (measure/onnx_gelu.py does the same in numpy)."""
    position = g.op("Mul", g.op("Clip", g.op("Abs", x), "", g.double(GELU_LIMIT)), g.double(GELU_PIECES / GELU_LIMIT))
    piece = g.op("Clip", g.op("Floor", position), "", g.double(GELU_PIECES - 1))
    s = g.op("Sub", g.op("Mul", g.op("Sub", position, piece), g.double(2.0)), g.double(1.0))
    index = g.op("Cast", piece, to=g.proto.INT64)
    rows = g.gelu_rows
    value = g.op("Gather", rows[-1], index, axis=0)
    for row in rows[-2::-1]:
        value = g.op("Add", g.op("Mul", value, s), g.op("Gather", row, index, axis=0))
    return g.op("Add", g.op("Relu", x), value)


def _layer(g: _Builder, x: str, n: int, heads_shape: str, mask_bias: str) -> str:
    prefix = f"encoder.layer.{n}"
    attended = _attention(g, x, f"{prefix}.attention", heads_shape, mask_bias)
    inner = _gelu(g, g.linear(attended, f"{prefix}.intermediate.dense", HIDDEN, INTERMEDIATE))
    out = g.linear(inner, f"{prefix}.output.dense", INTERMEDIATE, HIDDEN)
    return g.layer_norm(g.op("Add", out, attended), f"{prefix}.output.LayerNorm")


def _pool_and_normalise(g: _Builder, hidden: str, shape_2d: str) -> str:
    """Mean over the unpadded tokens, then divided by its L2 norm (as sentence-transformers does)."""
    double = g.proto.DOUBLE
    per_text = g.op("Concat", shape_2d, g.constant("hidden", np.array([HIDDEN], dtype=np.int64)), axis=0)
    tokens = g.op("Reshape", hidden, per_text)
    mask = g.op("Unsqueeze", g.op("Cast", "attention_mask", to=double), g.constant("last", np.array([-1])))
    axis = g.constant("sequence_axis", np.array([1], dtype=np.int64))
    summed = g.op("ReduceSum", g.op("Mul", tokens, mask), axis, keepdims=0)
    count = g.op("Clip", g.op("ReduceSum", mask, axis, keepdims=0), g.double(1e-9), "")
    mean = g.op("Div", summed, count)
    norm = g.op("Clip", g.op("ReduceL2", mean, axes=[-1], keepdims=1), g.double(1e-12), "")
    return g.op("Div", mean, norm)


def build_graph(weights_file: Path) -> Any:
    """The model's graph (an onnx ModelProto) over the tensors of `weights_file`, by their byte ranges."""
    try:
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise not_installed([ONNX_PIECE]) from exc

    tables = gelu_tables()
    check_gelu_tables(tables)
    g = _Builder(read_header(weights_file))
    g.gelu_rows = [g.constant(f"gelu_c{j}", row) for j, row in enumerate(tables)]
    shape_2d = g.op("Shape", "input_ids")
    heads_shape = g.op("Concat", shape_2d, g.constant("head_dims", np.array([HEADS, HIDDEN // HEADS])), axis=0)
    keep = g.op("Cast", "attention_mask", to=TensorProto.BOOL)
    bias = g.op("Where", keep, g.double(0.0), g.double(-math.inf))
    mask_bias = g.op("Unsqueeze", bias, g.constant("mask_axes", np.array([1, 2], dtype=np.int64)))
    hidden = _embeddings(g, shape_2d)
    for n in range(LAYERS):
        hidden = _layer(g, hidden, n, heads_shape, mask_bias)
    out = _pool_and_normalise(g, hidden, shape_2d)
    g.nodes.append(helper.make_node("Identity", [out], [OUTPUT_NAME]))
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in INPUT_NAMES]
    output = helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.DOUBLE, ["batch", HIDDEN])
    graph = helper.make_graph(g.nodes, DEFAULT_MODEL, inputs, [output], g.initializers)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION, producer_name="stabilitygate"
    )


def check_graph(model: Any) -> None:
    """The onnx checker with shape inference, on a copy whose external weights are graph inputs.

    (The checker would otherwise want the weights file itself, and refuses a link to it.)
    """
    import onnx
    from onnx import helper

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    external = [t for t in copy.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    kept = [t for t in copy.graph.initializer if t.data_location != onnx.TensorProto.EXTERNAL]
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(kept)
    copy.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in external)
    onnx.checker.check_model(copy, full_check=True)


def write_graph(weights_file: Path, target: Path) -> list[str]:
    """Build and check the graph, write it to `target` (to lie beside `weights_file`); its weights' names."""
    model = build_graph(weights_file)
    check_graph(model)
    target.write_bytes(model.SerializeToString(deterministic=True))
    return [t.name for t in model.graph.initializer if t.data_location == t.EXTERNAL]
