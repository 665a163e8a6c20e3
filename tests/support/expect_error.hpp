// EXPECT_THROW_MSG(statement, message): the statement throws ecekde::Error with exactly this message
// (the habit of fmt's gtest-extra.h).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ecekde/error.hpp"

namespace testing_support {

template <class F>
std::string error_message(F&& statement) {
  try {
    statement();
  } catch (const ecekde::Error& e) {
    return e.what();
  }
  return "<no ecekde::Error thrown>";
}

}  // namespace testing_support

#define EXPECT_THROW_MSG(statement, message) \
  EXPECT_EQ(::testing_support::error_message([&] { (void)(statement); }), std::string(message))
