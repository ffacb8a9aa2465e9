#include "plugins/torch/ral_module.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "ral/file_kind.h"
#include "ral/module_spec.h"

namespace ral::torch_host {
namespace {

// Module files are at most this large (the core loader's FlatBuffers limit, 2 GiB).
constexpr int64_t kMaxModuleFileBytes = (int64_t{1} << 31) - 2;

// The whole file, checked to be a regular file of a module's size before anything is read:
// directories, FIFOs and devices would fail (or block, or never end) in the middle of a read.
std::string readFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer must not block; it is refused below.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  TORCH_CHECK(fd >= 0, "ral: cannot open module file '", path, "': ", std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st {};
  TORCH_CHECK(fstat(fd, &st) == 0, "ral: cannot stat module file '", path,
              "': ", std::strerror(errno));
  TORCH_CHECK(S_ISREG(st.st_mode), "ral: cannot load module file '", path, "': it is ",
              internal::fileKindName(st.st_mode), ", not a module file");
  TORCH_CHECK(st.st_size <= kMaxModuleFileBytes, "ral: cannot load module file '", path,
              "': it has ", static_cast<int64_t>(st.st_size),
              " bytes; module files are limited to 2 GiB");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    TORCH_CHECK(n >= 0, "ral: cannot read module file '", path, "': ", std::strerror(errno));
    if (n == 0) break;  // shrunk while being read: the loader refuses the truncated module
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

std::vector<std::string> describe(const std::vector<TensorSignature>& sigs) {
  std::vector<std::string> out;
  out.reserve(sigs.size());
  for (const TensorSignature& s : sigs)
    out.push_back(s.name.empty() ? s.toString() : escapeInvalidUtf8(s.name) + ":" + s.toString());
  return out;
}

}  // namespace

RalModule::RalModule(const std::string& path) : bytes_(readFile(path)) {
  init(internal::strCat("module file '", path, "'"));
}

RalModule::RalModule(FromBytes, std::string bytes) : bytes_(std::move(bytes)) { init(""); }

void RalModule::init(const std::string& source) {
  auto context = TorchContext::load(bytes_.data(), bytes_.size());
  if (!context.ok()) {
    const Status s = source.empty() ? context.status() : context.status().withContext(source);
    TORCH_CHECK(false, escapeInvalidUtf8(s.toString()));
  }
  context_ = *std::move(context);
}

c10::intrusive_ptr<RalModule> RalModule::fromBytes(std::string bytes) {
  return c10::make_intrusive<RalModule>(RalModule(FromBytes(), std::move(bytes)));
}

c10::intrusive_ptr<RalModule> RalModule::fromState(const at::Tensor& state) {
  TORCH_CHECK(
      state.defined() && state.is_cpu() && state.scalar_type() == at::kByte && state.dim() == 1,
      "ral: a module's state is a 1-D uint8 CPU tensor");
  const at::Tensor bytes = state.contiguous();
  return fromBytes(
      std::string(static_cast<const char*>(bytes.data_ptr()), static_cast<size_t>(bytes.numel())));
}

std::vector<std::string> RalModule::inputSignature() const {
  return describe(context_->module().inputs());
}

std::vector<std::string> RalModule::outputSignature() const {
  return describe(context_->module().outputs());
}

void RalModule::selectDevice(const std::string& uri) const {
  const Status selected = context_->selectDevice(uri);
  TORCH_CHECK(selected.ok(), "ral: ", selected.toString());
}

at::Tensor RalModule::state() const {
  at::Tensor t = at::empty({static_cast<int64_t>(bytes_.size())}, at::kByte);
  if (!bytes_.empty()) std::memcpy(t.data_ptr(), bytes_.data(), bytes_.size());
  return t;
}

}  // namespace ral::torch_host
