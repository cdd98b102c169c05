#include "runtime/allocator.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>

#include "runtime/buffer.h"

namespace cjax::runtime {
namespace {

// Every block starts with a header holding its size, so tracked_free needs no size argument (the
// JIT'd code's free takes only a pointer). 64 bytes keep the payload 64-byte aligned.
constexpr size_t kHeader = 64;
constexpr std::align_val_t kAlignment{64};
// Blocks this size and up are cached on free; smaller ones come cheaply from operator new.
constexpr size_t kCacheMinBytes = size_t{64} << 10;
// At most this much sits unused in the cache; beyond it, frees go back to the system.
constexpr size_t kCacheMaxBytes = size_t{2} << 30;
// No x86-64 process can map more than 2^47 bytes: larger requests fail here, the same way with
// and without a sanitizer's allocator (which aborts on them), and the header cannot overflow.
constexpr size_t kMaxBlockBytes = size_t{1} << 47;

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};
std::atomic<size_t> g_allocations{0};

class BlockCache {
 public:
  void* take(size_t total) {
    std::lock_guard lock(mu_);
    auto it = blocks_.find(total);
    if (it == blocks_.end()) return nullptr;
    void* p = it->second;
    blocks_.erase(it);
    bytes_ -= total;
    return p;
  }
  bool give(void* p, size_t total) {
    std::lock_guard lock(mu_);
    if (bytes_ + total > kCacheMaxBytes) return false;
    blocks_.emplace(total, p);
    bytes_ += total;
    return true;
  }
  size_t bytes() {
    std::lock_guard lock(mu_);
    return bytes_;
  }
  void release() {
    std::lock_guard lock(mu_);
    for (auto& [total, p] : blocks_) ::operator delete(p, kAlignment);
    blocks_.clear();
    bytes_ = 0;
  }
  ~BlockCache() { release(); }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> blocks_;
  size_t bytes_ = 0;
};

BlockCache& cache() {
  static BlockCache c;
  return c;
}

void note_allocation(size_t n) {
  size_t live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void* tracked_malloc(size_t nbytes) {
  if (nbytes > kMaxBlockBytes) throw std::bad_alloc();
  const size_t total = nbytes + kHeader;
  void* block = total >= kCacheMinBytes ? cache().take(total) : nullptr;
  if (!block) block = ::operator new(total, kAlignment);
  *static_cast<size_t*>(block) = nbytes;
  note_allocation(nbytes);
  return static_cast<char*>(block) + kHeader;
}

void tracked_free(void* p) {
  if (!p) return;
  void* block = static_cast<char*>(p) - kHeader;
  const size_t nbytes = *static_cast<size_t*>(block);
  g_live.fetch_sub(nbytes, std::memory_order_relaxed);
  const size_t total = nbytes + kHeader;
  if (total >= kCacheMinBytes && cache().give(block, total)) return;
  ::operator delete(block, kAlignment);
}

size_t cached_bytes() {
  return cache().bytes();
}

void release_cached_blocks() {
  cache().release();
}

MemoryStats memory_stats() {
  return {g_live.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed),
          g_allocations.load(std::memory_order_relaxed)};
}

void reset_peak_bytes() {
  g_peak.store(g_live.load(std::memory_order_relaxed));
}

}  // namespace cjax::runtime
