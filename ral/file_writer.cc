#include "ral/file_writer.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ral/file_kind.h"

namespace ral {

namespace {

std::string directoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string baseOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What writing `path` replaces or creates.
struct Destination {
  std::string path;     // path itself, or a link's final target
  bool exists = false;  // a regular file is replaced
  struct stat st {};
};

// The directory a new file is created in must exist and take new files (the rename needs that
// even when the destination exists).
Status checkDirectory(const std::string& path, const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      return notFound("cannot write '", path, "': the directory '", dir, "' does not exist");
    return unavailable("cannot write '", path, "': '", dir, "': ", std::strerror(e));
  }
  if (!S_ISDIR(st.st_mode))
    return invalidArgument("cannot write '", path, "': '", dir, "' is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return unavailable("cannot write '", path, "': no permission to create files in '", dir, "' (",
                       std::strerror(errno), ")");
  return Status();
}

StatusOr<Destination> resolve(const std::string& path) {
  if (path.empty()) return invalidArgument("the output path is empty");
  Destination d;
  d.path = path;
  if (lstat(path.c_str(), &d.st) != 0) {
    const int e = errno;
    if (e != ENOENT) return unavailable("cannot write '", path, "': ", std::strerror(e));
    RAL_RETURN_IF_ERROR(checkDirectory(path, directoryOf(path)));
    return d;
  }
  if (S_ISLNK(d.st.st_mode)) {
    // A link is written through only to its owner's own regular file: a link planted in a shared
    // directory must not turn a root tool's output into a write to /etc/passwd or /dev/sda.
    char* target = realpath(path.c_str(), nullptr);
    if (target == nullptr) {
      const int e = errno;
      if (e == ENOENT)
        return invalidArgument("'", path,
                               "' is a symbolic link to a missing file: name the file to create, "
                               "or remove the link");
      return unavailable("cannot write '", path, "': cannot resolve the link: ", std::strerror(e));
    }
    d.path = target;
    std::free(target);
    if (stat(d.path.c_str(), &d.st) != 0)
      return unavailable("cannot write '", path, "': '", d.path, "': ", std::strerror(errno));
    if (!S_ISREG(d.st.st_mode))
      return invalidArgument("'", path, "' is a symbolic link to '", d.path, "', which is ",
                             internal::fileKindName(d.st.st_mode),
                             ", not a regular file: give the path of a regular file or a new one");
    if (d.st.st_uid != geteuid())
      return invalidArgument("'", path, "' is a symbolic link to '", d.path,
                             "', which belongs to user ", d.st.st_uid, ", not to this user (",
                             geteuid(),
                             "): links are written through only to the user's own files; name "
                             "the file itself to replace it");
  } else if (!S_ISREG(d.st.st_mode)) {
    return invalidArgument("'", path, "' is ", internal::fileKindName(d.st.st_mode),
                           ", not a regular file: give the path of a regular file or a new one");
  }
  d.exists = true;
  RAL_RETURN_IF_ERROR(checkDirectory(path, directoryOf(d.path)));
  return d;
}

// 64 random bits for a temporary file's name; getrandom, else the clock and a counter (the name
// need not be secret: O_EXCL makes a guessed one fail, and the next try picks another).
uint64_t randomBits() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof(bits), GRND_NONBLOCK) == static_cast<ssize_t>(sizeof(bits)))
    return bits;
  static std::atomic<uint64_t> counter{0};
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
         (static_cast<uint64_t>(getpid()) << 32) ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
}

}  // namespace

Status checkOutputFile(const std::string& path) { return resolve(path).status(); }

Status OutputFile::open(const std::string& path) {
  discard();
  RAL_ASSIGN_OR_RETURN(Destination d, resolve(path));
  path_ = path;
  destination_ = d.path;
  replaces_ = d.exists;
  mode_ = d.st.st_mode & 0777;
  uid_ = d.st.st_uid;
  gid_ = d.st.st_gid;
  // ".<name>.<random>.tmp" beside the destination (the rename must not cross file systems); the
  // name is cut so that the temporary one stays within NAME_MAX.
  const std::string dir = directoryOf(destination_);
  const std::string base = baseOf(destination_).substr(0, 200);
  for (int attempt = 0; attempt < 32; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(randomBits()));
    std::string temp = dir + "/." + base + "." + suffix + ".tmp";
    // O_EXCL: fails on anything already there, a link included, which it never follows. Mode
    // 0666 less the umask, as any new file; a replaced file's mode is set at commit().
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0) {
      fd_ = fd;
      temp_ = std::move(temp);
      return Status();
    }
    if (errno != EEXIST)
      return unavailable("cannot write '", path, "': cannot create a temporary file in '", dir,
                         "': ", std::strerror(errno));
  }
  return unavailable("cannot write '", path, "': no unused temporary file name in '", dir, "'");
}

Status OutputFile::write(const void* data, size_t size) {
  if (fd_ < 0) return failedPrecondition("write to an output file that is not open");
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      discard();
      return unavailable("cannot write '", path_, "': ", std::strerror(e));
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status();
}

Status OutputFile::commit() {
  if (fd_ < 0) return failedPrecondition("commit of an output file that is not open");
  auto failed = [&](const char* what, int e) {
    discard();
    return unavailable("cannot write '", path_, "': ", what, ": ", std::strerror(e));
  };
  if (replaces_) {
    // The replaced file's permission bits, and as root its owner (another user's file stays
    // theirs); set-id bits are not carried over.
    if (fchmod(fd_, static_cast<mode_t>(mode_)) != 0) return failed("fchmod", errno);
    if (geteuid() == 0 && fchown(fd_, uid_, gid_) != 0) return failed("fchown", errno);
  }
  if (fsync(fd_) != 0 && errno != EINVAL) return failed("fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) {
    const int e = errno;
    unlink(temp_.c_str());
    temp_.clear();
    return unavailable("cannot write '", path_, "': close: ", std::strerror(e));
  }
  // The path may have changed while the data was produced (a long compile): it must still lead to
  // the same place, and be of a kind that may be replaced.
  StatusOr<Destination> now = resolve(path_);
  if (!now.ok() || now->path != destination_) {
    unlink(temp_.c_str());
    temp_.clear();
    if (!now.ok()) return now.status();
    return unavailable("cannot write '", path_, "': it changed while it was being written (now '",
                       now->path, "')");
  }
  if (rename(temp_.c_str(), destination_.c_str()) != 0) {
    const int e = errno;
    unlink(temp_.c_str());
    temp_.clear();
    return unavailable("cannot write '", path_,
                       "': cannot rename the temporary file into place: ", std::strerror(e));
  }
  temp_.clear();
  return Status();
}

void OutputFile::discard() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_.empty()) unlink(temp_.c_str());
  temp_.clear();
}

Status writeFileAtomically(const std::string& path, const void* data, size_t size) {
  OutputFile file;
  RAL_RETURN_IF_ERROR(file.open(path));
  RAL_RETURN_IF_ERROR(file.write(data, size));
  return file.commit();
}

}  // namespace ral
