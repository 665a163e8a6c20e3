// The options of ecekde's entry points, each described once: name, help, kind, choices, an example value,
// and how to read and write it in its options struct. The CLI's flags, the Python keywords, the JSON
// echo of the options and docs/options.md are all produced by iterating these tables; defaults are read
// from a default-constructed options struct, so a default changes in one place.
#pragma once

#include <climits>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/names.hpp"
#include "ecekde/reliability.hpp"
#include "ecekde/synthetic.hpp"
#include "ecekde/temperature.hpp"

namespace ecekde::options {

/// An option's value as a front end carries it: none (an empty optional: "auto", the default grid), a
/// flag, a signed or non-negative integer, a real, a name or text, a list of reals.
using Value = std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string,
                           std::vector<double>, std::vector<std::int64_t>>;

/// What an option holds, deduced from its field's type (std::optional<T>: T's kind, and Option::nullable).
enum class Kind {
  flag,           ///< bool
  integer,        ///< int (Value: int64)
  count,          ///< std::size_t or std::uint64_t (Value: uint64)
  real,           ///< double
  real_list,      ///< std::vector<double>: empty means none
  index_list,     ///< std::vector<std::int64_t>: empty means none
  choice,         ///< an enumeration, by name (Value: string)
  text,           ///< std::string
};

/// Which ECE^KDE entry points read an estimate option (a bit mask).
namespace uses {
inline constexpr unsigned estimate = 1;          ///< estimate()
inline constexpr unsigned paper_entries = 2;     ///< estimate_with_gradient, kernel_regression, bootstrap_kde, calibration_test_kde
inline constexpr unsigned select_bandwidth = 4;  ///< select_bandwidth()
inline constexpr unsigned all = 7;
}  // namespace uses

template <class Options>
struct Option {
  std::string_view name;            ///< snake_case: the Python keyword and JSON field; CLI: --name, '-' for '_'
  std::string_view help;            ///< what it means, without default or syntax
  std::string_view example;         ///< a valid value other than the default, as command-line text (tests)
  std::string_view none = {};       ///< nullable options and lists: what none means, in words
  std::string_view none_word = {};  ///< nullable options: the command-line word for none ("auto")
  unsigned used_by = uses::all;     ///< estimate options: the entry points that read it
  Kind kind = Kind::flag;           ///< set by describe()
  bool nullable = false;            ///< a std::optional field: none (Value's monostate) is allowed
  std::vector<std::string_view> choices = {};  ///< Kind::choice: the names, set by describe()
  Value (*get)(const Options&) = nullptr;                          ///< set by describe()
  void (*set)(Options&, const Value&, std::string_view name) = nullptr;  ///< set by describe()

  /// The value in a default-constructed Options.
  Value default_value() const { return get(Options{}); }
  /// Writes `value` into `options`; throws Error naming the option on a value it cannot hold.
  void assign(Options& options, const Value& value) const { set(options, value, name); }
};

/// The options of estimate() and (as marked by used_by) of the other ECE^KDE entry points.
const std::vector<Option<EstimateOptions>>& estimate_options();

/// "bootstrap_kde() does not read option level: only estimate() reads it": the message with which the
/// entry point `function` refuses the estimate option `option`, which it does not read.
std::string unread_option_message(std::string_view function, std::string_view option);

/// Throws Error with unread_option_message() for the first estimate option that the entry points marked
/// `reader` (a uses:: bit) do not read and that `options` sets to a value other than its default. The
/// paper's entry points compute the paper's estimator, so `estimator` may also name it.
void refuse_unread_options(const EstimateOptions& options, unsigned reader, std::string_view function);

/// The options of bootstrap_kde() beyond the estimate options.
const std::vector<Option<BootstrapOptions>>& bootstrap_options();
/// The options of calibration_test_kde() beyond the estimate options.
const std::vector<Option<CalibrationTestOptions>>& calibration_test_options();

/// The options of binned_calibration_error(), mmce() and fit_temperature().
const std::vector<Option<BinnedOptions>>& binned_options();
const std::vector<Option<MmceOptions>>& mmce_options();
const std::vector<Option<TemperatureOptions>>& temperature_options();
/// The options of reliability_figure().
const std::vector<Option<ReliabilityOptions>>& reliability_options();
/// The options of simplex_figure().
const std::vector<Option<SimplexOptions>>& simplex_options();

/// The options of the synthetic model and of synthetic_ground_truth() (seed and threads also serve
/// generate_synthetic()).
const std::vector<Option<SyntheticModel>>& synthetic_model_options();
const std::vector<Option<GroundTruthOptions>>& ground_truth_options();

/// A value as command-line text: "auto" style none words, "true"/"false", shortest round-trip reals,
/// comma-separated lists.
std::string to_text(const Value& value, std::string_view none_word = "none");

/// Parses command-line text for an option of `kind` (choices are checked by the option's set); a
/// non-empty `none_word` (a nullable option's) reads as none. Throws Error naming `name` and the text.
Value parse_text(Kind kind, std::string_view name, std::string_view text, std::string_view none_word = {});

/// Sets option `option` of `options` from command-line text.
template <class Options>
void set_text(const Option<Options>& option, Options& options, std::string_view text) {
  option.assign(options, parse_text(option.kind, option.name, text, option.none_word));
}

/// The option named `name` in `table`, or nullptr.
template <class Options>
const Option<Options>* find(const std::vector<Option<Options>>& table, std::string_view name) {
  for (const Option<Options>& o : table)
    if (o.name == name) return &o;
  return nullptr;
}

// ---- How a table entry is bound to its field (used by the tables in src/) ------------------------------

namespace detail {

[[noreturn]] void fail_value(std::string_view name, std::string_view expected);

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <class Field>
constexpr Kind kind_of() {
  if constexpr (IsOptional<Field>::value) return kind_of<typename Field::value_type>();
  else if constexpr (std::is_same_v<Field, bool>) return Kind::flag;
  else if constexpr (std::is_same_v<Field, int>) return Kind::integer;
  else if constexpr (std::is_same_v<Field, std::size_t> || std::is_same_v<Field, std::uint64_t>) return Kind::count;
  else if constexpr (std::is_same_v<Field, double>) return Kind::real;
  else if constexpr (std::is_same_v<Field, std::vector<double>>) return Kind::real_list;
  else if constexpr (std::is_same_v<Field, std::vector<std::int64_t>>) return Kind::index_list;
  else if constexpr (std::is_same_v<Field, std::string>) return Kind::text;
  else {
    static_assert(NamedEnum<Field>, "an option field must be bool, int, size_t, double, vector<double>, "
                                    "vector<int64_t>, string, a named enumeration, or an optional of one");
    return Kind::choice;
  }
}

template <class Field>
Value to_value(const Field& field) {
  if constexpr (std::is_same_v<Field, int>) return static_cast<std::int64_t>(field);
  else if constexpr (std::is_same_v<Field, std::size_t> || std::is_same_v<Field, std::uint64_t>)
    return static_cast<std::uint64_t>(field);
  else if constexpr (IsOptional<Field>::value) return field ? to_value(*field) : Value();
  else if constexpr (std::is_same_v<Field, std::vector<double>> || std::is_same_v<Field, std::vector<std::int64_t>>)
    return field.empty() ? Value() : Value(field);
  else if constexpr (NamedEnum<Field>) return std::string(to_string(field));
  else return field;
}

/// A real from a real or an integer value (Python's 1 for 1.0).
std::optional<double> as_real(const Value& value);

template <class Field>
void from_value(std::string_view name, const Value& value, Field& field) {
  if constexpr (IsOptional<Field>::value) {
    if (std::holds_alternative<std::monostate>(value)) {
      field.reset();
    } else {
      typename Field::value_type inner{};
      from_value(name, value, inner);
      field = inner;
    }
  } else if constexpr (std::is_same_v<Field, bool>) {
    if (const bool* b = std::get_if<bool>(&value)) field = *b;
    else fail_value(name, "true or false");
  } else if constexpr (std::is_same_v<Field, int>) {
    const auto* i = std::get_if<std::int64_t>(&value);
    const auto* u = std::get_if<std::uint64_t>(&value);
    if (i && *i >= INT32_MIN && *i <= INT32_MAX) field = static_cast<int>(*i);
    else if (u && *u <= INT32_MAX) field = static_cast<int>(*u);
    else fail_value(name, "an integer");
  } else if constexpr (kind_of<Field>() == Kind::count) {
    const auto* i = std::get_if<std::int64_t>(&value);
    const auto* u = std::get_if<std::uint64_t>(&value);
    if (u && *u <= std::numeric_limits<Field>::max()) field = static_cast<Field>(*u);
    else if (i && *i >= 0) field = static_cast<Field>(*i);
    else fail_value(name, "an integer >= 0");
  } else if constexpr (std::is_same_v<Field, double>) {
    if (const auto x = as_real(value)) field = *x;
    else fail_value(name, "a number");

  } else if constexpr (std::is_same_v<Field, std::vector<double>>) {
    if (std::holds_alternative<std::monostate>(value)) field.clear();
    else if (const auto* list = std::get_if<std::vector<double>>(&value)) field = *list;
    else fail_value(name, "a list of numbers");
  } else if constexpr (std::is_same_v<Field, std::vector<std::int64_t>>) {
    if (std::holds_alternative<std::monostate>(value)) field.clear();
    else if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) field = *list;
    else fail_value(name, "a list of integers");
  } else if constexpr (std::is_same_v<Field, std::string>) {
    if (const auto* s = std::get_if<std::string>(&value)) field = *s;
    else fail_value(name, "a string");
  } else {
    if (const auto* s = std::get_if<std::string>(&value)) field = parse_name<Field>(*s);
    else fail_value(name, "a name");
  }
}

template <class M>
struct MemberOf;
template <class C, class T>
struct MemberOf<T C::*> {
  using Class = C;
  using Type = T;
};

// The field reached from an Options object through the member pointers `path` (nested structs).
template <auto... path, class Object>
auto& field_of(Object& object) {
  return (object .* ... .* path);
}

template <auto first, auto... rest>
struct Binding {
  using Options = typename MemberOf<decltype(first)>::Class;
  using Field = std::remove_cvref_t<decltype(field_of<first, rest...>(std::declval<Options&>()))>;
  static Value get(const Options& o) { return to_value(field_of<first, rest...>(o)); }
  static void set(Options& o, const Value& v, std::string_view name) {
    from_value(name, v, field_of<first, rest...>(o));
  }
};

}  // namespace detail

/// A table entry for the field at `path` (member pointers from the options struct down): kind,
/// choices, get and set come from the field's type.
template <auto... path>
auto describe(Option<typename detail::Binding<path...>::Options> option) {
  using B = detail::Binding<path...>;
  using Field = typename B::Field;
  option.kind = detail::kind_of<Field>();
  option.nullable = detail::IsOptional<Field>::value;
  if constexpr (detail::IsOptional<Field>::value) {
    if constexpr (NamedEnum<typename Field::value_type>) option.choices = enum_names<typename Field::value_type>();
  } else if constexpr (NamedEnum<Field>) {
    option.choices = enum_names<Field>();
  }
  option.get = &B::get;
  option.set = &B::set;
  return option;
}

}  // namespace ecekde::options
