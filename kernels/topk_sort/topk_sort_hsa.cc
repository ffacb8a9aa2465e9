// ral_topk and ral_sort on AMD GPUs (kernels/topk_sort/topk_sort.h has the contract): the
// library's ral_order_rows_<type> kernel (kernels/hsa/device_kernels.py) sorts (value, index)
// pairs of each row bitonically in device scratch, one workgroup per row, so the result is the
// CPU kernel's order exactly, ties and NaN included. Any strides, ranks 1-4.
#include <algorithm>
#include <type_traits>

#include "kernels/hsa/hsa_env.h"
#include "kernels/topk_sort/topk_sort.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

// The scratch holds one slot of `padded` pairs per workgroup; the grid is capped to keep it small.
constexpr uint64_t kScratchBudget = uint64_t{64} << 20;
constexpr int64_t kMaxGroups = 65535;

template <typename T>
constexpr Entry orderEntry() {
  return static_cast<Entry>(static_cast<uint32_t>(Entry::kOrderF32) + orderedTypeIndex<T>());
}

// Device memory for the kernel's pairs. The HSA allocator hands freed memory to the next
// allocation at once, so the launch is waited for before the memory goes back.
class OrderScratch {
 public:
  explicit OrderScratch(const HsaEnv& env) : env_(env) {}
  OrderScratch(const OrderScratch&) = delete;
  OrderScratch& operator=(const OrderScratch&) = delete;
  ~OrderScratch() {
    if (ptr_ == nullptr) return;
    if (launched_) (void)env_.driver->synchronize(env_.stream);
    (void)env_.driver->deallocate(ptr_);
  }
  Status allocate(size_t bytes) {
    RAL_ASSIGN_OR_RETURN(ptr_, env_.driver->allocate(bytes));
    return Status();
  }
  char* get() const { return static_cast<char*>(ptr_); }
  void launched() { launched_ = true; }

 private:
  HsaEnv env_;
  void* ptr_ = nullptr;
  bool launched_ = false;
};

struct Impl {
  template <typename T, int N>
  static Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                          const MemRef<int64_t, N>& indices, int64_t k, bool descending,
                          bool partial) {
    static_assert(N - 1 <= kMaxRank, "rank too large for the HSA kernels");
    const char* kernel = partial ? "ral_topk" : "ral_sort";
    const int64_t n = in.sizes[N - 1];
    int64_t rows = 1;
    for (int d = 0; d < N - 1; ++d) rows *= in.sizes[d];
    if (rows == 0 || k == 0) return Status();
    if (n > (int64_t{1} << 40))
      return unsupported(kernel, ": rows of ", n, " elements exceed the HSA kernel's scratch");
    RAL_ASSIGN_OR_RETURN(HsaEnv env, hsaEnv(ctx));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, in, kernel, "input"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, values, kernel, "values"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, indices, kernel, "indices"));

    OrderArgs p{};
    while ((int64_t{1} << p.log2_padded) < n) ++p.log2_padded;
    p.padded = int64_t{1} << p.log2_padded;
    const uint64_t slot_bytes = static_cast<uint64_t>(p.padded) * (sizeof(int64_t) + sizeof(T));
    p.groups = static_cast<int64_t>(std::clamp<uint64_t>(
        kScratchBudget / slot_bytes, 1, static_cast<uint64_t>(std::min(rows, kMaxGroups))));
    const size_t index_bytes = static_cast<size_t>(p.groups * p.padded) * sizeof(int64_t);
    OrderScratch scratch(env);
    RAL_RETURN_IF_ERROR(scratch.allocate(index_bytes + p.groups * p.padded * sizeof(T)));
    p.in = in.data();
    p.values = values.data();
    p.indices = indices.data();
    p.scratch_index = reinterpret_cast<int64_t*>(scratch.get());
    p.scratch_value = scratch.get() + index_bytes;
    p.rows = rows;
    p.n = n;
    p.k = k;
    p.descending = descending ? 1 : 0;
    p.in_step = in.strides[N - 1];
    p.values_step = values.strides[N - 1];
    p.indices_step = indices.strides[N - 1];
    padView(N - 1, in.sizes, in.strides, p.sizes, p.in_strides);
    padView(N - 1, in.sizes, values.strides, p.sizes, p.values_strides);
    padView(N - 1, in.sizes, indices.strides, p.sizes, p.indices_strides);
    LaunchConfig config;
    config.grid.x = static_cast<uint32_t>(p.groups);
    config.block.x = kLinearBlock;
    void* args[] = {&p};
    const size_t sizes[] = {sizeof(p)};
    RAL_RETURN_IF_ERROR(env.driver->launch(env.kernels, static_cast<uint32_t>(orderEntry<T>()),
                                           config, KernelArgs{args, sizes, 1}, env.stream));
    scratch.launched();
    return Status();
  }
};

constexpr char kDevice[] = "hsa";
RAL_REGISTER_TOPK_SORT()

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_topk_sort_hsa);
