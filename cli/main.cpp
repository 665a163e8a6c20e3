// The ecekde command: everything goes through one call; any failure is one line on stderr.
#include <exception>
#include <new>

#include "app.hpp"

int main(int argc, char** argv) {
  try {
    return ecekde::cli::run(argc, argv);
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
