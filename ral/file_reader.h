// Reading a whole file that a user named (a module, an .npy, a shared object, a code object).
// Paths come from users, so anything may be behind them: a directory, a FIFO, /dev/zero, a file
// larger than memory. Only regular files are read, their size is checked against a limit before
// anything is allocated, and every failure is a Status naming the file and the cause.
// Thread-safe (no shared state).
#ifndef RAL_RAL_FILE_READER_H_
#define RAL_RAL_FILE_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ral/status.h"

namespace ral {

// The default limit on what readRegularFile reads: 16 GiB.
inline constexpr uint64_t kMaxReadBytes = uint64_t{16} << 30;

// The bytes of the regular file at `path`. Errors: NotFound (no such file), InvalidArgument (a
// directory, FIFO, device or socket), OutOfRange (larger than `max_bytes`), OutOfMemory (no memory
// for it), Unavailable (cannot open or read, with the system's reason). Opening never blocks (a
// FIFO with no writer is refused, not waited on).
StatusOr<std::vector<uint8_t>> readRegularFile(const std::string& path,
                                               uint64_t max_bytes = kMaxReadBytes);

// The same checks without reading: OK when `path` is a regular file of at most `max_bytes`.
Status checkRegularFile(const std::string& path, uint64_t max_bytes = kMaxReadBytes);

}  // namespace ral

#endif  // RAL_RAL_FILE_READER_H_
