// The one parallel-for of ecekde. Every multithreaded loop in the library goes through it.
#pragma once

#include <cstddef>
#include <functional>

namespace ecekde {
class RunControl;
}

namespace ecekde::detail {

/// Threads to use for a request: 0 means every hardware thread; negative values are rejected.
int resolve_threads(int requested);

/// Calls body(task, worker) for every task in [0, tasks), on at most `threads` threads (after
/// resolve_threads), handing out tasks dynamically; worker is in [0, threads) and identifies the
/// calling thread, so bodies can keep per-worker scratch. Runs inline when one thread suffices.
/// If a body throws, the remaining tasks are skipped and the first exception is rethrown here. With a
/// `control`, each task starts only if it was not cancelled (else Cancelled is thrown, as by a body).
void parallel_for(std::size_t tasks, int threads, const std::function<void(std::size_t task, int worker)>& body,
                  const RunControl* control = nullptr);

}  // namespace ecekde::detail
