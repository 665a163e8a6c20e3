#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/messages.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

int resolve_threads(int requested) {
  if (requested < 0) fail_with("threads must be >= 0 (0 = all cores), got ", requested);
  if (requested > 0) return requested;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_for(std::size_t tasks, int threads, const std::function<void(std::size_t, int)>& body,
                  const RunControl* control) {
  const int workers =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(resolve_threads(threads)), tasks));
  const auto task = [&](std::size_t t, int worker) {
    WorkLedger::check(control);
    body(t, worker);
  };
  if (workers <= 1) {
    for (std::size_t t = 0; t < tasks; ++t) task(t, 0);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto run = [&](int worker) {
    try {
      for (std::size_t t; !stop.load(std::memory_order_relaxed) &&
                          (t = next.fetch_add(1, std::memory_order_relaxed)) < tasks;)
        task(t, worker);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& th : pool) th.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ecekde::detail
