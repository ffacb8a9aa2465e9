// Conformance: memory (allocation sizes, alignments, both memory kinds, statistics, trim,
// out-of-memory), copies of every kind at odd sizes and offsets, and fills.
#include <cstring>
#include <numeric>

#include "cts.h"

namespace ral::cts {
namespace {

class Memory : public DriverTest {
 protected:
  // Bytes [0, n) of device memory at `p`, read back.
  std::vector<unsigned char> bytes(const void* p, size_t n) {
    std::vector<unsigned char> out(n, 0xcd);
    Status s = driver().copy(out.data(), p, n, CopyKind::kDeviceToHost);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_TRUE(driver().synchronize().ok());
    return out;
  }
};

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 131 + seed * 17 + 1);
  return v;
}

TEST_P(Memory, AllocateAndFreeEverySize) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kHostVisible}) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{3}, size_t{63}, size_t{65}, size_t{4097},
                        size_t{1} << 20, (size_t{64} << 20) + 1}) {
      auto p = driver().allocate(size, 64, kind);
      ASSERT_TRUE(p.ok()) << size << ": " << p.status();
      if (size > 0) {
        EXPECT_NE(*p, nullptr);
      }
      EXPECT_TRUE(driver().deallocate(*p).ok()) << size;
    }
  }
  EXPECT_TRUE(driver().deallocate(nullptr).ok());
}

TEST_P(Memory, AlignmentsAreHonoured) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kHostVisible}) {
    for (size_t alignment :
         {size_t{1}, size_t{2}, size_t{16}, size_t{64}, size_t{128}, size_t{256}}) {
      std::vector<void*> live;
      for (size_t size : {size_t{1}, size_t{100}, size_t{5000}}) {
        auto p = driver().allocate(size, alignment, kind);
        ASSERT_TRUE(p.ok()) << p.status();
        EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % alignment, 0u) << alignment;
        live.push_back(*p);
      }
      for (void* p : live) EXPECT_TRUE(driver().deallocate(p).ok());
    }
  }
}

TEST_P(Memory, HostVisibleMemoryIsHostAddressable) {
  auto p = driver().allocate(4096, 64, MemoryKind::kHostVisible);
  ASSERT_TRUE(p.ok()) << p.status();
  auto* host = static_cast<unsigned char*>(*p);
  std::memset(host, 0x11, 4096);
  const auto src = pattern(1000, 1);
  ASSERT_TRUE(driver().copy(host + 7, src.data(), src.size(), CopyKind::kHostToDevice).ok());
  ASSERT_TRUE(driver().synchronize().ok());
  EXPECT_EQ(std::memcmp(host + 7, src.data(), src.size()), 0);
  EXPECT_EQ(host[6], 0x11);
  EXPECT_EQ(host[1007], 0x11);
  ASSERT_TRUE(driver().deallocate(*p).ok());
}

TEST_P(Memory, StatisticsAndTrim) {
  const MemoryStats before = driver().memoryStats();
  void* a = *driver().allocate(10000);
  void* b = *driver().allocate(size_t{3} << 20);
  MemoryStats s = driver().memoryStats();
  EXPECT_GE(s.bytes_in_use, before.bytes_in_use + 10000 + (size_t{3} << 20));
  EXPECT_GE(s.peak_bytes_in_use, s.bytes_in_use);
  EXPECT_EQ(s.allocations, before.allocations + 2);
  ASSERT_TRUE(driver().deallocate(b).ok());
  EXPECT_LT(driver().memoryStats().bytes_in_use, s.bytes_in_use);
  EXPECT_EQ(driver().memoryStats().peak_bytes_in_use, s.peak_bytes_in_use);
  ASSERT_TRUE(driver().deallocate(a).ok());
  EXPECT_EQ(driver().memoryStats().bytes_in_use, before.bytes_in_use);
  // The same size again comes from the cache.
  void* c = *driver().allocate(10000);
  EXPECT_EQ(driver().memoryStats().cache_hits, s.cache_hits + 1);
  ASSERT_TRUE(driver().deallocate(c).ok());
  ASSERT_TRUE(driver().trim().ok());
  EXPECT_EQ(driver().memoryStats().bytes_cached, 0u);
  EXPECT_EQ(driver().memoryStats().bytes_in_use, before.bytes_in_use);
}

TEST_P(Memory, BadFreesAreErrors) {
  void* p = *driver().allocate(256);
  // Inside memory the driver never handed out, with readable bytes on both sides: drivers that
  // keep a header in front of each block may look there.
  alignas(64) static char foreign[1024];
  EXPECT_EQ(driver().deallocate(foreign + 512).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(driver().deallocate(p).ok());
  EXPECT_EQ(driver().deallocate(p).code(), StatusCode::kInvalidArgument) << "double free";
}

TEST_P(Memory, OutOfMemoryIsACleanErrorAndTheDriverStillWorks) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kHostVisible}) {
    for (size_t size : {size_t{1} << 50, ~size_t{0} - 4096}) {
      auto p = driver().allocate(size, 64, kind);
      ASSERT_FALSE(p.ok()) << size;
      EXPECT_EQ(p.status().code(), StatusCode::kOutOfMemory) << p.status();
    }
  }
  void* data = buffer(100, 41);
  ASSERT_TRUE(addOne(data, 100).ok());
  EXPECT_EQ(read(data, 100), std::vector<uint32_t>(100, 42));
}

TEST_P(Memory, CopiesOfEveryKindAtOddSizesAndOffsets) {
  constexpr size_t kCapacity = 70000;
  void* a = *driver().allocate(kCapacity);
  void* b = *driver().allocate(kCapacity);
  for (size_t size : {size_t{1}, size_t{3}, size_t{17}, size_t{4095}, size_t{65537}}) {
    for (size_t offset : {size_t{0}, size_t{1}, size_t{3}, size_t{7}}) {
      SCOPED_TRACE(::testing::Message() << size << " bytes at offset " << offset);
      const auto src = pattern(size, static_cast<unsigned>(offset));
      auto* da = static_cast<unsigned char*>(a) + offset;
      auto* db = static_cast<unsigned char*>(b) + (offset * 5) % 8;
      ASSERT_TRUE(driver().copy(da, src.data(), size, CopyKind::kHostToDevice).ok());
      ASSERT_TRUE(driver().copy(db, da, size, CopyKind::kDeviceToDevice).ok());
      std::vector<unsigned char> back(size + 2, 0xee);
      ASSERT_TRUE(driver().copy(back.data() + 1, db, size, CopyKind::kDeviceToHost).ok());
      ASSERT_TRUE(driver().synchronize().ok());
      EXPECT_EQ(back.front(), 0xee);
      EXPECT_EQ(back.back(), 0xee);
      EXPECT_EQ(std::memcmp(back.data() + 1, src.data(), size), 0);
      std::vector<unsigned char> host(size + offset);
      ASSERT_TRUE(
          driver().copy(host.data() + offset, src.data(), size, CopyKind::kHostToHost).ok());
      ASSERT_TRUE(driver().synchronize().ok());
      EXPECT_EQ(std::memcmp(host.data() + offset, src.data(), size), 0);
    }
  }
  EXPECT_TRUE(driver().copy(a, b, 0, CopyKind::kDeviceToDevice).ok());
  ASSERT_TRUE(driver().deallocate(a).ok());
  ASSERT_TRUE(driver().deallocate(b).ok());
}

TEST_P(Memory, CopiesFromAndToHostVisibleMemory) {
  void* dev = *driver().allocate(5000);
  auto* vis = static_cast<unsigned char*>(*driver().allocate(5000, 64, MemoryKind::kHostVisible));
  const auto src = pattern(4999, 3);
  std::memcpy(vis + 1, src.data(), src.size());
  ASSERT_TRUE(driver().copy(dev, vis + 1, src.size(), CopyKind::kDeviceToDevice).ok());
  EXPECT_EQ(bytes(dev, src.size()), src);
  std::memset(vis, 0, 5000);
  ASSERT_TRUE(driver().copy(vis + 1, dev, src.size(), CopyKind::kDeviceToDevice).ok());
  ASSERT_TRUE(driver().synchronize().ok());
  EXPECT_EQ(std::memcmp(vis + 1, src.data(), src.size()), 0);
  ASSERT_TRUE(driver().deallocate(dev).ok());
  ASSERT_TRUE(driver().deallocate(vis).ok());
}

TEST_P(Memory, FillsOfEveryPatternSizeAtOddOffsets) {
  constexpr size_t kCapacity = 4096;
  void* p = *driver().allocate(kCapacity);
  const std::vector<unsigned char> sentinel(kCapacity, 0xee);
  const unsigned char patterns[8] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0};
  for (size_t width : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    for (size_t offset_units : {size_t{0}, size_t{1}, size_t{3}, size_t{5}}) {
      for (size_t count : {size_t{1}, size_t{3}, size_t{33}, size_t{257}}) {
        SCOPED_TRACE(::testing::Message()
                     << count << " x " << width << " bytes at " << offset_units * width);
        const size_t offset = offset_units * width;
        ASSERT_TRUE(driver().copy(p, sentinel.data(), kCapacity, CopyKind::kHostToDevice).ok());
        Status s = driver().fill(static_cast<char*>(p) + offset, count * width, patterns, width);
        ASSERT_TRUE(s.ok()) << s;
        const auto got = bytes(p, kCapacity);
        for (size_t i = 0; i < kCapacity; ++i) {
          const bool inside = i >= offset && i < offset + count * width;
          const unsigned char want = inside ? patterns[(i - offset) % width] : 0xee;
          ASSERT_EQ(got[i], want) << "byte " << i;
        }
      }
    }
  }
  EXPECT_TRUE(driver().fill(p, 0, patterns, 4).ok());
  EXPECT_EQ(driver().fill(p, 6, patterns, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(driver().fill(p, 6, patterns, 3).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(driver().deallocate(p).ok());
}

// Sizes past the point where drivers split copies and fills into parts (the CPU driver over its
// threads, others into staging pieces), with part boundaries that are not those of the fills.
TEST_P(Memory, LargeAllocationRoundTrip) {
  constexpr size_t kBytes = size_t{64} << 20, kFirst = (size_t{23} << 20) + 4;
  void* p = *driver().allocate(kBytes);
  const uint32_t a = 0xa5a5a5a5u, b = 0x01234567u;
  ASSERT_TRUE(driver().fill(p, kFirst, &a, 4).ok());
  ASSERT_TRUE(driver().fill(static_cast<char*>(p) + kFirst, kBytes - kFirst, &b, 4).ok());
  std::vector<uint32_t> all(kBytes / 4, 0);
  ASSERT_TRUE(driver().copy(all.data(), p, kBytes, CopyKind::kDeviceToHost).ok());
  ASSERT_TRUE(driver().synchronize().ok());
  size_t wrong = 0;
  for (size_t i = 0; i < all.size(); ++i) wrong += all[i] != (i < kFirst / 4 ? a : b);
  EXPECT_EQ(wrong, 0u);
  ASSERT_TRUE(driver().deallocate(p).ok());
}

RAL_CTS_INSTANTIATE(Memory);

}  // namespace
}  // namespace ral::cts
