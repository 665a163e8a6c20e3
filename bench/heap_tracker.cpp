#include "heap_tracker.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<long long> live_bytes{0}, peak_bytes{0}, allocations{0};

void* allocate(std::size_t size) {
  // a header in front of every block remembers its size for the matching delete
  constexpr std::size_t header = alignof(std::max_align_t);
  auto* raw = static_cast<char*>(std::malloc(size + header));
  if (!raw) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(raw) = size;
  const long long now = live_bytes.fetch_add(static_cast<long long>(size)) + static_cast<long long>(size);
  long long peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  allocations.fetch_add(1);
  return raw + header;
}

void release(void* p) {
  if (!p) return;
  constexpr std::size_t header = alignof(std::max_align_t);
  char* raw = static_cast<char*>(p) - header;
  live_bytes.fetch_sub(static_cast<long long>(*reinterpret_cast<std::size_t*>(raw)));
  std::free(raw);
}

class HeapTracker : public benchmark::MemoryManager {
 public:
  void Start() override {
    base_ = live_bytes.load();
    peak_bytes.store(base_);
    allocations_ = allocations.load();
  }
  // Google Benchmark 1.7 still declares the pointer form pure; the reference form forwards to it.
  void Stop(Result* result) override {
    result->max_bytes_used = peak_bytes.load() - base_;
    result->num_allocs = allocations.load() - allocations_;
  }

 private:
  long long base_ = 0, allocations_ = 0;
};

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }

namespace bench {

void install_heap_tracker() {
  static HeapTracker tracker;
  benchmark::RegisterMemoryManager(&tracker);
}

}  // namespace bench
