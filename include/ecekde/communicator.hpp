// Running one computation on several processes (MPI ranks, torch.distributed workers): pass a
// Communicator in ExecutionOptions::communicator on every process.
#pragma once

#include <span>

namespace ecekde {

/// The processes of a distributed run, as ecekde needs them. Every process (a rank) holds the same input
/// and calls the same function with the same options. The pairwise sweeps (and the crossfit estimator's
/// per-problem and per-fold fits) split their rows across the ranks; the per-row results are combined with
/// all_sum, each value coming from the one rank that computed it (the others add zeros), so every rank
/// goes on with exactly the values of a single-process run: results are bitwise the same for any number
/// of ranks, except the gradient (its centre-side sums add the ranks' partial sums: within 1e-15 relative).
///
/// A Communicator is called only from the thread that called ecekde, never from its workers, and every
/// rank makes the same calls in the same order. ecekde does not handle a rank that fails: the front end
/// must end the whole job (the CLI under mpirun calls MPI_Abort on any error).
class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's index, in [0, size()).
  virtual int rank() const = 0;
  /// The number of processes.
  virtual int size() const = 0;
  /// Collective: replaces `values` on every rank by their element-wise sum over the ranks (every rank
  /// passes the same number of values).
  virtual void all_sum(std::span<double> values) = 0;
};

}  // namespace ecekde
