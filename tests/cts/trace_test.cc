// Conformance: while a trace records (<ral/trace.h>), the driver's copies, fills, stream
// synchronizations and host semaphore waits appear as "driver" spans naming the device, the
// bytes moved, the copy's direction and the value waited for.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cts.h"
#include "ral/trace.h"

namespace ral::cts {
namespace {

using Tracing = DriverTest;

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST_P(Tracing, DriverOperationsAreSpans) {
  const std::string path = ::testing::TempDir() + "ral_cts_trace_" + backend().name() + ".json";
  const std::string device(deviceKindName(driver().kind()));
  constexpr size_t kBytes = 4096;
  void* p = *driver().allocate(kBytes);
  std::vector<unsigned char> host(kBytes, 7), back(kBytes, 0);
  auto s = semaphore(0);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(trace::start(path).ok());
  const uint32_t pattern = 0x01020304u;
  Status st = driver().fill(p, kBytes, &pattern, 4);
  if (st.ok()) st = driver().copy(p, host.data(), kBytes, CopyKind::kHostToDevice);
  if (st.ok()) st = driver().copy(back.data(), p, kBytes, CopyKind::kDeviceToHost);
  if (st.ok()) st = driver().synchronize();
  if (st.ok()) st = s->signal(3);
  if (st.ok()) st = s->wait(3);
  ASSERT_TRUE(trace::stop().ok());
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(back, host);
  ASSERT_TRUE(driver().deallocate(p).ok());

  const std::string json = readFile(path);
  std::remove(path.c_str());
  const std::string on = "\"device\": \"" + device + "\"";
  for (const char* span :
       {"\"name\": \"fill\", \"pid\"", "\"name\": \"copy\", \"pid\"",
        "\"name\": \"synchronize\", \"pid\"", "\"name\": \"semaphore_wait\", \"pid\""})
    EXPECT_NE(json.find(std::string("\"cat\": \"driver\", ") + span), std::string::npos)
        << span << "\n"
        << json;
  EXPECT_NE(json.find(on + ", \"bytes\": 4096, \"kind\": \"host_to_device\""), std::string::npos)
      << json;
  EXPECT_NE(json.find(on + ", \"bytes\": 4096, \"kind\": \"device_to_host\""), std::string::npos)
      << json;
  EXPECT_NE(json.find(on + ", \"bytes\": 4096}"), std::string::npos) << "the fill\n" << json;
  EXPECT_NE(json.find(on + ", \"value\": 3}"), std::string::npos) << "the wait\n" << json;
}

RAL_CTS_INSTANTIATE(Tracing);

}  // namespace
}  // namespace ral::cts
