// A compile's memory limit (--max-memory), checked between the steps of the compile.
//
// What is measured is how much the process's resident anonymous memory (/proc/self/statm:
// resident pages less file-backed and shared ones, i.e. the heap, not the mapped model file or
// code) has grown since the compile started. It is checked after every MLIR pass, between the
// ONNX importer's nodes, after each LLVM optimisation pass and around code generation; once over
// the limit, the compile stops at the next check with an error naming the step.
//
// Limits of that bound, which is what can be had inside someone else's process:
//  - it is coarse: one pass, one node or LLVM's instruction selection runs to its end before the
//    next check, and may go well beyond the limit meanwhile;
//  - it is the whole process's memory: allocations of other threads (another compile, the host)
//    count against the compile running meanwhile, and memory freed during the compile but kept by
//    malloc still counts;
//  - it needs Linux's /proc.
// ral-compile additionally limits its address space (RLIMIT_AS), which makes the bound hard there:
// an allocation beyond it fails ("out of memory") instead of being noticed afterwards.
#ifndef RAL_COMPILER_PASSES_TOOLS_MEMORY_BUDGET_H_
#define RAL_COMPILER_PASSES_TOOLS_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>

namespace ral {
namespace compiler {

class MemoryBudget {
 public:
  // `limit_bytes` 0: no limit, every check passes and nothing is read.
  explicit MemoryBudget(uint64_t limit_bytes);
  ~MemoryBudget();
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  bool limited() const { return limit_ != 0; }
  // Empty when the limit can be enforced; else why not (no /proc).
  const std::string& unavailable() const { return unavailable_; }
  // False once the growth has exceeded the limit: the first time, error() is set to "the compile
  // exceeded its memory limit of N MiB <where> ...", and every later check fails too.
  bool check(const std::string& where);
  bool exceeded() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  uint64_t anonymousBytes() const;  // 0 when statm cannot be read

  uint64_t limit_;
  uint64_t baseline_ = 0;
  int statm_ = -1;
  std::string unavailable_;
  std::string error_;
};

// "512M", "2G", "1048576" as bytes: K, M, G and T are powers of 1024, upper or lower case, and may
// be followed by B or iB. False with `error` set for anything else or a value beyond 2^64 - 1.
bool parseByteSize(const std::string& text, uint64_t* bytes, std::string* error);

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_MEMORY_BUDGET_H_
