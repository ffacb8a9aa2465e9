// The checks every host context applies when a compiled module's entry function receives an
// input (ral_recv_input) or sends an output (ral_send_output), so a module gets the same errors
// whichever host runs it. The host adds its own (an input not bound, an output sent twice, ...).
#ifndef RAL_IO_CHECKS_H_
#define RAL_IO_CHECKS_H_

#include <cstdint>

#include "ral/dtype.h"
#include "ral/module.h"
#include "ral/status.h"

namespace ral::io_checks {

// numel of a shape, or -1 on a negative size or a product beyond 2^48.
int64_t numelOf(const int64_t* sizes, int rank);

// ral_recv_input: `index` names one of the module's inputs, read with its signature's dtype and
// rank.
Status checkInputRequest(const Module& module, int64_t index, DType dtype, int rank);

// ral_send_output: `index` names one of the module's outputs, sent with its signature's dtype and
// rank, a valid shape whose static dims match, and data unless it is empty.
Status checkOutput(const Module& module, int64_t index, DType dtype, int rank, const int64_t* sizes,
                   const void* data);

}  // namespace ral::io_checks

#endif  // RAL_IO_CHECKS_H_
