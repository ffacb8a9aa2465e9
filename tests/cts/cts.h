// The driver conformance suite: one parameterised GoogleTest suite that every Driver passes.
//  - CtsBackend (one per driver: cpu, vulkan, cuda on the simulated CUDA library) creates
//    drivers and supplies the three test kernels in its own executable format;
//  - DriverTest is the fixture of every TEST_P: a fresh driver per test, skipped (with the
//    reason) where the driver is unavailable, and run as an expected failure where
//    expectations.cc lists the (test, driver) pair.
// Kernels share one argument layout on every backend (a buffer first, then scalars), so a test
// launches them the same way everywhere (entry 0 of each kernel's executable):
//   add_one(uint32_t* data, uint32_t n)                  data[i] += 1 for i < n
//   fill_index(uint32_t* data, uint32_t n, uint32_t add) data[i] = i + add for i < n
//   args(uint32_t* out, u8 a, u16 b, u32 c, u64 d, u32x4 e)
//        out = {a, b, c, lo(d), hi(d), e[0], e[1], e[2], e[3]}
// add_one and fill_index run 64-wide workgroups; args runs one workgroup of one.
#ifndef RAL_TESTS_CTS_CTS_H_
#define RAL_TESTS_CTS_CTS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ral/driver.h"
#include "tests/support/conformance.h"

namespace ral::cts {

inline constexpr uint32_t kWorkgroupSize = 64;
inline constexpr size_t kArgsWords = 9;

enum class KernelId { kAddOne, kFillIndex, kArgs };

class CtsBackend {
 public:
  virtual ~CtsBackend() = default;
  virtual std::string name() const = 0;
  // A new driver, or Unavailable (the test then skips with the reason).
  virtual StatusOr<std::unique_ptr<Driver>> createDriver() const = 0;
  // One of the kernels above: an executable whose entry 0 is the kernel, named
  // "cts.<kernel>" (each backend's specs stay valid for the life of the process).
  virtual ExecutableSpec kernel(KernelId id) const = 0;
  // The add_one executable under another name, asking for an entry point the module does not
  // have (or, where the format has no names, whose code is missing). The default asks
  // kernel(kAddOne) for one more entry, "no_such_entry".
  virtual ExecutableSpec missingEntry() const;
  // A stream made with the device's own API (for Driver::wrapNativeStream), or null where the
  // device has none; destroyNativeStream() fails if something else destroyed it already.
  virtual void* createNativeStream(Driver&) const { return nullptr; }
  virtual Status destroyNativeStream(Driver&, void*) const { return Status(); }
};

// Every backend built into this binary (cpu first).
const std::vector<const CtsBackend*>& backends();

// The expected failures (expectations.cc): which driver does not (yet) meet which test, and why.
extern const ::ral::testing::ExpectedFailureEntry kExpectedFailures[];

class DriverTest : public ::testing::TestWithParam<const CtsBackend*> {
 protected:
  void SetUp() override;
  void TearDown() override;

  Driver& driver() { return *driver_; }
  const CtsBackend& backend() const { return *GetParam(); }
  Executable* kernel(KernelId id);  // loaded once per test

  // Launch helpers (on `stream`, nullptr: the default stream).
  Status addOne(void* data, uint32_t n, Stream* stream = nullptr);
  Status fillIndex(void* data, uint32_t n, uint32_t add, Stream* stream = nullptr);
  // Device memory of `n` words holding `value` (freed in TearDown).
  void* buffer(uint32_t n, uint32_t value);
  // Words [0, n) of device memory, read back on the default stream.
  std::vector<uint32_t> read(const void* data, uint32_t n);
  std::unique_ptr<Stream> stream();
  std::shared_ptr<Semaphore> semaphore(uint64_t initial = 0);

  std::unique_ptr<Driver> driver_;

 private:
  Executable* kernels_[3] = {};
  std::vector<void*> buffers_;
  ::ral::testing::ExpectedFailureScope xfail_;
};

std::string backendName(const ::testing::TestParamInfo<const CtsBackend*>& info);

}  // namespace ral::cts

// Instantiates a DriverTest-derived suite over every backend.
#define RAL_CTS_INSTANTIATE(suite)                                                      \
  INSTANTIATE_TEST_SUITE_P(Drivers, suite, ::testing::ValuesIn(::ral::cts::backends()), \
                           ::ral::cts::backendName)

#endif  // RAL_TESTS_CTS_CTS_H_
