#include "ral/host_library.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ral/abi.h"

namespace ral::internal {

Status makeRalSymbolsGlobal() {
  static const Status* status = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&ral_api_call), &info) == 0 || info.dli_fname == nullptr)
      return new Status(internalError("cannot find the library that defines ral_api_call"));
    // RTLD_NOLOAD: only re-flags the copy already loaded. The handle is kept for the life of the
    // process (the library cannot be unloaded while modules may refer to it).
    if (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == nullptr) {
      const char* err = dlerror();
      return new Status(internalError("cannot make ", info.dli_fname,
                                      " globally visible: ", err ? err : "unknown error"));
    }
    return new Status();
  }();
  return *status;
}

namespace {
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};
}  // namespace

StatusOr<void*> dlopenFromMemory(const void* data, size_t size, std::string_view label) {
  // A failure here only matters to modules that call ral_api_call by name; their dlopen below
  // then reports the missing symbol.
  (void)makeRalSymbolsGlobal();
  const std::string name = strCat("ral-module:", label).substr(0, 240);
  Fd fd(memfd_create(name.c_str(), MFD_CLOEXEC));
  if (fd.get() < 0)
    return unavailable("memfd_create failed: ", std::strerror(errno),
                       " (RAL loads module code from memory and needs Linux >= 3.17)");
  const auto* p = static_cast<const char*>(data);
  size_t left = size;
  while (left > 0) {
    const ssize_t n = write(fd.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return unavailable("writing the host library to a memfd failed: ", std::strerror(errno));
    p += n;
    left -= static_cast<size_t>(n);
  }
  // The dynamic loader recognises libraries by name: a library still loaded from an earlier
  // memfd that had the same number would be returned instead of this one. Move to a number no
  // loaded library is named after (the earlier descriptors stay open meanwhile, so each dup
  // gives a new number).
  std::vector<std::unique_ptr<Fd>> held;
  int number = fd.get();
  std::string path = "/proc/self/fd/" + std::to_string(number);
  for (void* existing; (existing = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) != nullptr;) {
    dlclose(existing);
    if (held.size() >= 64) return internalError("no free memfd name for the host library");
    number = dup(number);
    if (number < 0) return unavailable("dup failed: ", std::strerror(errno));
    held.push_back(std::make_unique<Fd>(number));
    path = "/proc/self/fd/" + std::to_string(number);
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    std::string message = err ? err : "unknown dlopen error";
    // The memfd path in the message means nothing to a user.
    if (message.compare(0, path.size(), path) == 0) message = message.substr(path.size());
    while (!message.empty() && (message[0] == ':' || message[0] == ' ')) message.erase(0, 1);
    std::string hint;
    if (message.find("undefined symbol") != std::string::npos)
      hint =
          " (module code may only call RAL through its ral_imports table or ral_api_call, and "
          "link nothing else that is not in the C library)";
    if (access("/proc/self/fd", F_OK) != 0)
      hint = " (/proc is not mounted; RAL loads module code through /proc/self/fd)";
    return failedPrecondition("cannot load the host library: ", message, hint);
  }
  return handle;
}

StatusOr<void*> findSymbol(void* library, const char* symbol, SymbolKind kind,
                           std::string_view what) {
  dlerror();
  void* address = dlsym(library, symbol);
  if (address == nullptr) return notFound(what, " '", symbol, "' is not defined");
  Dl_info info{};
  void* symbol_entry = nullptr;
  if (dladdr1(address, &info, &symbol_entry, RTLD_DL_SYMENT) == 0 || symbol_entry == nullptr)
    return invalidArgument(what, " '", symbol, "' is not a symbol of a loaded library");
  // dlsym also searches the library's dependencies: "malloc" would be found in libc.
  struct link_map* own = nullptr;
  void* defining = nullptr;
  Dl_info unused{};
  if (dlinfo(library, RTLD_DI_LINKMAP, &own) != 0 || own == nullptr ||
      dladdr1(address, &unused, &defining, RTLD_DL_LINKMAP) == 0)
    return internalError("cannot inspect the library defining ", what, " '", symbol, "'");
  if (defining != static_cast<void*>(own))
    return invalidArgument(what, " '", symbol, "' is defined by ",
                           info.dli_fname ? info.dli_fname : "another library",
                           ", not by the module's host library");
  const int type = ELF64_ST_TYPE(static_cast<const ElfW(Sym)*>(symbol_entry)->st_info);
  const bool function = type == STT_FUNC || type == STT_GNU_IFUNC;
  if (kind == SymbolKind::kFunction && !function)
    return invalidArgument(what, " '", symbol, "' is not a function (ELF symbol type ", type,
                           type == STT_OBJECT ? ", data" : "", ")");
  if (kind == SymbolKind::kData && type != STT_OBJECT)
    return invalidArgument(what, " '", symbol, "' is not data (ELF symbol type ", type,
                           function ? ", a function" : "", ")");
  return address;
}

}  // namespace ral::internal
