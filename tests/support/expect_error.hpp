// Checking error messages: run an action that must throw InputError and
// check that its message names what the user needs (file, key, row, ...).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::test {

// An input error: thrown as InputError where every rank sees it, or agreed on
// collectively (solver::collectively) where one rank may see it alone.
inline bool is_input_error(const Error& e) {
  if (dynamic_cast<const InputError*>(&e)) return true;
  const auto* agreed = dynamic_cast<const solver::AgreedError*>(&e);
  return agreed && agreed->is_input_error();
}

// The input error's message (an InputError, or an AgreedError that every rank
// threw for one), or a test failure when none is thrown.
template <class Action>
std::string input_error_message(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    if (is_input_error(e)) return e.what();
    ADD_FAILURE() << "expected an input error, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

inline void expect_mentions(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (const auto part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing from: " << message;
}

}  // namespace blockeigs::test
