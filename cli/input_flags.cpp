#include "input_flags.hpp"

#include "app.hpp"

namespace ecekde::cli {

void add_input_flags(CLI::App& command, InputFlags& flags) {
  command.add_option("--probs", flags.probs,
                     "Predicted probabilities: .npy (float32/float64, shape (n, K), or (n,) for P(y = 1)) or "
                     ".csv (one row per sample, one column per class, optional header)")
      ->type_name("FILE");
  command.add_option("--labels", flags.labels, "Labels in [0, K) (0/1 for one-column input): .npy (integer) or "
                                               ".csv (one column, optional header)")
      ->type_name("FILE");
  command.add_option("--data", flags.data,
                     "One .csv file holding the labels in --label-column and the probabilities in every "
                     "other column (instead of --probs and --labels)")
      ->type_name("FILE.csv");
  command.add_option("--label-column", flags.label_column,
                     "The label column of --data: a header name, or a 0-based column index")
      ->type_name("NAME_OR_INDEX");
}

io::Predictions load_inputs(const InputFlags& f) {
  const bool two_files = !f.probs.empty() || !f.labels.empty();
  const bool one_file = !f.data.empty() || !f.label_column.empty();
  if (two_files && one_file)
    throw UsageError("give either --probs and --labels, or --data and --label-column, not both");
  if (!two_files && !one_file) throw UsageError("no input: give --probs and --labels, or --data and --label-column");
  if (two_files) {
    if (f.labels.empty()) throw UsageError("--probs needs --labels");
    if (f.probs.empty()) throw UsageError("--labels needs --probs");
    return io::read_predictions(f.probs, f.labels);
  }
  if (f.label_column.empty()) throw UsageError("--data needs --label-column");
  if (f.data.empty()) throw UsageError("--label-column needs --data");
  return io::read_predictions_csv(f.data, f.label_column);
}

nlohmann::ordered_json inputs_json(const InputFlags& f) {
  if (!f.data.empty()) return {{"data", f.data}, {"label_column", f.label_column}};
  return {{"probs", f.probs}, {"labels", f.labels}};
}

}  // namespace ecekde::cli
