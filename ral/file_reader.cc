#include "ral/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "ral/file_kind.h"

namespace ral {

namespace {

Status openError(const std::string& path, int e) {
  return Status(e == ENOENT || e == ENOTDIR ? StatusCode::kNotFound : StatusCode::kUnavailable,
                internal::strCat("cannot open '", path, "': ", std::strerror(e)));
}

// Opens without blocking (O_NONBLOCK: a FIFO with no writer would otherwise block open) and
// checks the type and size; returns the descriptor and the size.
StatusOr<std::pair<int, uint64_t>> openRegular(const std::string& path, uint64_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return openError(path, errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return unavailable("cannot stat '", path, "': ", std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return invalidArgument("'", path, "' is ", internal::fileKindName(st.st_mode),
                           ", not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    close(fd);
    return outOfRange("'", path, "' is ", size, " bytes, more than the ", max_bytes,
                      " this reader accepts");
  }
  return std::make_pair(fd, size);
}

}  // namespace

Status checkRegularFile(const std::string& path, uint64_t max_bytes) {
  RAL_ASSIGN_OR_RETURN(auto opened, openRegular(path, max_bytes));
  close(opened.first);
  return Status();
}

StatusOr<std::vector<uint8_t>> readRegularFile(const std::string& path, uint64_t max_bytes) {
  RAL_ASSIGN_OR_RETURN(auto opened, openRegular(path, max_bytes));
  const int fd = opened.first;
  std::vector<uint8_t> bytes;
  try {
    bytes.resize(opened.second);
  } catch (const std::bad_alloc&) {
    close(fd);
    return outOfMemory("cannot allocate ", opened.second, " bytes to read '", path, "'");
  }
  // The size seen by fstat is what is read: a file that grows meanwhile is cut there, one that
  // shrinks is an error (it was being rewritten).
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : 0;
      close(fd);
      if (n == 0)
        return unavailable("'", path, "' shrank while it was read (", done, " of ", bytes.size(),
                           " bytes)");
      return unavailable("cannot read '", path, "': ", std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return bytes;
}

}  // namespace ral
