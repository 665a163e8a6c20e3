// libFuzzer target: the NPY reader (header parser, dtypes, shapes, truncation) and the probability
// views made from what it reads.
#include <cstdint>
#include <string>
#include <vector>

#include "ecekde/io.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ecekde::fuzz::expect_value_or_error([&] {
    const auto probs = ecekde::io::probabilities_from(ecekde::io::parse_npy("fuzz.npy", bytes));
    const std::vector<std::int64_t> zeros(probs.view().rows(), 0);
    ecekde::fuzz::estimate_small(probs.view(), ecekde::LabelsView(zeros.data(), zeros.size()));
  });
  return 0;
}
