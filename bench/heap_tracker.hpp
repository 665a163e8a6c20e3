// Peak heap bytes of the benchmark process, tracked by replacing global operator new/delete. Reported
// as a per-repetition counter (Google Benchmark 1.7's own memory manager leaves max_bytes_used
// uninitialised in the repetitions it does not measure).
#pragma once

namespace bench {

/// Watches the heap from construction on: the largest number of bytes live at once above what was live
/// at construction. One watch at a time (it resets the process-wide peak).
class HeapWatch {
 public:
  HeapWatch();
  double peak_bytes() const;

 private:
  long long base_;
};

}  // namespace bench
