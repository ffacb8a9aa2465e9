#!/usr/bin/python3
"""Seeds for the ONNX importer fuzzers: small valid models, one per operator family, written as
<out dir>/<name>.onnx. Every size, axis and shape they need is an initializer or a Constant node,
so the importer folds it at import time: the structure-aware fuzzer (onnx_structure) mutates
exactly those values. A few take their shapes at run time (graph inputs) or have symbolic dims.

    /usr/bin/python3 tests/fuzz/onnx_seeds.py <out dir>
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64, I32, I8, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.INT8, TensorProto.BOOL


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="ral-fuzz-seeds")
    m.ir_version = 8
    # Outputs are declared with their element type only; inference fills in their shapes.
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    return m


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=op.lower(), **attrs)


def unary(op, dtype=F, shape=(2, 3), opset=17, **attrs):
    return model([node(op, ["x"], ["y"], **attrs)], [vi("x", dtype, shape)],
                 [vi("y", B if op in ("IsNaN", "IsInf") else dtype, None)], opset=opset)


def seeds():
    s = {}
    x23 = vi("x", F, [2, 3])
    y = vi("y", F, None)
    # Elementwise: binary with broadcasting and constant operands, unary, attributes.
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean", "PRelu"]:
        s[f"binary_{op.lower()}"] = model([node(op, ["x", "c"], ["y"])], [x23], [y],
                                          [const("c", [[0.5], [2.0]], np.float32)])
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
        s[f"compare_{op.lower()}"] = model([node(op, ["x", "c"], ["y"])], [vi("x", I64, [4])],
                                           [vi("y", B, None)], [const("c", [1, -1, 0, 7])])
    for op in ["And", "Or", "Xor"]:
        s[f"logic_{op.lower()}"] = model([node(op, ["x", "c"], ["y"])], [vi("x", B, [2])],
                                         [vi("y", B, None)], [const("c", [True, False], np.bool_)])
    s["mod_fmod"] = model([node("Mod", ["x", "c"], ["y"], fmod=1)], [x23], [y],
                          [const("c", [1.5, -2.0, 3.0], np.float32)])
    s["mod_int"] = model([node("Mod", ["x", "c"], ["y"])], [vi("x", I32, [3])], [vi("y", I32, None)],
                         [const("c", [3, -3, 7], np.int32)])
    for op in ["Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal",
               "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asin",
               "Acos", "Asinh", "Acosh", "Atanh", "Sign", "Softsign", "Softplus", "HardSwish",
               "IsNaN", "Identity"]:
        s[f"unary_{op.lower()}"] = unary(op)
    s["unary_not"] = unary("Not", dtype=B)
    s["leaky_relu"] = unary("LeakyRelu", alpha=0.2)
    s["elu"] = unary("Elu", alpha=0.7)
    s["selu"] = unary("Selu", alpha=1.5, gamma=1.1)
    s["hard_sigmoid"] = unary("HardSigmoid", alpha=0.3, beta=0.4)
    s["thresholded_relu"] = unary("ThresholdedRelu", alpha=0.5)
    s["is_inf"] = unary("IsInf", detect_negative=0, detect_positive=1)
    s["cast_int8"] = model([node("Cast", ["x"], ["y"], to=I8)], [x23], [vi("y", I8, None)])
    s["cast_like"] = model([node("CastLike", ["x", "c"], ["y"])], [x23], [vi("y", I32, None)],
                           [const("c", [0], np.int32)])
    s["clip"] = model([node("Clip", ["x", "lo", "hi"], ["y"])], [x23], [y],
                      [const("lo", -1.0, np.float32), const("hi", 1.0, np.float32)])
    s["clip_opset6"] = unary("Clip", opset=6, min=-0.5, max=0.5)
    s["where"] = model([node("Where", ["c", "x", "z"], ["y"])], [x23], [y],
                       [const("c", [True, False, True], np.bool_), const("z", [0.0], np.float32)])
    s["dropout"] = model([node("Dropout", ["x", "r"], ["y"])], [x23], [y],
                         [const("r", 0.5, np.float32)])
    # Constant folding: integer arithmetic on constants only (int8 wrap-around, casts, division).
    s["fold_int8"] = model(
        [node("Add", ["a", "a"], ["s"]), node("Div", ["s", "two"], ["y"])], [],
        [vi("y", I8, None)], [const("a", [100, -100, 127], np.int8), const("two", [2], np.int8)])
    s["fold_cast"] = model(
        [node("Cast", ["a"], ["c"], to=I8), node("Reshape", ["x", "shape"], ["y"])],
        [vi("x", F, [6])], [y, vi("c", I8, None)],
        [const("a", [2**53 + 1, 300]), const("shape", [2, 3])])
    s["fold_constant_nodes"] = model(
        [node("Constant", [], ["a"], value_ints=[2, 3]),
         node("Constant", [], ["b"], value_int=1),
         node("Constant", [], ["f"], value_float=1.5),
         node("Constant", [], ["fs"], value_floats=[1.0, 2.0]),
         node("Constant", [], ["t"], value=numpy_helper.from_array(np.array([[1, 2]], np.int64))),
         node("Mul", ["a", "b"], ["ab"]), node("Add", ["ab", "t"], ["y"])],
        [], [vi("y", I64, None)])
    # Linear algebra, convolution and pooling.
    s["matmul"] = model([node("MatMul", ["x", "w"], ["y"])], [x23], [y],
                        [const("w", np.ones((3, 4)), np.float32)])
    s["gemm"] = model([node("Gemm", ["x", "w", "c"], ["y"], alpha=0.5, beta=2.0, transB=1)], [x23],
                      [y], [const("w", np.ones((4, 3)), np.float32), const("c", [1.0], np.float32)])
    x4 = vi("x", F, [1, 2, 5, 5])
    w = const("w", np.ones((4, 2, 3, 3)), np.float32)
    s["conv"] = model([node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2],
                            dilations=[1, 1], kernel_shape=[3, 3], group=1)], [x4], [y], [w])
    s["conv_group_auto_pad"] = model(
        [node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", group=2)], [x4], [y],
        [const("w", np.ones((2, 1, 2, 2)), np.float32)])
    s["conv_transpose"] = model(
        [node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[0, 0, 1, 1],
              output_padding=[1, 1], dilations=[1, 1], group=1)], [x4], [y],
        [const("w", np.ones((2, 3, 3, 3)), np.float32)])
    s["conv_transpose_output_shape"] = model(
        [node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[10, 10])], [x4],
        [y], [const("w", np.ones((2, 1, 2, 2)), np.float32)])
    s["max_pool"] = model([node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                                pads=[0, 0, 1, 1], ceil_mode=1, dilations=[1, 1])], [x4], [y])
    s["average_pool"] = model([node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                    pads=[1, 1, 1, 1], count_include_pad=1)], [x4], [y])
    s["global_pools"] = model([node("GlobalAveragePool", ["x"], ["a"]),
                               node("GlobalMaxPool", ["a"], ["y"])], [x4], [y])
    s["batch_norm"] = model(
        [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-5)], [x4], [y],
        [const(n, [1.0, 2.0], np.float32) for n in "sbmv"])
    # Reductions and normalizations.
    s["reduce_sum_axes_input"] = model(
        [node("ReduceSum", ["x", "axes"], ["y"], keepdims=0, noop_with_empty_axes=0)], [x23], [y],
        [const("axes", [-1])])
    for op in ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
               "ReduceLogSum", "ReduceLogSumExp"]:
        s[op.lower()] = unary(op, axes=[0], keepdims=1)
    s["argmax"] = model([node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, select_last_index=1)],
                        [x23], [vi("y", I64, None)])
    s["argmin"] = model([node("ArgMin", ["x"], ["y"], axis=-1)], [x23], [vi("y", I64, None)])
    s["softmax"] = unary("Softmax", axis=-1)
    s["log_softmax"] = unary("LogSoftmax", axis=0)
    s["nll_loss"] = model(
        [node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="mean", ignore_index=1)],
        [x23], [y], [const("t", [0, 2])])
    s["softmax_cross_entropy"] = model(
        [node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], reduction="sum")], [x23], [y],
        [const("t", [0, 2])])
    s["instance_norm"] = model([node("InstanceNormalization", ["x", "s", "b"], ["y"],
                                     epsilon=1e-3)], [x4], [y],
                               [const("s", [1.0, 2.0], np.float32), const("b", [0.0, 1.0], np.float32)])
    s["layer_norm"] = model([node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1,
                                  epsilon=1e-5)], [x23], [y],
                            [const("s", [1.0, 2.0, 3.0], np.float32), const("b", [0.0], np.float32)])
    # Shapes: constant shape operands (folded), run-time ones and symbolic dims.
    xd = vi("x", F, ["n", 3])
    s["constant_of_shape"] = model(
        [node("ConstantOfShape", ["shape"], ["y"],
              value=numpy_helper.from_array(np.array([1.5], np.float32)))], [], [y],
        [const("shape", [2, 3])])
    s["shape_size"] = model([node("Shape", ["x"], ["s"], start=0, end=-1), node("Size", ["x"], ["n"]),
                             node("Concat", ["s", "s2"], ["y"], axis=0)],
                            [xd], [vi("y", I64, None), vi("n", I64, None)], [const("s2", [3])])
    s["range"] = model([node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", I64, None)],
                       [const("a", 0), const("b", 10), const("d", 3)])
    s["range_float"] = model([node("Range", ["a", "b", "d"], ["y"])], [], [y],
                             [const(n, v, np.float32) for n, v in [("a", 0.5), ("b", 4.0), ("d", 0.5)]])
    s["reshape"] = model([node("Reshape", ["x", "shape"], ["y"], allowzero=0)], [x23], [y],
                         [const("shape", [-1, 0, 1])])
    s["reshape_runtime_shape"] = model([node("Reshape", ["x", "shape"], ["y"])],
                                       [x23, vi("shape", I64, [2])], [vi("y", F, ["a", "b"])])
    s["shape_arithmetic"] = model(
        [node("Shape", ["x"], ["s"]), node("Gather", ["s", "i"], ["n"], axis=0),
         node("Concat", ["n", "m"], ["shape"], axis=0), node("Reshape", ["x", "shape"], ["y"])],
        [xd], [vi("y", F, ["a", "b"])], [const("i", [0]), const("m", [-1])])
    s["flatten"] = unary("Flatten", shape=(2, 3, 4), axis=2)
    s["squeeze_unsqueeze"] = model(
        [node("Unsqueeze", ["x", "a"], ["u"]), node("Squeeze", ["u", "a"], ["y"])], [x23], [y],
        [const("a", [0, -1])])
    s["squeeze_opset11"] = model([node("Unsqueeze", ["x"], ["u"], axes=[1]),
                                  node("Squeeze", ["u"], ["y"], axes=[1])], [x23], [y], opset=11)
    s["transpose"] = unary("Transpose", shape=(2, 3, 4), perm=[2, 0, 1])
    s["expand"] = model([node("Expand", ["x", "shape"], ["y"])], [vi("x", F, [3, 1])], [y],
                        [const("shape", [2, 3, 4])])
    s["concat"] = model([node("Concat", ["x", "c"], ["y"], axis=-2)], [x23], [y],
                        [const("c", np.ones((1, 3)), np.float32)])
    s["slice"] = model([node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [x23], [y],
                       [const("st", [0, -1]), const("en", [2, -4]), const("ax", [0, 1]),
                        const("sp", [1, -2])])
    s["slice_opset9"] = model([node("Slice", ["x"], ["y"], starts=[0], ends=[2], axes=[1])], [x23],
                              [y], opset=9)
    s["split"] = model([node("Split", ["x", "sp"], ["a", "b"], axis=1)], [x23],
                       [vi("a", F, None), vi("b", F, None)], [const("sp", [1, 2])])
    s["split_opset11"] = model([node("Split", ["x"], ["a", "b"], axis=1, split=[2, 1])], [x23],
                               [vi("a", F, None), vi("b", F, None)], opset=11)
    s["gather"] = model([node("Gather", ["x", "i"], ["y"], axis=1)], [x23], [y],
                        [const("i", [[0, -1], [2, 1]])])
    s["gather_elements"] = model([node("GatherElements", ["x", "i"], ["y"], axis=0)], [x23], [y],
                                 [const("i", [[1, 0, 1]])])
    s["pad"] = model([node("Pad", ["x", "p", "v"], ["y"], mode="constant")], [x23], [y],
                     [const("p", [0, 1, 2, 0]), const("v", 0.5, np.float32)])
    s["pad_reflect"] = model([node("Pad", ["x", "p"], ["y"], mode="reflect")], [x23], [y],
                             [const("p", [1, 1, 1, 1])])
    s["pad_opset2"] = model([node("Pad", ["x"], ["y"], mode="edge", pads=[0, 1, 0, 1], value=0.0)],
                            [x23], [y], opset=2)
    s["tile"] = model([node("Tile", ["x", "r"], ["y"])], [x23], [y], [const("r", [2, 3])])
    s["one_hot"] = model([node("OneHot", ["i", "d", "v"], ["y"], axis=-1)], [vi("i", I64, [3])], [y],
                         [const("d", [5]), const("v", [0.0, 1.0], np.float32)])
    s["resize_scales"] = model(
        [node("Resize", ["x", "", "sc"], ["y"], mode="linear",
              coordinate_transformation_mode="half_pixel")], [x4], [y],
        [const("sc", [1.0, 1.0, 2.0, 0.5], np.float32)])
    s["resize_sizes"] = model(
        [node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest", nearest_mode="floor",
              coordinate_transformation_mode="asymmetric")], [x4], [y], [const("sz", [1, 2, 7, 3])])
    s["resize_cubic"] = model(
        [node("Resize", ["x", "", "sc"], ["y"], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)],
        [x4], [y], [const("sc", [1.0, 1.0, 1.5, 1.5], np.float32)])
    s["upsample_opset9"] = model([node("Upsample", ["x", "sc"], ["y"], mode="nearest")], [x4], [y],
                                 [const("sc", [1.0, 1.0, 2.0, 2.0], np.float32)], opset=9)
    s["trilu"] = model([node("Trilu", ["x", "k"], ["y"], upper=0)], [x23], [y], [const("k", 1)])
    s["depth_to_space"] = model([node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD")],
                                [vi("x", F, [1, 8, 2, 3])], [y])
    s["space_to_depth"] = model([node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
                                [vi("x", F, [1, 2, 4, 6])], [y])
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    all_seeds = seeds()
    for name, m in all_seeds.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    print(f"{len(all_seeds)} ONNX seeds in {out}")


if __name__ == "__main__":
    main()
