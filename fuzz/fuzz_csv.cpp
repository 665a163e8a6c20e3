// libFuzzer target: the CSV reader and the one-file form `--data FILE --label-column NAME_OR_INDEX`.
// The input's first line is the label column as typed on the command line; the rest is the file.
#include <cstdint>
#include <string>

#include "ecekde/io.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view column = input.substr(0, newline);
  const std::string_view text = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
  ecekde::fuzz::expect_value_or_error([&] {
    const ecekde::io::CsvTable table = ecekde::io::parse_csv("fuzz.csv", text);
    ecekde::fuzz::expect_value_or_error([&] {
      const auto p = ecekde::io::predictions_from(table, column);
      ecekde::fuzz::estimate_small(p.probs.view(), p.labels.view());
    });
    ecekde::io::probabilities_from(table);  // the --probs FILE.csv form: every column a probability
  });
  return 0;
}
