// libFuzzer target: the label readers, from .npy (every integer, boolean and float dtype) or from a
// one-column CSV, chosen by the input's first byte; then the library's label checks against K = 3.
#include <cstdint>
#include <string>
#include <vector>

#include "ecekde/io.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool npy = data[0] & 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  ecekde::fuzz::expect_value_or_error([&] {
    const ecekde::io::Labels labels = npy ? ecekde::io::labels_from(ecekde::io::parse_npy("fuzz.npy", bytes))
                                          : ecekde::io::labels_from(ecekde::io::parse_csv("fuzz.csv", bytes));
    const std::size_t n = labels.view().size();
    const std::vector<double> uniform(n * 3, 1.0 / 3);
    ecekde::fuzz::estimate_small(ecekde::ProbsView::row_major(uniform.data(), n, 3), labels.view());
  });
  return 0;
}
