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
