// Picks the tile kernels for this CPU once.
#include "core/kernels.hpp"

#include <string_view>

#include "core/messages.hpp"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

// The variants built besides baseline (CMake's ECEKDE_KERNEL_ISAS; every one by default).
#ifndef ECEKDE_KERNELS_AVX2
#define ECEKDE_KERNELS_AVX2 0
#endif
#ifndef ECEKDE_KERNELS_AVX512
#define ECEKDE_KERNELS_AVX512 0
#endif

namespace ecekde::detail {
namespace isa_baseline { TileKernels make_kernels(); }
#if ECEKDE_KERNELS_AVX2
namespace isa_avx2 { TileKernels make_kernels(); }
#endif
#if ECEKDE_KERNELS_AVX512
namespace isa_avx512 { TileKernels make_kernels(); }
#endif

namespace {

bool built(std::string_view isa) {
  return isa == "baseline" || (isa == "avx2" && ECEKDE_KERNELS_AVX2) || (isa == "avx512" && ECEKDE_KERNELS_AVX512);
}

bool supported(std::string_view isa) {
  if (isa == "baseline") return true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (isa == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == "avx512") return __builtin_cpu_supports("avx512f");
#endif
  return false;
}

bool usable(std::string_view isa) { return built(isa) && supported(isa); }

TileKernels make(std::string_view isa) {
#if ECEKDE_KERNELS_AVX512
  if (isa == "avx512") return isa_avx512::make_kernels();
#endif
#if ECEKDE_KERNELS_AVX2
  if (isa == "avx2") return isa_avx2::make_kernels();
#endif
  (void)isa;
  return isa_baseline::make_kernels();
}

}  // namespace

const TileKernels& tile_kernels() {
  static const TileKernels best = make(usable("avx512") ? "avx512" : usable("avx2") ? "avx2" : "baseline");
  return best;
}

const TileKernels& tile_kernels_for(std::string_view isa) {
  if (isa.empty()) return tile_kernels();
  if (isa != "avx512" && isa != "avx2" && isa != "baseline")
    fail_with("unknown kernel variant '", isa, "' (expected avx512, avx2 or baseline)");
  if (!supported(isa)) fail_with("kernel variant '", isa, "' is not supported by this CPU");
  if (!built(isa)) fail_with("kernel variant '", isa, "' was not built (CMake's ECEKDE_KERNEL_ISAS)");
#if defined(__x86_64__)
  // Each made on first use only: make_kernels() is compiled for its own instruction set, and the AVX-512
  // one's moves of its table (zmm registers) are illegal instructions on an AVX2 CPU.
  if (isa == "avx512") {
    static const TileKernels avx512 = make("avx512");
    return avx512;
  }
  if (isa == "avx2") {
    static const TileKernels avx2 = make("avx2");
    return avx2;
  }
#endif
  static const TileKernels baseline = make("baseline");
  return baseline;
}

bool kernel_variant_supported(std::string_view isa) { return usable(isa); }

FlushSubnormals::FlushSubnormals(bool on) {
#if defined(__x86_64__)
  saved_ = _MM_GET_FLUSH_ZERO_MODE();
  on_ = on && saved_ != _MM_FLUSH_ZERO_ON;
  if (on_) _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
#else
  (void)on;
#endif
}

FlushSubnormals::~FlushSubnormals() {
#if defined(__x86_64__)
  if (on_) _MM_SET_FLUSH_ZERO_MODE(saved_);
#endif
}

}  // namespace ecekde::detail
