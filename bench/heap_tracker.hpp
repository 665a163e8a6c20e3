// Peak heap bytes of the benchmark process, tracked by replacing global operator new/delete, and handed
// to Google Benchmark as its memory manager (max_bytes_used is then reported per benchmark).
#pragma once

#include <benchmark/benchmark.h>

namespace bench {

/// Registers the tracker with Google Benchmark; call before RunSpecifiedBenchmarks.
void install_heap_tracker();

}  // namespace bench
