// The ranks of a distributed run as threads of one process: a Communicator for testing the distributed
// paths without MPI.
#pragma once

#include <atomic>
#include <barrier>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ecekde/communicator.hpp"

namespace ecekde::testing {

class ThreadRanks {
 public:
  explicit ThreadRanks(int ranks) : ranks_(ranks), sync_(ranks), slots_(static_cast<std::size_t>(ranks)) {}

  /// Runs body(rank, comm) on every rank, each on its own thread, and rethrows the first rank's exception.
  void run(const std::function<void(int, Communicator&)>& body) {
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks_));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks_; ++r)
      threads.emplace_back([&, r] {
        Rank comm(*this, r);
        try {
          body(r, comm);
        } catch (...) {
          errors[static_cast<std::size_t>(r)] = std::current_exception();
          failed_ = true;
          sync_.arrive_and_drop();  // the others' collectives go on (and throw) instead of waiting
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  /// The number of all_sum calls made by rank 0 so far.
  int collectives() const { return collectives_; }

 private:
  class Rank : public Communicator {
   public:
    Rank(ThreadRanks& group, int rank) : group_(group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return group_.ranks_; }
    void all_sum(std::span<double> values) override {
      auto& slots = group_.slots_;
      slots[static_cast<std::size_t>(rank_)] = values;
      group_.sync_.arrive_and_wait();
      if (group_.failed_) throw std::runtime_error("another rank failed");
      std::vector<double> total(values.size(), 0.0);
      for (const auto& s : slots) {
        if (s.size() != values.size()) throw std::runtime_error("ranks passed different sizes to all_sum");
        for (std::size_t i = 0; i < values.size(); ++i) total[i] += s[i];
      }
      group_.sync_.arrive_and_wait();  // everyone has read every slot
      std::copy(total.begin(), total.end(), values.begin());
      if (rank_ == 0) ++group_.collectives_;
    }

   private:
    ThreadRanks& group_;
    int rank_;
  };

  int ranks_;
  std::barrier<> sync_;
  std::vector<std::span<double>> slots_;
  std::atomic<bool> failed_{false};
  std::atomic<int> collectives_{0};
};

}  // namespace ecekde::testing
