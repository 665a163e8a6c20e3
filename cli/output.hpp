// How results are shown: a readable table, or JSON with every number at full double precision.
#pragma once

#include <ostream>
#include <string>
#include <vector>


#include "ecekde/estimate.hpp"

namespace ecekde::cli {

/// The results as an aligned table: type, p, h, CE_p, CE_p^p, n, K, bandwidth rule.
void print_table(std::ostream& out, const std::vector<Result>& results);

}  // namespace ecekde::cli
