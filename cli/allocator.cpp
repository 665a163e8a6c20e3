#include "allocator.hpp"

#include <array>
#include <cstdlib>
#include <string_view>

#if defined(__linux__)
#include <unistd.h>
#endif

// Sanitizers replace the allocator: the tunables would do nothing there.
#if defined(__SANITIZE_ADDRESS__)
#define ECEKDE_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ECEKDE_SANITIZED_ALLOCATOR 1
#endif
#endif

namespace ecekde::cli {

// The estimators hold GBs of working arrays at ImageNet's shape (marginal 50,000 x 1,000 peaks at 5 GB: each
// class's points, folds and sums), first touched in 4 KiB pages. On the virtual machines measured, the page
// faults and the kernel's page clearing were a sixth of that estimate's time, and more where freed blocks
// were returned to the kernel and faulted in again. glibc's tunables (read only when a program starts, hence
// the exec): hugetlb=1 has its heaps and mapped blocks taken in transparent huge pages (2 MiB: 512 times
// fewer faults); blocks up to 32 MiB come from the heaps (mmap_threshold), which keep up to 256 MiB of
// freed memory for reuse (trim_threshold; setting the first alone sets the second to its small default, and
// that was slower than neither), and every thread allocates from the one main heap (arena_max): a worker
// thread's own arena grows in 64 MiB heaps that glibc unmaps whole once they are free, whatever the trim
// threshold, so each class's blocks were mapped, cleared by the kernel and faulted in again (marginal
// 50,000 x 1,000, seven kinds of input: 0.87 to 1.00 of the time with it, the worst 44.2 -> 38.5 s). Marginal and canonical estimates at K = 100 and 1,000
// took 0.6 to 0.94 of their time with the first three, about the same peak memory and the same numbers
// (docs/benchmarks.md, "Huge pages"). make test runs its Release tests under the same settings (the
// Makefile's TUNED_ALLOCATOR: keep the two alike).
std::optional<std::string> tuned_allocator_settings(const char* current) {
  constexpr std::array<std::string_view, 4> kTunables = {"glibc.malloc.hugetlb=1",
                                                         "glibc.malloc.mmap_threshold=33554432",
                                                         "glibc.malloc.trim_threshold=268435456",
                                                         "glibc.malloc.arena_max=1"};
  std::string tunables = current ? current : "";
  auto names = [&](std::string_view tunable) {
    const std::string_view name = tunable.substr(0, tunable.find('=') + 1);
    return tunables.starts_with(name) || tunables.find(":" + std::string(name)) != std::string::npos;
  };
  if (names(kTunables[0])) return std::nullopt;
  for (std::string_view tunable : kTunables) {
    if (names(tunable)) continue;
    if (!tunables.empty()) tunables += ':';
    tunables += tunable;
  }
  return tunables;
}

void tune_allocator(char** argv) {
#if defined(__linux__) && defined(__GLIBC__) && !defined(ECEKDE_SANITIZED_ALLOCATOR)
#if __GLIBC_PREREQ(2, 35)
  const std::optional<std::string> tunables = tuned_allocator_settings(std::getenv("GLIBC_TUNABLES"));
  if (!tunables || setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only where it failed: then this process runs on as it is
#endif
#endif
  (void)argv;
}

}  // namespace ecekde::cli
