// ecekde under mpirun (built with ECEKDE_MPI): estimate and report split their work across the ranks
// (ecekde/communicator.hpp) and rank 0 alone prints and writes; a failure on any rank ends the whole job
// with one line and a non-zero status. Without MPI, or started without mpirun, all of this is a no-op.
#pragma once

#include <string>
#include <string_view>

#include "ecekde/communicator.hpp"
#include "ecekde/data.hpp"

namespace ecekde::cli {

/// MPI for the life of the command, when it was launched by mpirun.
class Distributed {
 public:
  Distributed(int& argc, char**& argv);
  ~Distributed();
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  /// The command's exit status: returned as it is, except that under mpirun a failure ends every rank
  /// (the others may be waiting for this one).
  int finish(int status);
};

/// The ranks of the job; null when the command runs alone (or on one rank).
Communicator* communicator();

/// Whether this process prints and writes files: rank 0, or the process alone.
bool prints();

/// Before a rank other than 0 reports a failure (or an interruption): waits up to two seconds, so that a
/// failure every rank shares (bad input) is reported once, by rank 0, whose finish() ends the job. When
/// mpirun's signal to end the job arrives meanwhile, this rank ends quietly with `status`. Returns
/// " (rank r of R)" to append to the message ("" on rank 0 or alone).
std::string before_error_report(int status);

/// The rows this rank passes to the library: with `own_rows` (--own-rows, ExecutionOptions::own_rows) its
/// consecutive share of the input, rank 0 the first rows; otherwise, or alone, all of them.
struct RowShare {
  ProbsView probs;
  LabelsView labels;
};
RowShare own_share(ProbsView probs, LabelsView labels, bool own_rows);

/// Throws UsageError when `command` (one that does not split its work) was started on several ranks.
void require_one_process(std::string_view command);

}  // namespace ecekde::cli
