// The two 4-element f32 inputs of tests/modules/empty.ralm (a module that does no work), for the
// benchmarks that time RAL's per-execution cost.
#ifndef RAL_BENCHMARKS_EMPTY_INPUTS_H_
#define RAL_BENCHMARKS_EMPTY_INPUTS_H_

#include <dlpack/dlpack.h>

#include <cstdint>

namespace ral::bench {

struct EmptyInputs {
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  int64_t shape[1] = {4};
  DLTensor da{}, db{};
  EmptyInputs() {
    for (DLTensor* t : {&da, &db}) {
      t->device = {kDLCPU, 0};
      t->dtype = {kDLFloat, 32, 1};
      t->ndim = 1;
      t->shape = shape;
    }
    da.data = a;
    db.data = b;
  }
  EmptyInputs(const EmptyInputs&) = delete;
  EmptyInputs& operator=(const EmptyInputs&) = delete;
};

}  // namespace ral::bench

#endif  // RAL_BENCHMARKS_EMPTY_INPUTS_H_
