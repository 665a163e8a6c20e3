// The ecekde command: everything goes through one call; any failure is one line on stderr, and an
// interruption (Ctrl-C) ends it with "ecekde: interrupted" (interrupt.hpp). Under mpirun, a failure on
// any rank ends the job (distributed.hpp). The allocator is tuned first (allocator.hpp).
#include <exception>
#include <iostream>
#include <new>

#include "allocator.hpp"
#include "app.hpp"
#include "distributed.hpp"
#include "interrupt.hpp"

namespace {

int run_command(int argc, char** argv) {
  const auto interrupted = [] {
    ecekde::cli::before_error_report(ecekde::cli::interrupted_status());
    std::cout.flush();
    std::cerr << "ecekde: interrupted" << std::endl;
    return ecekde::cli::interrupted_status();
  };
  try {
    const int status = ecekde::cli::run(argc, argv);
    return ecekde::cli::run_control().cancelled() ? interrupted() : status;
  } catch (const ecekde::Cancelled&) {
    return interrupted();
  } catch (const ecekde::cli::UsageError& e) {
    return ecekde::cli::report_error(e.what(), ecekde::cli::kUsageExit);
  } catch (const std::bad_alloc&) {
    return ecekde::cli::report_error("out of memory", ecekde::cli::kErrorExit);
  } catch (const std::exception& e) {
    return ecekde::cli::report_error(e.what(), ecekde::cli::kErrorExit);
  } catch (...) {
    return ecekde::cli::report_error("unexpected error", ecekde::cli::kErrorExit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ecekde::cli::tune_allocator(argv);
  ecekde::cli::Distributed distributed(argc, argv);
  ecekde::cli::install_interrupt_handlers();
  return distributed.finish(run_command(argc, argv));
}
