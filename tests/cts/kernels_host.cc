// The conformance kernels as host code (see cts.h for what they compute), in the two host forms:
// CPU-driver workgroup functions (one call per workgroup), simulated-CUDA kernels (one call per
// launch) and simulated-HSA kernels (one call per dispatch packet), the last two exported so the
// simulated libraries find them with dlsym.
#include "kernels_host.h"

#include <cstring>

namespace ral::cts {
namespace {

// Runs `kernel` over invocations [begin, end).
void addOne(void* const* args, uint64_t begin, uint64_t end) {
  uint32_t* data = *static_cast<uint32_t* const*>(args[0]);
  const uint32_t n = *static_cast<const uint32_t*>(args[1]);
  for (uint64_t i = begin; i < end && i < n; ++i) data[i] += 1;
}

void fillIndex(void* const* args, uint64_t begin, uint64_t end) {
  uint32_t* data = *static_cast<uint32_t* const*>(args[0]);
  const uint32_t n = *static_cast<const uint32_t*>(args[1]);
  const uint32_t add = *static_cast<const uint32_t*>(args[2]);
  for (uint64_t i = begin; i < end && i < n; ++i) data[i] = static_cast<uint32_t>(i) + add;
}

void argsKernel(void* const* args) {
  uint32_t* out = *static_cast<uint32_t* const*>(args[0]);
  uint64_t d = 0;
  std::memcpy(&d, args[4], 8);
  out[0] = *static_cast<const uint8_t*>(args[1]);
  out[1] = *static_cast<const uint16_t*>(args[2]);
  out[2] = *static_cast<const uint32_t*>(args[3]);
  out[3] = static_cast<uint32_t>(d);
  out[4] = static_cast<uint32_t>(d >> 32);
  std::memcpy(out + 5, args[5], 16);
}

// A CPU workgroup covers invocations [id * block, (id + 1) * block) of the flattened grid.
void cpuRange(const ral_host_workgroup* wg, void* const* args,
              void (*fn)(void* const*, uint64_t, uint64_t)) {
  const uint64_t id =
      wg->group_id[0] +
      uint64_t{wg->grid[0]} * (wg->group_id[1] + uint64_t{wg->grid[1]} * wg->group_id[2]);
  const uint64_t size = uint64_t{wg->block[0]} * wg->block[1] * wg->block[2];
  fn(args, id * size, (id + 1) * size);
}

uint64_t hsaInvocations(const RalSimHsaDispatch* d) {
  return uint64_t{d->grid_size[0]} * d->grid_size[1] * d->grid_size[2];
}

// The kernarg segment as pointers to each argument: `offsets` per argument.
template <size_t N>
void kernargPointers(const void* kernarg, const size_t (&offsets)[N], void* (&out)[N]) {
  for (size_t i = 0; i < N; ++i)
    out[i] = const_cast<char*>(static_cast<const char*>(kernarg) + offsets[i]);
}

uint64_t simInvocations(const RalSimCudaLaunch* l) {
  return uint64_t{l->grid[0]} * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

}  // namespace

void cpuAddOne(const ral_host_workgroup* wg, void* const* args) { cpuRange(wg, args, addOne); }
void cpuFillIndex(const ral_host_workgroup* wg, void* const* args) {
  cpuRange(wg, args, fillIndex);
}
void cpuArgs(const ral_host_workgroup* wg, void* const* args) {
  if (wg->group_id[0] == 0 && wg->group_id[1] == 0 && wg->group_id[2] == 0) argsKernel(args);
}

}  // namespace ral::cts

extern "C" {
void ral_cts_sim_add_one(const RalSimCudaLaunch* launch, void** params) {
  ral::cts::addOne(params, 0, ral::cts::simInvocations(launch));
}
void ral_cts_sim_fill_index(const RalSimCudaLaunch* launch, void** params) {
  ral::cts::fillIndex(params, 0, ral::cts::simInvocations(launch));
}
void ral_cts_sim_args(const RalSimCudaLaunch*, void** params) { ral::cts::argsKernel(params); }
void ral_cts_hsa_add_one(const RalSimHsaDispatch* dispatch, const void* kernarg) {
  void* args[2];
  ral::cts::kernargPointers(kernarg, {0, 8}, args);
  ral::cts::addOne(args, 0, ral::cts::hsaInvocations(dispatch));
}
void ral_cts_hsa_fill_index(const RalSimHsaDispatch* dispatch, const void* kernarg) {
  void* args[3];
  ral::cts::kernargPointers(kernarg, {0, 8, 12}, args);
  ral::cts::fillIndex(args, 0, ral::cts::hsaInvocations(dispatch));
}
void ral_cts_hsa_args(const RalSimHsaDispatch*, const void* kernarg) {
  void* args[6];
  ral::cts::kernargPointers(kernarg, {0, 8, 10, 12, 16, 32}, args);
  ral::cts::argsKernel(args);
}
}
