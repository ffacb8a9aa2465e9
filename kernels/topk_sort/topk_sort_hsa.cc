// ral_topk and ral_sort for device "hsa": the GPU library's (kernels/topk_sort/topk_sort_gpu.h).
#include "kernels/topk_sort/topk_sort_gpu.h"
#include "ral/registration.h"

namespace ral::kernels::hsa {
namespace {

using Impl = gpu::TopkSortImpl<Tag::kKind>;
constexpr char kDevice[] = "hsa";
RAL_REGISTER_TOPK_SORT()

}  // namespace
}  // namespace ral::kernels::hsa

RAL_REGISTRATION_ANCHOR(kernels_topk_sort_hsa);
