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
/// With ExecutionOptions::own_rows each rank passes only its own rows instead, and blocks of centres travel
/// from rank to rank (start_pass): the paper's canonical estimate, within 1e-12 relative of one process's.
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

  /// Collective, for runs whose ranks each hold only their own rows (ExecutionOptions::own_rows): starts
  /// sending `send` to the next rank, (rank() + 1) % size(), and receiving the previous rank's `send`
  /// into `receive` (every rank passes the same sizes). The caller works meanwhile, reading but not
  /// writing `send`, and calls finish_pass() before it reads `receive`. One pass at a time. The default
  /// moves the blocks with one all_sum of size() x send.size() values; a transport with point-to-point
  /// messages overrides both (ecekde::mpi::Ranks: MPI_Isend and MPI_Irecv, then MPI_Waitall).
  virtual void start_pass(std::span<const double> send, std::span<double> receive);
  /// Completes the pass that start_pass() began.
  virtual void finish_pass();

 private:
  std::span<const double> pass_send_;
  std::span<double> pass_receive_;
};

}  // namespace ecekde
