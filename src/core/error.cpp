#include "ecekde/error.hpp"

namespace ecekde {

void fail(const std::string& message) { throw Error(message); }

}  // namespace ecekde
