// VulkanDriver: memory, copies and fills.
#include <algorithm>
#include <cstring>

#include "drivers/common/driver_trace.h"
#include "drivers/vulkan/vulkan_driver.h"

namespace ral::vulkan {
namespace {

// Staging for host data goes through host-visible blocks of at most this size.
constexpr size_t kStagingPiece = size_t{16} << 20;
// Small, 4-byte aligned host data rides in the command buffer (vkCmdUpdateBuffer's limit).
constexpr size_t kInlineUpdateBytes = 65536;

void hostFill(void* dst, size_t bytes, const void* pattern, size_t pattern_size) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* p = static_cast<const unsigned char*>(pattern);
  if (std::all_of(p, p + pattern_size, [&](unsigned char c) { return c == p[0]; })) {
    std::memset(out, p[0], bytes);
    return;
  }
  // Doubling: the filled prefix is copied onto the rest.
  std::memcpy(out, p, std::min(bytes, pattern_size));
  size_t done = std::min(bytes, pattern_size);
  while (done < bytes) {
    const size_t n = std::min(done, bytes - done);
    std::memcpy(out + done, out, n);
    done += n;
  }
}

bool rangesOverlap(const BufferRange& a, const BufferRange& b, size_t bytes) {
  return a.buffer == b.buffer && a.offset < b.offset + bytes && b.offset < a.offset + bytes;
}

}  // namespace

StatusOr<void*> VulkanDriver::allocate(size_t bytes, size_t alignment, MemoryKind kind) {
  return memory_->allocate(bytes, alignment, kind);
}

UseFence VulkanDriver::currentFence() {
  UseFence fence;
  std::lock_guard<std::mutex> lock(streams_mutex_);
  for (const auto& weak : streams_) {
    if (auto s = weak.lock()) {
      std::lock_guard<std::mutex> slock(s->mutex());
      s->appendFenceLocked(&fence);
    }
  }
  return fence;
}

Status VulkanDriver::deallocate(void* ptr) {
  if (ptr == nullptr) return Status();
  return memory_->deallocate(ptr, currentFence());
}

Status VulkanDriver::trim() {
  memory_->trim();
  return Status();
}

Status VulkanDriver::copyToDevice(CommandStream& s, const BufferRange& dst, const void* src,
                                  size_t bytes) {
  std::unique_lock<std::mutex> lock(s.mutex());
  if (dst.host != nullptr && s.idleLocked()) {
    std::memcpy(dst.host, src, bytes);  // nothing queued can touch it: write it directly
    return Status();
  }
  if (bytes <= kInlineUpdateBytes && bytes % 4 == 0 && dst.offset % 4 == 0)
    return s.updateLocked(dst.buffer, dst.offset, src, bytes);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kStagingPiece, bytes - done);
    RAL_ASSIGN_OR_RETURN(void* staging, memory_->allocate(n, 64, MemoryKind::kHostVisible));
    auto range = memory_->resolve(staging, n);
    Status st = range.status();
    if (st.ok()) {
      std::memcpy(range->host, static_cast<const char*>(src) + done, n);
      st = s.copyLocked(range->buffer, range->offset, dst.buffer, dst.offset + done, n);
    }
    // Reused once the copy has run.
    (void)memory_->deallocate(staging, UseFence{{s.timeline(), s.openValueLocked()}});
    RAL_RETURN_IF_ERROR(st);
    done += n;
  }
  return Status();
}

Status VulkanDriver::copyToHost(CommandStream& s, void* dst, const BufferRange& src, size_t bytes) {
  std::unique_lock<std::mutex> lock(s.mutex());
  if (src.host != nullptr) {
    if (!s.idleLocked()) {
      RAL_ASSIGN_OR_RETURN(const uint64_t value, s.flushLocked());
      lock.unlock();
      RAL_RETURN_IF_ERROR(scheduler_->waitStream(*s.queue(), value, kInfiniteTimeout));
    }
    std::memcpy(dst, src.host, bytes);
    return Status();
  }
  for (size_t done = 0; done < bytes;) {
    if (!lock.owns_lock()) lock.lock();
    const size_t n = std::min(kStagingPiece, bytes - done);
    RAL_ASSIGN_OR_RETURN(void* staging, memory_->allocate(n, 64, MemoryKind::kHostVisible));
    auto range = memory_->resolve(staging, n);
    Status st = range.status();
    uint64_t value = 0;
    if (st.ok()) st = s.copyLocked(src.buffer, src.offset + done, range->buffer, range->offset, n);
    if (st.ok()) {
      auto flushed = s.flushLocked();
      st = flushed.status();
      if (st.ok()) value = *flushed;
    }
    lock.unlock();
    if (st.ok()) st = scheduler_->waitStream(*s.queue(), value, kInfiniteTimeout);
    if (st.ok()) std::memcpy(static_cast<char*>(dst) + done, range->host, n);
    (void)memory_->deallocate(staging, UseFence{});
    RAL_RETURN_IF_ERROR(st);
    done += n;
  }
  return Status();
}

Status VulkanDriver::copy(void* dst, const void* src, size_t bytes, CopyKind kind, Stream* stream) {
  auto span =
      drivers::transferSpan("copy", DeviceKind::kVulkan, bytes, drivers::copyKindName(kind));
  if (bytes == 0) return Status();
  if (dst == nullptr || src == nullptr)
    return invalidArgument("vulkan: copy of ", bytes, " bytes with a null pointer");
  auto d = memory_->resolve(dst, bytes);
  auto r = memory_->resolve(src, bytes);
  // A pointer inside an allocation but running past its end is an error, whatever the kind.
  if (!d.ok() && d.status().code() != StatusCode::kNotFound) return d.status();
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  const bool dst_ours = d.ok(), src_ours = r.ok();
  switch (kind) {
    case CopyKind::kHostToDevice:
      if (!dst_ours) return invalidArgument("vulkan: host-to-device copy: ", d.status().message());
      break;
    case CopyKind::kDeviceToHost:
      if (!src_ours) return invalidArgument("vulkan: device-to-host copy: ", r.status().message());
      break;
    case CopyKind::kDeviceToDevice:
      if (!dst_ours || !src_ours)
        return invalidArgument("vulkan: device-to-device copy: ",
                               (!dst_ours ? d : r).status().message());
      break;
    case CopyKind::kHostToHost:
      break;
  }
  RAL_ASSIGN_OR_RETURN(CommandStream * s, commandStream(stream));
  if (dst_ours && src_ours) {
    if (rangesOverlap(*d, *r, bytes))
      return invalidArgument("vulkan: copy between overlapping ranges");
    std::lock_guard<std::mutex> lock(s->mutex());
    return s->copyLocked(r->buffer, r->offset, d->buffer, d->offset, bytes);
  }
  if (dst_ours) return copyToDevice(*s, *d, src, bytes);
  if (src_ours) return copyToHost(*s, dst, *r, bytes);
  const auto a = reinterpret_cast<uintptr_t>(dst), b = reinterpret_cast<uintptr_t>(src);
  if (a < b + bytes && b < a + bytes)
    return invalidArgument("vulkan: copy between overlapping ranges");
  std::memcpy(dst, src, bytes);
  return Status();
}

Status VulkanDriver::fillPieces(CommandStream& s, const BufferRange& dst, size_t bytes,
                                const void* pattern, size_t pattern_size) {
  // A host-visible block holding the pattern repeated, copied over the destination piece by
  // piece (copies have no alignment rules, unlike vkCmdFillBuffer).
  const size_t piece = std::min(bytes, kStagingPiece / pattern_size * pattern_size);
  RAL_ASSIGN_OR_RETURN(void* staging, memory_->allocate(piece, 64, MemoryKind::kHostVisible));
  auto range = memory_->resolve(staging, piece);
  Status st = range.status();
  if (st.ok()) hostFill(range->host, piece, pattern, pattern_size);
  for (size_t done = 0; st.ok() && done < bytes; done += piece)
    st = s.copyLocked(range->buffer, range->offset, dst.buffer, dst.offset + done,
                      std::min(piece, bytes - done));
  (void)memory_->deallocate(staging, UseFence{{s.timeline(), s.openValueLocked()}});
  return st;
}

Status VulkanDriver::fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
                          Stream* stream) {
  auto span = drivers::transferSpan("fill", DeviceKind::kVulkan, bytes);
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    return invalidArgument("vulkan: fill pattern of ", pattern_size, " bytes (1, 2, 4 or 8)");
  if (bytes % pattern_size != 0)
    return invalidArgument("vulkan: fill of ", bytes, " bytes is not a multiple of the ",
                           pattern_size, "-byte pattern");
  if (bytes == 0) return Status();
  if (dst == nullptr || pattern == nullptr)
    return invalidArgument("vulkan: fill with a null pointer");
  auto d = memory_->resolve(dst, bytes);
  if (!d.ok())
    return d.status().code() == StatusCode::kNotFound
               ? invalidArgument("vulkan: fill: ", d.status().message())
               : d.status();
  RAL_ASSIGN_OR_RETURN(CommandStream * s, commandStream(stream));
  std::lock_guard<std::mutex> lock(s->mutex());
  if (d->host != nullptr && s->idleLocked()) {
    hostFill(d->host, bytes, pattern, pattern_size);
    return Status();
  }
  // vkCmdFillBuffer writes a 4-byte word at 4-byte aligned offsets.
  unsigned char word[8];
  for (size_t i = 0; i < 8; ++i)
    word[i] = static_cast<const unsigned char*>(pattern)[i % pattern_size];
  const bool word_pattern = pattern_size <= 4 || std::memcmp(word, word + 4, 4) == 0;
  if (word_pattern && d->offset % 4 == 0 && bytes % 4 == 0) {
    uint32_t value;
    std::memcpy(&value, word, 4);
    return s->fillLocked(d->buffer, d->offset, bytes, value);
  }
  return fillPieces(*s, *d, bytes, pattern, pattern_size);
}

}  // namespace ral::vulkan
