#include "ral/communicator.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "ral/half.h"

namespace ral {

Communicator::~Communicator() = default;

std::string_view reduceOpName(ReduceOp op) {
  static constexpr const char* kNames[] = {"sum", "prod", "min", "max", "avg"};
  const auto code = static_cast<size_t>(op);
  return code < std::size(kNames) ? kNames[code] : "invalid";
}

StatusOr<ReduceOp> reduceOpFromCode(int32_t code, DType dtype) {
  if (code < 0 || code > static_cast<int32_t>(ReduceOp::kAvg))
    return invalidArgument("reduction ", code,
                           " is not one of 0 (sum), 1 (prod), 2 (min), 3 (max), 4 (avg)");
  const auto op = static_cast<ReduceOp>(code);
  if (op == ReduceOp::kAvg && !isFloatingPoint(dtype))
    return invalidArgument("reduction avg needs a floating-point dtype, not ", dtypeName(dtype),
                           " (the mean of integers is not an integer; use sum)");
  return op;
}

bool isCollectiveDType(DType dtype) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32:
    case DType::kF64:
    case DType::kI32:
    case DType::kI64:
      return true;
    default:
      return false;
  }
}

namespace {

// One loop per op, so each is a plain loop the compiler vectorizes. The 16-bit types combine in
// float (Acc) and round once per step.
template <typename T, typename Acc, typename Combine>
void combineInto(T* dst, const T* src, int64_t count, Combine combine) {
  if constexpr (std::is_same_v<T, Acc>) {
    for (int64_t i = 0; i < count; ++i) dst[i] = combine(dst[i], src[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = T(combine(dst[i].toFloat(), src[i].toFloat()));
  }
}

template <typename T, typename Acc>
void reduceTyped(T* dst, const T* src, int64_t count, ReduceOp op) {
  // NaN wins min and max, as in torch.minimum: a reduction must not hide one rank's NaN.
  constexpr bool kFloat = std::is_floating_point_v<Acc>;
  switch (op) {
    case ReduceOp::kProd:
      return combineInto<T, Acc>(dst, src, count, [](Acc a, Acc b) { return a * b; });
    case ReduceOp::kMin:
      return combineInto<T, Acc>(dst, src, count, [](Acc a, Acc b) {
        if constexpr (kFloat)
          if (a != a || b != b) return a + b;
        return b < a ? b : a;
      });
    case ReduceOp::kMax:
      return combineInto<T, Acc>(dst, src, count, [](Acc a, Acc b) {
        if constexpr (kFloat)
          if (a != a || b != b) return a + b;
        return b > a ? b : a;
      });
    default:  // kSum, kAvg
      if constexpr (std::is_integral_v<Acc>) {
        // Wraps like torch's integer sum, without C++'s signed-overflow undefined behaviour.
        using U = std::make_unsigned_t<Acc>;
        return combineInto<T, Acc>(dst, src, count, [](Acc a, Acc b) {
          return static_cast<Acc>(static_cast<U>(a) + static_cast<U>(b));
        });
      } else {
        return combineInto<T, Acc>(dst, src, count, [](Acc a, Acc b) { return a + b; });
      }
  }
}

}  // namespace

void reduceInto(void* dst, const void* src, int64_t count, DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::kF16:
      return reduceTyped<float16, float>(static_cast<float16*>(dst),
                                         static_cast<const float16*>(src), count, op);
    case DType::kBF16:
      return reduceTyped<bfloat16, float>(static_cast<bfloat16*>(dst),
                                          static_cast<const bfloat16*>(src), count, op);
    case DType::kF32:
      return reduceTyped<float, float>(static_cast<float*>(dst), static_cast<const float*>(src),
                                       count, op);
    case DType::kF64:
      return reduceTyped<double, double>(static_cast<double*>(dst), static_cast<const double*>(src),
                                         count, op);
    case DType::kI32:
      return reduceTyped<int32_t, int32_t>(static_cast<int32_t*>(dst),
                                           static_cast<const int32_t*>(src), count, op);
    case DType::kI64:
      return reduceTyped<int64_t, int64_t>(static_cast<int64_t*>(dst),
                                           static_cast<const int64_t*>(src), count, op);
    default:
      return;
  }
}

namespace {

class SingleRankCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "single rank"; }
  Status allReduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp) override {
    return copy(in, out, count, dtype);
  }
  Status allGather(const void* in, void* out, int64_t count, DType dtype) override {
    return copy(in, out, count, dtype);
  }
  Status reduceScatter(const void* in, void* out, int64_t count, DType dtype, ReduceOp) override {
    return copy(in, out, count, dtype);
  }
  Status broadcast(void*, int64_t, DType, int root) override {
    if (root != 0) return invalidArgument("broadcast root ", root, " is not a rank of 1 rank");
    return Status();
  }
  Status allToAll(const void* in, void* out, int64_t count, DType dtype) override {
    return copy(in, out, count, dtype);
  }
  Status send(const void*, int64_t, DType, int peer, int) override { return noPeer(peer); }
  Status recv(void*, int64_t, DType, int peer, int) override { return noPeer(peer); }

 private:
  static Status copy(const void* in, void* out, int64_t count, DType dtype) {
    if (in != out && count > 0) std::memcpy(out, in, static_cast<size_t>(count) * dtypeSize(dtype));
    return Status();
  }
  static Status noPeer(int peer) {
    return invalidArgument("peer ", peer, " is not another rank: the job has 1 rank");
  }
};

}  // namespace

std::shared_ptr<Communicator> singleRankCommunicator() {
  return std::make_shared<SingleRankCommunicator>();
}

void finishAverage(void* data, int64_t count, DType dtype, int ranks) {
  auto scale = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        p[i] = T(p[i].toFloat() / static_cast<float>(ranks));
      } else {
        p[i] = p[i] / static_cast<T>(ranks);
      }
    }
  };
  switch (dtype) {
    case DType::kF16:
      return scale(static_cast<float16*>(data));
    case DType::kBF16:
      return scale(static_cast<bfloat16*>(data));
    case DType::kF32:
      return scale(static_cast<float*>(data));
    case DType::kF64:
      return scale(static_cast<double*>(data));
    default:
      return;
  }
}

}  // namespace ral
