#include "heap_tracker.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<long long> live_bytes{0}, peak_live_bytes{0};

void* allocate(std::size_t size) {
  // a header in front of every block remembers its size for the matching delete
  constexpr std::size_t header = alignof(std::max_align_t);
  auto* raw = static_cast<char*>(std::malloc(size + header));
  if (!raw) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(raw) = size;
  const long long now = live_bytes.fetch_add(static_cast<long long>(size)) + static_cast<long long>(size);
  long long peak = peak_live_bytes.load();
  while (now > peak && !peak_live_bytes.compare_exchange_weak(peak, now)) {
  }
  return raw + header;
}

void release(void* p) {
  if (!p) return;
  constexpr std::size_t header = alignof(std::max_align_t);
  char* raw = static_cast<char*>(p) - header;
  live_bytes.fetch_sub(static_cast<long long>(*reinterpret_cast<std::size_t*>(raw)));
  std::free(raw);
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }

namespace bench {

HeapWatch::HeapWatch() : base_(live_bytes.load()) { peak_live_bytes.store(base_); }

double HeapWatch::peak_bytes() const { return static_cast<double>(peak_live_bytes.load() - base_); }

}  // namespace bench
