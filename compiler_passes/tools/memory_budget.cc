#include "compiler_passes/tools/memory_budget.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ral {
namespace compiler {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

uint64_t roundUpMiB(uint64_t bytes) { return bytes / kMiB + (bytes % kMiB != 0); }

}  // namespace

MemoryBudget::MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {
  if (limit_ == 0) return;
  // Kept open: each check is one pread, cheap enough to run between ONNX nodes.
  statm_ = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (statm_ < 0) {
    unavailable_ = std::string(
                       "--max-memory needs /proc/self/statm (Linux's /proc), which "
                       "cannot be opened: ") +
                   std::strerror(errno);
    return;
  }
  baseline_ = anonymousBytes();
}

MemoryBudget::~MemoryBudget() {
  if (statm_ >= 0) ::close(statm_);
}

uint64_t MemoryBudget::anonymousBytes() const {
  // "size resident shared text lib data dt", in pages; `shared` counts the resident file-backed
  // and shared-memory pages.
  char text[256];
  const ssize_t n = ::pread(statm_, text, sizeof(text) - 1, 0);
  if (n <= 0) return 0;
  text[n] = '\0';
  char* p = text;
  std::strtoull(p, &p, 10);  // size
  const uint64_t resident = std::strtoull(p, &p, 10);
  const uint64_t shared = std::strtoull(p, &p, 10);
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return (resident > shared ? resident - shared : 0) * page;
}

bool MemoryBudget::check(const std::string& where) {
  if (limit_ == 0 || statm_ < 0) return true;
  if (!error_.empty()) return false;
  const uint64_t now = anonymousBytes();
  const uint64_t grown = now > baseline_ ? now - baseline_ : 0;
  if (grown <= limit_) return true;
  error_ = "the compile exceeded its memory limit of " + std::to_string(roundUpMiB(limit_)) +
           " MiB " + where + " (the process grew by " + std::to_string(roundUpMiB(grown)) +
           " MiB): raise --max-memory, or make the model smaller";
  return false;
}

bool parseByteSize(const std::string& text, uint64_t* bytes, std::string* error) {
  auto bad = [&](const std::string& why) {
    *error = "'" + text + "' is not a size in bytes (" + why +
             "; e.g. 1048576, 512M or 4G: K, M, G and T are powers of 1024)";
    return false;
  };
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) return bad("too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return bad("no digits");
  int shift = 0;
  if (i < text.size()) {
    static constexpr char kUnits[] = "KMGT";
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    for (int u = 0; u < 4; ++u)
      if (unit == kUnits[u]) shift = 10 * (u + 1);
    if (shift != 0) {
      ++i;
      if (i < text.size() && (text[i] == 'i' || text[i] == 'I')) {
        ++i;
        if (i == text.size()) return bad("unknown unit");
      }
    }
    if (i < text.size() && (text[i] == 'B' || text[i] == 'b')) ++i;
    if (i != text.size()) return bad("unknown unit");
  }
  if (shift != 0 && value > (UINT64_MAX >> shift)) return bad("too large");
  *bytes = value << shift;
  return true;
}

}  // namespace compiler
}  // namespace ral
