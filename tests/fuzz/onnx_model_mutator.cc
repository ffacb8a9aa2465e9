#include "tests/fuzz/onnx_model_mutator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "onnx/defs/schema.h"

namespace ral::fuzz {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;
using ::onnx::ValueInfoProto;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The tables are laid out by hand (clang-format would put one element per line).
// clang-format off

// Integers that break size, index and stride arithmetic.
const int64_t kInts[] = {
    0, 1, -1, 2, -2, 3, 7, 16, 127, -128, 255, 256, 65535,
    1LL << 31, (1LL << 31) - 1, -(1LL << 31), 1LL << 32, (1LL << 32) + 1,
    1LL << 53, (1LL << 53) + 1, 1LL << 62, -(1LL << 62), kMax, kMin, kMax - 1, kMin + 1};

// Floats that break scale, size and range arithmetic.
const double kFloats[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 3.5,
    std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
    -std::numeric_limits<double>::infinity(), 1e30, -1e30, 1e-30, 1e-45,
    3.4028234663852886e38, 1.1754943508222875e-38,  // FLT_MAX, FLT_MIN
    2147483648.0, 4294967296.0, 9223372036854775808.0, 18446744073709551616.0, 1e10, 1e300};

// Values of the string attributes the importer reads, and a few it must refuse.
const char* const kStrings[] = {
    "constant", "reflect", "edge", "wrap", "nearest", "linear", "cubic", "DCR", "CRD",
    "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_crop_and_resize",
    "tf_half_pixel_for_nn", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
    "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "mean", "sum", "none", "", "bogus", "\xff\xfe"};

// The operators the importer converts (compiler_passes/onnx/ops_*.cc): what a swapped node
// becomes.
const char* const kOps[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "PRelu", "Mod", "Min", "Max", "Sum", "Mean", "Equal",
    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Relu", "Sigmoid",
    "Tanh", "Erf", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round",
    "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asin", "Acos", "Asinh", "Acosh", "Atanh", "Not",
    "Sign", "Softsign", "Softplus", "HardSwish", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Cast",
    "CastLike", "IsNaN", "IsInf", "ThresholdedRelu", "Clip", "Where", "Identity", "Dropout",
    "MatMul", "Gemm", "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
    "GlobalMaxPool", "BatchNormalization", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
    "ReduceProd", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin",
    "Softmax", "LogSoftmax", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss",
    "InstanceNormalization", "LayerNormalization", "Constant", "ConstantOfShape", "Shape", "Size",
    "Range", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Expand", "Concat", "Slice",
    "Split", "Gather", "GatherElements", "Pad", "Tile", "OneHot", "Resize", "Upsample", "Trilu",
    "DepthToSpace", "SpaceToDepth"};

// Data types the importer handles first (mutations draw them most), then the others and invalid
// ones.
const int32_t kTypes[] = {
    TensorProto::FLOAT, TensorProto::INT64, TensorProto::INT32, TensorProto::INT8,
    TensorProto::BOOL, TensorProto::DOUBLE, TensorProto::INT16, TensorProto::FLOAT16,
    TensorProto::BFLOAT16, TensorProto::UINT8, TensorProto::UINT16, TensorProto::UINT32,
    TensorProto::UINT64, TensorProto::STRING, TensorProto::COMPLEX64, TensorProto::COMPLEX128,
    0, 17, 100, -1};

// clang-format on

template <typename T, size_t N>
constexpr size_t count(const T (&)[N]) {
  return N;
}

class Random {
 public:
  explicit Random(std::mt19937_64& gen) : gen_(gen) {}
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(gen_() % n); }
  bool oneIn(size_t n) { return below(n) == 0; }
  uint64_t bits() { return gen_(); }

  // An integer near `current` or one of kInts.
  int64_t integer(int64_t current) {
    const uint64_t c = static_cast<uint64_t>(current);
    switch (below(8)) {
      case 0:
        return static_cast<int64_t>(c + 1);
      case 1:
        return static_cast<int64_t>(c - 1);
      case 2:
        return static_cast<int64_t>(0 - c);
      case 3:
        return static_cast<int64_t>(c << (1 + below(40)));
      case 4:
        return static_cast<int64_t>(below(17)) - 8;
      case 5:
        return static_cast<int64_t>(bits());
      default:
        return kInts[below(count(kInts))];
    }
  }
  double real() {
    return oneIn(6) ? static_cast<double>(static_cast<int64_t>(below(17)) - 8) / 2
                    : kFloats[below(count(kFloats))];
  }
  int32_t dtype() {
    return oneIn(4) ? kTypes[below(count(kTypes))] : kTypes[below(6)];  // mostly supported
  }

 private:
  std::mt19937_64& gen_;
};

// ---- tensors --------------------------------------------------------------------------------

size_t elementBytes(int32_t dtype) {
  switch (dtype) {
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      return 1;
    case TensorProto::INT16:
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::COMPLEX128:
      return 16;
    default:
      return 8;
  }
}

// One element's bytes (little-endian) for `dtype`: an interesting value of its kind.
std::string elementBits(int32_t dtype, Random& r) {
  const size_t width = elementBytes(dtype);
  uint64_t bits = 0;
  if (dtype == TensorProto::FLOAT) {
    const float f = static_cast<float>(r.real());
    std::memcpy(&bits, &f, 4);
  } else if (dtype == TensorProto::DOUBLE) {
    const double d = r.real();
    std::memcpy(&bits, &d, 8);
  } else if (dtype == TensorProto::FLOAT16 || dtype == TensorProto::BFLOAT16) {
    const uint16_t kHalf[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00,
                              0x7bff, 0x0001, 0x3f80, 0x7f80, 0x7fc0, 0xff80};
    bits = r.oneIn(4) ? r.bits() : kHalf[r.below(count(kHalf))];
  } else {
    bits = static_cast<uint64_t>(r.integer(0));
  }
  std::string out(width, '\0');
  std::memcpy(out.data(), &bits, std::min<size_t>(width, 8));
  return out;
}

// Sets element `i` (appending when past the end) of whichever field holds `t`'s data.
void setElement(TensorProto& t, int i, Random& r) {
  if (!t.raw_data().empty() || t.data_type() == TensorProto::STRING) {
    if (t.data_type() == TensorProto::STRING) {
      if (i < t.string_data_size()) *t.mutable_string_data(i) = kStrings[r.below(count(kStrings))];
      return;
    }
    const std::string e = elementBits(t.data_type(), r);
    std::string& raw = *t.mutable_raw_data();
    const size_t at = static_cast<size_t>(i) * e.size();
    if (at + e.size() > raw.size()) raw.resize(at + e.size());
    raw.replace(at, e.size(), e);
    return;
  }
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      while (t.float_data_size() <= i) t.add_float_data(0);
      t.set_float_data(i, static_cast<float>(r.real()));
      return;
    case TensorProto::DOUBLE:
      while (t.double_data_size() <= i) t.add_double_data(0);
      t.set_double_data(i, r.real());
      return;
    case TensorProto::INT64:
      while (t.int64_data_size() <= i) t.add_int64_data(0);
      t.set_int64_data(i, r.integer(t.int64_data(i)));
      return;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      while (t.uint64_data_size() <= i) t.add_uint64_data(0);
      t.set_uint64_data(i, static_cast<uint64_t>(r.integer(0)));
      return;
    default:  // int32_data holds the narrower integers, bool and the 16-bit floats
      while (t.int32_data_size() <= i) t.add_int32_data(0);
      t.set_int32_data(i, static_cast<int32_t>(r.integer(t.int32_data(i))));
      return;
  }
}

int elementCount(const TensorProto& t) {
  if (!t.raw_data().empty())
    return static_cast<int>(t.raw_data().size() / elementBytes(t.data_type()));
  return t.float_data_size() + t.double_data_size() + t.int32_data_size() + t.int64_data_size() +
         t.uint64_data_size() + t.string_data_size();
}

// Drops or adds elements (the data no longer matches the dims), or empties the data.
void resizeData(TensorProto& t, Random& r) {
  const int n = elementCount(t);
  const int want = r.oneIn(4)   ? 0
                   : r.oneIn(2) ? n + 1 + static_cast<int>(r.below(4))
                                : std::max(0, n - 1 - static_cast<int>(r.below(4)));
  if (want > n) {
    for (int i = n; i < want; ++i) setElement(t, i, r);
    return;
  }
  if (!t.raw_data().empty()) {
    t.mutable_raw_data()->resize(static_cast<size_t>(want) * elementBytes(t.data_type()));
    return;
  }
  t.mutable_float_data()->Truncate(std::min(want, t.float_data_size()));
  t.mutable_double_data()->Truncate(std::min(want, t.double_data_size()));
  t.mutable_int32_data()->Truncate(std::min(want, t.int32_data_size()));
  t.mutable_int64_data()->Truncate(std::min(want, t.int64_data_size()));
  t.mutable_uint64_data()->Truncate(std::min(want, t.uint64_data_size()));
  t.mutable_string_data()->DeleteSubrange(want < t.string_data_size() ? want : 0,
                                          std::max(0, t.string_data_size() - want));
}

// Rewrites the data in the other storage (raw_data instead of the typed field, or back), with
// new values: both decoding paths of the importer see every dtype.
void switchStorage(TensorProto& t, Random& r) {
  const int n = std::min(elementCount(t), 64);
  TensorProto fresh;
  fresh.set_name(t.name());
  fresh.set_data_type(t.data_type());
  *fresh.mutable_dims() = t.dims();
  if (t.raw_data().empty()) fresh.set_raw_data(std::string());
  for (int i = 0; i < n; ++i) {
    if (t.raw_data().empty())
      fresh.mutable_raw_data()->append(elementBits(t.data_type(), r));
    else
      setElement(fresh, i, r);
  }
  t = fresh;
}

void mutateTensor(TensorProto& t, Random& r) {
  const int n = elementCount(t);
  switch (r.below(9)) {
    case 0:
    case 1:
      setElement(t, n == 0 ? 0 : static_cast<int>(r.below(static_cast<size_t>(n))), r);
      return;
    case 2:  // every element the same value
      for (int i = 0; i < std::min(n, 64); ++i) setElement(t, i, r);
      return;
    case 3:
      if (t.dims_size() > 0) {
        const int d = static_cast<int>(r.below(static_cast<size_t>(t.dims_size())));
        t.set_dims(d, r.integer(t.dims(d)));
        return;
      }
      [[fallthrough]];
    case 4:  // a dim more or less
      if (t.dims_size() > 0 && r.oneIn(2))
        t.mutable_dims()->RemoveLast();
      else
        t.add_dims(r.oneIn(2) ? 1 : r.integer(0));
      return;
    case 5:
      t.set_data_type(r.dtype());
      return;
    case 6:
      resizeData(t, r);
      return;
    case 7:
      switchStorage(t, r);
      return;
    default:  // external data, which the importer must refuse
      t.set_data_location(TensorProto::EXTERNAL);
      if (r.oneIn(2)) {
        auto* entry = t.add_external_data();
        entry->set_key("location");
        entry->set_value("/etc/passwd");
      }
      return;
  }
}

// A small random tensor (a Constant's or ConstantOfShape's value, a new attribute).
TensorProto smallTensor(Random& r) {
  TensorProto t;
  t.set_data_type(r.dtype());
  const int rank = static_cast<int>(r.below(3));
  int n = 1;
  for (int d = 0; d < rank; ++d) {
    const int dim = 1 + static_cast<int>(r.below(3));
    t.add_dims(dim);
    n *= dim;
  }
  t.set_raw_data(std::string());
  for (int i = 0; i < n; ++i) t.mutable_raw_data()->append(elementBits(t.data_type(), r));
  return t;
}

// ---- attributes -----------------------------------------------------------------------------

void fillAttribute(AttributeProto& a, Random& r) {
  switch (a.type()) {
    case AttributeProto::INT:
      a.set_i(r.integer(a.i()));
      return;
    case AttributeProto::FLOAT:
      a.set_f(static_cast<float>(r.real()));
      return;
    case AttributeProto::STRING:
      a.set_s(r.oneIn(16) ? std::string(300, 'a') : kStrings[r.below(count(kStrings))]);
      return;
    case AttributeProto::TENSOR:
      if (a.has_t() && !r.oneIn(4))
        mutateTensor(*a.mutable_t(), r);
      else
        *a.mutable_t() = smallTensor(r);
      return;
    case AttributeProto::INTS: {
      auto* v = a.mutable_ints();
      switch (r.below(5)) {
        case 0:  // one more element (wrong lengths: pads, strides, perm, axes, ...)
          v->Add(r.integer(v->empty() ? 0 : v->Get(v->size() - 1)));
          return;
        case 1:
          if (!v->empty()) v->RemoveLast();
          return;
        case 2:
          v->Clear();
          for (size_t k = r.below(9); k > 0; --k) v->Add(r.integer(1));
          return;
        default:
          if (v->empty()) {
            v->Add(r.integer(0));
          } else {
            const int k = static_cast<int>(r.below(static_cast<size_t>(v->size())));
            v->Set(k, r.integer(v->Get(k)));
          }
          return;
      }
    }
    case AttributeProto::FLOATS: {
      auto* v = a.mutable_floats();
      if (r.oneIn(3) && !v->empty())
        v->RemoveLast();
      else if (v->empty() || r.oneIn(3))
        v->Add(static_cast<float>(r.real()));
      else
        v->Set(static_cast<int>(r.below(static_cast<size_t>(v->size()))),
               static_cast<float>(r.real()));
      return;
    }
    case AttributeProto::STRINGS:
      if (r.oneIn(2) && a.strings_size() > 0)
        a.mutable_strings()->RemoveLast();
      else
        a.add_strings(kStrings[r.below(count(kStrings))]);
      return;
    default:
      return;
  }
}

int64_t opsetOf(const ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 1;
}

const ::onnx::OpSchema* schemaOf(const ModelProto& m, const NodeProto& n) {
  const int64_t opset = std::clamp<int64_t>(opsetOf(m), 1, 100);
  return ::onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
}

// Sets (adds or replaces) an attribute the node's schema defines, with a value of its type.
bool setSchemaAttribute(const ModelProto& m, NodeProto& n, Random& r) {
  const ::onnx::OpSchema* schema = schemaOf(m, n);
  if (!schema || schema->attributes().empty()) return false;
  auto it = schema->attributes().begin();
  std::advance(it, static_cast<long>(r.below(schema->attributes().size())));
  AttributeProto* a = nullptr;
  for (AttributeProto& have : *n.mutable_attribute())
    if (have.name() == it->first) a = &have;
  if (!a) {
    a = n.add_attribute();
    a->set_name(it->first);
  }
  a->set_type(it->second.type);
  fillAttribute(*a, r);
  return true;
}

bool mutateAttribute(const ModelProto& m, GraphProto& g, Random& r) {
  if (g.node_size() == 0) return false;
  NodeProto& n = *g.mutable_node(static_cast<int>(r.below(static_cast<size_t>(g.node_size()))));
  if (n.attribute_size() == 0 || r.oneIn(4)) return setSchemaAttribute(m, n, r);
  const int k = static_cast<int>(r.below(static_cast<size_t>(n.attribute_size())));
  AttributeProto& a = *n.mutable_attribute(k);
  switch (r.below(12)) {
    case 0:  // gone (a required one must then be named as missing)
      n.mutable_attribute()->DeleteSubrange(k, 1);
      return true;
    case 1:  // of another type than the schema's
      a.set_type(static_cast<AttributeProto::AttributeType>(1 + r.below(8)));
      fillAttribute(a, r);
      return true;
    case 2:  // twice
      *n.add_attribute() = a;
      fillAttribute(*n.mutable_attribute(n.attribute_size() - 1), r);
      return true;
    default:
      fillAttribute(a, r);
      return true;
  }
}

// ---- constants ------------------------------------------------------------------------------

// An initializer, or the tensor of a Constant or ConstantOfShape node.
TensorProto* pickConstant(GraphProto& g, Random& r) {
  std::vector<TensorProto*> tensors;
  for (TensorProto& t : *g.mutable_initializer()) tensors.push_back(&t);
  for (NodeProto& n : *g.mutable_node())
    for (AttributeProto& a : *n.mutable_attribute())
      if (a.has_t()) tensors.push_back(a.mutable_t());
  return tensors.empty() ? nullptr : tensors[r.below(tensors.size())];
}

// A Constant's scalar and list forms (value_int, value_ints, value_float, value_floats).
bool mutateConstantNode(GraphProto& g, Random& r) {
  for (size_t tries = 0; tries < 4 && g.node_size() > 0; ++tries) {
    NodeProto& n = *g.mutable_node(static_cast<int>(r.below(static_cast<size_t>(g.node_size()))));
    if (n.op_type() != "Constant" || n.attribute_size() == 0) continue;
    fillAttribute(*n.mutable_attribute(0), r);
    return true;
  }
  return false;
}

// A graph input (not an initializer) becomes an initializer with data of its declared type and
// shape: the importer then folds what it computed at run time before.
bool inputToInitializer(GraphProto& g, Random& r) {
  std::vector<int> candidates;
  for (int i = 0; i < g.input_size(); ++i) {
    bool initialized = false;
    for (const TensorProto& t : g.initializer()) initialized |= t.name() == g.input(i).name();
    if (!initialized && g.input(i).type().has_tensor_type()) candidates.push_back(i);
  }
  if (candidates.empty()) return false;
  const int i = candidates[r.below(candidates.size())];
  const ValueInfoProto& in = g.input(i);
  TensorProto t;
  t.set_name(in.name());
  t.set_data_type(in.type().tensor_type().elem_type());
  int64_t n = 1;
  for (const auto& d : in.type().tensor_type().shape().dim()) {
    const int64_t dim = d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() <= 64
                            ? d.dim_value()
                            : 1 + static_cast<int64_t>(r.below(3));
    t.add_dims(dim);
    n *= dim;
  }
  if (n > 256) return false;
  t.set_raw_data(std::string());
  for (int64_t k = 0; k < n; ++k) t.mutable_raw_data()->append(elementBits(t.data_type(), r));
  *g.add_initializer() = t;
  if (r.oneIn(2)) g.mutable_input()->DeleteSubrange(i, 1);  // IR >= 4 does not list them
  return true;
}

// ---- graph inputs and outputs ---------------------------------------------------------------

bool mutateValueInfo(GraphProto& g, Random& r) {
  const bool output = r.oneIn(4);
  auto* infos = output ? g.mutable_output() : g.mutable_input();
  if (infos->empty()) return false;
  ValueInfoProto& v =
      *infos->Mutable(static_cast<int>(r.below(static_cast<size_t>(infos->size()))));
  auto* tt = v.mutable_type()->mutable_tensor_type();
  switch (r.below(6)) {
    case 0:
      tt->set_elem_type(r.dtype());
      return true;
    case 1:
      tt->clear_shape();  // unknown rank
      return true;
    case 2:
      tt->mutable_shape()->add_dim()->set_dim_value(r.oneIn(2) ? 1 : r.integer(1));
      return true;
    default: {
      if (tt->shape().dim_size() == 0) return false;
      auto* d = tt->mutable_shape()->mutable_dim(
          static_cast<int>(r.below(static_cast<size_t>(tt->shape().dim_size()))));
      if (r.oneIn(3))
        d->set_dim_param("n");
      else
        d->set_dim_value(r.integer(d->has_dim_value() ? d->dim_value() : 1));
      return true;
    }
  }
}

// ---- wiring ---------------------------------------------------------------------------------

// Names defined before node `k`: graph inputs, initializers, earlier nodes' outputs.
std::vector<std::string> namesBefore(const GraphProto& g, int k) {
  std::vector<std::string> names;
  for (const ValueInfoProto& v : g.input()) names.push_back(v.name());
  for (const TensorProto& t : g.initializer()) names.push_back(t.name());
  for (int i = 0; i < k && i < g.node_size(); ++i)
    for (const std::string& o : g.node(i).output()) names.push_back(o);
  return names;
}

bool rewire(GraphProto& g, Random& r) {
  if (g.node_size() == 0) return false;
  const int k = static_cast<int>(r.below(static_cast<size_t>(g.node_size())));
  NodeProto& n = *g.mutable_node(k);
  const std::vector<std::string> names = namesBefore(g, k);
  const std::string any = names.empty() ? std::string("x") : names[r.below(names.size())];
  switch (r.below(7)) {
    case 0:  // an input fewer
      if (n.input_size() == 0) return false;
      n.mutable_input()->RemoveLast();
      return true;
    case 1:  // an input more
      n.add_input(any);
      return true;
    case 2:  // an optional input left out
      if (n.input_size() == 0) return false;
      n.set_input(static_cast<int>(r.below(static_cast<size_t>(n.input_size()))), "");
      return true;
    case 3:  // an output named like an existing value: the graph is no longer in SSA form
      if (n.output_size() == 0 || names.empty()) return false;
      n.set_output(static_cast<int>(r.below(static_cast<size_t>(n.output_size()))), any);
      return true;
    case 4:  // an output more or fewer
      if (n.output_size() > 0 && r.oneIn(2))
        n.mutable_output()->RemoveLast();
      else
        n.add_output(r.oneIn(2) ? std::string() : "extra" + std::to_string(r.below(4)));
      return true;
    default:  // an input reads another value
      if (n.input_size() == 0) return false;
      n.set_input(static_cast<int>(r.below(static_cast<size_t>(n.input_size()))), any);
      return true;
  }
}

// Another operator for a node, one whose schema takes as many inputs and outputs; attributes the
// new operator does not have are dropped (otherwise nearly every swap stops at the first one).
bool swapOpType(const ModelProto& m, GraphProto& g, Random& r) {
  if (g.node_size() == 0) return false;
  NodeProto& n = *g.mutable_node(static_cast<int>(r.below(static_cast<size_t>(g.node_size()))));
  for (int tries = 0; tries < 16; ++tries) {
    NodeProto candidate = n;
    candidate.set_op_type(kOps[r.below(count(kOps))]);
    const ::onnx::OpSchema* s = schemaOf(m, candidate);
    if (!s || candidate.op_type() == n.op_type()) continue;
    if (n.input_size() < s->min_input() || n.input_size() > s->max_input() ||
        n.output_size() < s->min_output() || n.output_size() > s->max_output())
      continue;
    auto* attrs = candidate.mutable_attribute();
    for (int a = attrs->size() - 1; a >= 0; --a)
      if (!s->attributes().count(attrs->Get(a).name())) attrs->DeleteSubrange(a, 1);
    n = candidate;
    return true;
  }
  return false;
}

bool reorderNodes(GraphProto& g, Random& r) {
  if (g.node_size() == 0) return false;
  auto* nodes = g.mutable_node();
  const int k = static_cast<int>(r.below(static_cast<size_t>(nodes->size())));
  switch (r.below(3)) {
    case 0:  // duplicated right after itself (its outputs defined twice)
      *nodes->Add() = nodes->Get(k);
      for (int i = nodes->size() - 1; i > k + 1; --i) nodes->SwapElements(i, i - 1);
      return true;
    case 1:
      if (nodes->size() < 2) return false;
      nodes->DeleteSubrange(k, 1);
      return true;
    default:  // out of topological order
      if (nodes->size() < 2) return false;
      nodes->SwapElements(k, static_cast<int>(r.below(static_cast<size_t>(nodes->size()))));
      return true;
  }
}

bool changeOpset(ModelProto& m, Random& r) {
  for (auto& o : *m.mutable_opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    o.set_version(r.oneIn(4) ? r.integer(o.version()) : 1 + static_cast<int64_t>(r.below(18)));
    return true;
  }
  auto* o = m.add_opset_import();
  o->set_version(1 + static_cast<int64_t>(r.below(18)));
  return true;
}

}  // namespace

bool mutateModel(ModelProto& model, std::mt19937_64& gen) {
  Random r(gen);
  GraphProto& g = *model.mutable_graph();
  switch (r.below(16)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return mutateAttribute(model, g, r);
    case 5:
    case 6:
    case 7:
    case 8: {
      TensorProto* t = pickConstant(g, r);
      if (!t) return mutateConstantNode(g, r);
      mutateTensor(*t, r);
      return true;
    }
    case 9:
      return inputToInitializer(g, r);
    case 10:
      return mutateValueInfo(g, r);
    case 11:
    case 12:
      return rewire(g, r);
    case 13:
      return swapOpType(model, g, r);
    case 14:
      return reorderNodes(g, r);
    default:
      return changeOpset(model, r);
  }
}

bool crossOverModels(ModelProto& model, const ModelProto& other, std::mt19937_64& gen) {
  Random r(gen);
  GraphProto& g = *model.mutable_graph();
  const GraphProto& o = other.graph();
  switch (r.below(3)) {
    case 0: {  // an initializer's contents, under this model's name
      if (g.initializer_size() == 0 || o.initializer_size() == 0) return false;
      TensorProto& t = *g.mutable_initializer(
          static_cast<int>(r.below(static_cast<size_t>(g.initializer_size()))));
      const std::string name = t.name();
      t = o.initializer(static_cast<int>(r.below(static_cast<size_t>(o.initializer_size()))));
      t.set_name(name);
      return true;
    }
    case 1: {  // a node's attributes from a node of the same op type
      for (NodeProto& n : *g.mutable_node())
        for (const NodeProto& src : o.node())
          if (n.op_type() == src.op_type() && r.oneIn(2)) {
            *n.mutable_attribute() = src.attribute();
            return true;
          }
      return false;
    }
    default: {  // a node, inserted where its inputs may or may not exist
      if (o.node_size() == 0) return false;
      *g.add_node() = o.node(static_cast<int>(r.below(static_cast<size_t>(o.node_size()))));
      auto* nodes = g.mutable_node();
      for (int i = nodes->size() - 1, at = static_cast<int>(r.below(nodes->size())); i > at; --i)
        nodes->SwapElements(i, i - 1);
      return true;
    }
  }
}

}  // namespace ral::fuzz
