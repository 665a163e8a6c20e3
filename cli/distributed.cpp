#include "distributed.hpp"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>
#include <thread>

#include "app.hpp"
#include "ecekde/error.hpp"
#include "interrupt.hpp"

#ifdef ECEKDE_WITH_MPI
#include "ecekde/mpi.hpp"
#endif

namespace ecekde::cli {

namespace {

#ifdef ECEKDE_WITH_MPI
std::unique_ptr<mpi::Session> g_session;
std::unique_ptr<mpi::Ranks> g_ranks;  // set when there are at least two
#endif

int rank() { return communicator() ? communicator()->rank() : 0; }

}  // namespace

Distributed::Distributed([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#ifdef ECEKDE_WITH_MPI
  if (!mpi::launched_by_mpirun()) return;
  g_session = std::make_unique<mpi::Session>(argc, argv);
  auto world = std::make_unique<mpi::Ranks>();
  if (world->size() > 1) g_ranks = std::move(world);
#endif
}

Distributed::~Distributed() {
#ifdef ECEKDE_WITH_MPI
  g_ranks.reset();
  g_session.reset();
#endif
}

int Distributed::finish(int status) {
#ifdef ECEKDE_WITH_MPI
  if (status != 0 && g_ranks) mpi::abort_all(status);
#endif
  return status;
}

Communicator* communicator() {
#ifdef ECEKDE_WITH_MPI
  return g_ranks.get();
#else
  return nullptr;
#endif
}

bool prints() { return rank() == 0; }

std::string before_error_report(int status) {
  const Communicator* comm = communicator();
  if (prints() || !comm) return "";
  for (int wait = 0; wait < 40; ++wait) {
    if (run_control().cancelled()) std::_Exit(status);  // mpirun is ending the job (SIGTERM): rank 0 has spoken
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return " (rank " + std::to_string(rank()) + " of " + std::to_string(comm->size()) + ")";
}

RowShare own_share(ProbsView probs, LabelsView labels, bool own_rows) {
  Communicator* comm = communicator();
  if (!own_rows || !comm) return {probs, labels};
  if (labels.size() != probs.rows())  // as the library says it, for the whole input
    fail_with("labels has ", labels.size(), " entries but probs has ", probs.rows(), " rows");
  const auto ranks = static_cast<std::size_t>(comm->size()), me = static_cast<std::size_t>(comm->rank());
  // Every rank must slice the same input: the library sees only the slices, and would join unrelated rows.
  std::vector<double> sizes(2 * ranks, 0.0);
  sizes[2 * me] = static_cast<double>(probs.rows());
  sizes[2 * me + 1] = static_cast<double>(probs.cols());
  comm->all_sum(sizes);
  for (std::size_t r = 1; r < ranks; ++r)
    if (sizes[2 * r] != sizes[0] || sizes[2 * r + 1] != sizes[1])
      fail_with("the ranks were given different inputs or options (rank 0: n = ", static_cast<std::size_t>(sizes[0]),
                ", K = ", static_cast<std::size_t>(sizes[1]), "; rank ", r, ": n = ", static_cast<std::size_t>(sizes[2 * r]),
                ", K = ", static_cast<std::size_t>(sizes[2 * r + 1]), "): every rank must read the same data with the same settings");
  const std::size_t n = probs.rows(), begin = n * me / ranks, rows = n * (me + 1) / ranks - begin;
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(begin) * probs.row_stride();
  const ProbsView mine =
      probs.dtype() == ProbsView::DType::float64
          ? ProbsView(static_cast<const double*>(probs.data()) + at, rows, probs.cols(), probs.row_stride(), probs.col_stride())
          : ProbsView(static_cast<const float*>(probs.data()) + at, rows, probs.cols(), probs.row_stride(), probs.col_stride());
  const std::ptrdiff_t label_at = static_cast<std::ptrdiff_t>(begin) * labels.stride();
  const LabelsView own_labels =
      labels.dtype() == LabelsView::DType::int64
          ? LabelsView(static_cast<const std::int64_t*>(labels.data()) + label_at, rows, labels.stride())
          : LabelsView(static_cast<const std::int32_t*>(labels.data()) + label_at, rows, labels.stride());
  return {mine, own_labels};
}

void require_one_process(std::string_view command) {
  if (communicator())
    throw UsageError("'" + std::string(command) + "' runs on one process; start it without mpirun (estimate "
                     "and report split their work across ranks)");
}

}  // namespace ecekde::cli
