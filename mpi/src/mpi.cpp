#include "ecekde/mpi.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ecekde/error.hpp"

namespace ecekde::mpi {

namespace {

constexpr std::size_t kPiece = std::size_t{1} << 30;  // MPI counts are ints

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

Session::Session(int& argc, char**& argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return;
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  owned_ = true;
  // Errors come back as codes (turned into exceptions), not as MPI's own abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Session::~Session() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (owned_ && !finalised) MPI_Finalize();
}

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

void abort_all(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; should it, the process still ends
}

Ranks::Ranks(MPI_Comm comm) : comm_(comm) {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

void Ranks::all_sum(std::span<double> values) {
  for (std::size_t at = 0; at < values.size(); at += kPiece) {
    const int count = static_cast<int>(std::min(kPiece, values.size() - at));
    check(MPI_Allreduce(MPI_IN_PLACE, values.data() + at, count, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  }
  bytes_ += static_cast<double>(values.size() * sizeof(double));
}

void Ranks::start_pass(std::span<const double> send, std::span<double> receive) {
  if (send.size() != receive.size()) throw Error("Ranks::start_pass: send and receive differ in size");
  if (!pending_.empty()) throw Error("Ranks::start_pass: the previous pass was not finished");
  const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
  for (std::size_t at = 0, piece = 0; at < send.size(); at += kPiece, ++piece) {
    const int count = static_cast<int>(std::min(kPiece, send.size() - at)), tag = static_cast<int>(piece % 32768);
    pending_.emplace_back();
    check(MPI_Irecv(receive.data() + at, count, MPI_DOUBLE, previous, tag, comm_, &pending_.back()), "MPI_Irecv");
    pending_.emplace_back();
    check(MPI_Isend(send.data() + at, count, MPI_DOUBLE, next, tag, comm_, &pending_.back()), "MPI_Isend");
  }
  bytes_passed_ += static_cast<double>(send.size() * sizeof(double));
}

void Ranks::finish_pass() {
  std::vector<MPI_Request> requests;
  requests.swap(pending_);
  const double start = MPI_Wtime();
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  seconds_waiting_ += MPI_Wtime() - start;
}

}  // namespace ecekde::mpi
