// The ranks of an MPI job as an ecekde::Communicator (ecekde/communicator.hpp). Target ecekde::mpi.
//
//   ecekde::mpi::Session mpi(argc, argv);        // MPI_Init_thread, MPI_Finalize at the end
//   ecekde::mpi::Ranks world;                     // MPI_COMM_WORLD
//   options.execution.communicator = &world;      // every rank: the same input, the same call
//   const ecekde::Result r = ecekde::estimate(probs, labels, options);  // the same Result on every rank
#pragma once

#include <mpi.h>

#include <span>
#include <vector>

#include "ecekde/communicator.hpp"

namespace ecekde::mpi {

/// MPI for the life of the object: MPI_Init_thread (MPI_THREAD_FUNNELED: only the thread that calls
/// ecekde calls MPI) unless MPI is already initialised, and MPI_Finalize at the end if it initialised it.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  bool owned_ = false;
};

/// Whether this process was started by mpirun or mpiexec (Open MPI's or a PMI launcher's environment).
bool launched_by_mpirun();

/// Ends every rank of the job now (MPI_Abort with `status`): for a rank that failed while the others may
/// be waiting for it in a collective.
[[noreturn]] void abort_all(int status);

/// The ranks of an MPI communicator (not owned; MPI_COMM_WORLD by default). all_sum is MPI_Allreduce,
/// in pieces of at most 2^30 values; a ring pass is MPI_Isend to the next rank and MPI_Irecv from the
/// previous one (in the same pieces), completed by MPI_Waitall; an MPI error throws ecekde::Error with
/// MPI's message.
class Ranks : public Communicator {
 public:
  explicit Ranks(MPI_Comm comm = MPI_COMM_WORLD);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_sum(std::span<double> values) override;
  void start_pass(std::span<const double> send, std::span<double> receive) override;
  void finish_pass() override;

  /// Bytes this process has passed to all_sum so far (each value counted once).
  double bytes_summed() const { return bytes_; }
  /// Bytes this process has sent to the next rank in ring passes so far.
  double bytes_passed() const { return bytes_passed_; }
  /// Seconds this process has spent in finish_pass() so far: how long its sweeps waited for blocks.
  double seconds_waiting() const { return seconds_waiting_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  double bytes_ = 0, bytes_passed_ = 0, seconds_waiting_ = 0;
  std::vector<MPI_Request> pending_;
};

}  // namespace ecekde::mpi
