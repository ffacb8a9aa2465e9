// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0), without Python.
#ifndef RAL_PLUGINS_STANDALONE_NPY_H_
#define RAL_PLUGINS_STANDALONE_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugins/standalone/host_tensor.h"
#include "ral/status.h"

namespace ral::cli {

// Little-endian and byte-sized types (bool, ints, uints, f16, f32, f64); C or Fortran order.
// Every malformed header or size mismatch is an InvalidArgument that names the problem.
StatusOr<HostTensor> parseNpy(const std::vector<uint8_t>& file);
StatusOr<HostTensor> readNpy(const std::string& path);

// Writes a dense row-major .npy (version 1.0). bf16 has no NumPy type: Unsupported.
StatusOr<std::vector<uint8_t>> encodeNpy(const HostTensor& t);
// Writes it to `path` as ral/file_writer.h writes outputs: only a regular file or a new path.
Status writeNpy(const std::string& path, const HostTensor& t);

}  // namespace ral::cli

#endif  // RAL_PLUGINS_STANDALONE_NPY_H_
