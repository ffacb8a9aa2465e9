// What a path that is not a regular file is, in words for error messages ("a directory", ...):
// shared by the file reader and writer of the core and by ral_torch's module loader. Thread-safe.
#ifndef RAL_RAL_FILE_KIND_H_
#define RAL_RAL_FILE_KIND_H_

#include <sys/stat.h>

namespace ral::internal {

inline const char* fileKindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace ral::internal

#endif  // RAL_RAL_FILE_KIND_H_
