#include "kernels/copy/strided_copy.h"

namespace ral::kernels::internal {

Status checkStrided(const char* kernel, size_t elem_size, int rank, const int64_t* sizes,
                    int* size_index, int64_t* count) {
  switch (elem_size) {
    case 1:
      *size_index = 0;
      break;
    case 2:
      *size_index = 1;
      break;
    case 4:
      *size_index = 2;
      break;
    case 8:
      *size_index = 3;
      break;
    default:
      return invalidArgument(kernel, ": strided copy of ", elem_size, "-byte elements");
  }
  if (rank < 1 || rank > kMaxMemRefRank)
    return invalidArgument(kernel, ": rank ", rank, " is not in 1..", kMaxMemRefRank);
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= sizes[d];
  *count = n;
  return Status();
}

}  // namespace ral::kernels::internal
