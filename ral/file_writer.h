// Writing a file that a user named (a module, an .npy, an executable's code, the compiler's
// output). Paths come from users, and tools run as root too: `-o /dev/null`, a FIFO, a directory,
// or a link planted in a shared directory pointing at someone else's file must never be replaced.
// An output is only ever a regular file:
//  - a path that does not exist is created (its directory must exist);
//  - a regular file is replaced, keeping its permission bits (and, as root, its owner);
//  - a symbolic link is written through to its final target, the link itself staying, only when
//    that target is a regular file owned by this process's user;
//  - anything else (directory, FIFO, device, socket, a link to any of those, to a missing file or
//    to another user's file) is refused with InvalidArgument naming the path and what it is.
// The data goes to a new file in the destination's directory (a random name opened with
// O_CREAT | O_EXCL, never a predictable one), is fsync'ed and renamed over the destination, so
// readers see the old file or the whole new one; on any failure the temporary file is removed.
// Thread-safe (no shared state).
#ifndef RAL_RAL_FILE_WRITER_H_
#define RAL_RAL_FILE_WRITER_H_

#include <cstddef>
#include <string>

#include "ral/status.h"

namespace ral {

// OK when `path` may be written as described above; otherwise the error writing would give.
// Tools call it before doing the work whose result they write.
Status checkOutputFile(const std::string& path);

// One output being written. Not copyable; the destructor discards an uncommitted file.
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() { discard(); }

  // Checks `path` and creates the temporary file that commit() renames over it.
  Status open(const std::string& path);
  // The temporary file's descriptor (for streams that write to a descriptor); -1 when not open.
  int fd() const { return fd_; }
  Status write(const void* data, size_t size);
  // fsync, the replaced file's permissions, then the rename; checks again first that the path
  // still resolves to the same destination. The file is discarded if any step fails.
  Status commit();
  // Closes and removes the temporary file (nothing happens when none is open).
  void discard();

 private:
  std::string path_;         // as given, for messages
  std::string destination_;  // what the rename replaces: path_, or a link's final target
  std::string temp_;
  int fd_ = -1;
  bool replaces_ = false;  // destination_ exists: its mode and owner are kept
  unsigned mode_ = 0;
  unsigned uid_ = 0, gid_ = 0;
};

// open(), write(), commit().
Status writeFileAtomically(const std::string& path, const void* data, size_t size);

}  // namespace ral

#endif  // RAL_RAL_FILE_WRITER_H_
