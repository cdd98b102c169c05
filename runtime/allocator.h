// The tracking allocator behind every Buffer and every buffer compiled code allocates: it counts
// live and peak bytes, and keeps freed large blocks for reuse. Reuse matters for speed: a fresh
// multi-megabyte block from malloc is new mmap'd memory, and touching it page-faults every 4 KiB,
// which costs a training step milliseconds; a cached block is already mapped.
#pragma once

#include <cstddef>

namespace cjax::runtime {

// A block of at least `nbytes` bytes, 64-byte aligned; counted as live until tracked_free.
// Throws std::bad_alloc when the system has no memory left.
void* tracked_malloc(size_t nbytes);
// Frees a block of tracked_malloc (null is ignored). Large blocks go to the reuse cache.
void tracked_free(void* p);

// The reuse cache: bytes held now, and a way to give them back to the system.
size_t cached_bytes();
void release_cached_blocks();

}  // namespace cjax::runtime
