// The kernel variants this CPU runs, for tests that force each one through ExecutionOptions::isa.
#pragma once

#include <string>
#include <vector>

namespace testdata {

/// Built under sanitizers (make test-asan): the widest oracle grids then take fewer orders p (or q), which
/// change the arithmetic but not which memory is touched, and keep their sizes; thread counts and block
/// sizes each still occur, not every pair of them. The Release build's tests run the whole grids.
#ifdef ECEKDE_SANITIZED_TESTS
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// The rank counts the ring tests compare with one process: 1 to 4; under sanitizers 1, 2 and 4 (a ring of
/// one, of two whose previous and next rank are the same, and of four, with uneven slices and, where n = 3, a
/// rank without rows), since three ranks take no path that those do not.
inline std::vector<int> rank_counts() { return kSanitized ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 3, 4}; }

inline std::vector<std::string> kernel_variants() {
  std::vector<std::string> v{"baseline"};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v.push_back("avx2");
  if (__builtin_cpu_supports("avx512f")) v.push_back("avx512");
#endif
  return v;
}

}  // namespace testdata
