// The exceptions cjax throws. Every message names what failed and where: the op and the caller's
// source location for trace errors, line and column for parse errors, the op and pass for
// unsupported operations.
#pragma once

#include <stdexcept>
#include <string>

namespace cjax {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A shape or dtype mismatch found while tracing, verifying or applying a shape rule.
struct TypeError : Error {
  using Error::Error;
};

// Malformed jaxpr text. what() is "LINE:COL: message".
struct ParseError : Error {
  int line, column;
  ParseError(int l, int c, const std::string& msg);
  std::string message;  // without the position prefix
};

// A well-formed jaxpr that breaks an invariant (use before definition, double definition, an eqn
// whose output types disagree with its primitive's rule).
struct VerifyError : Error {
  using Error::Error;
};

// A request the caller got wrong (an unknown example, policy or file name): not a program error.
struct UsageError : Error {
  using Error::Error;
};

// An operation a pass, the interpreter or a back end does not support (e.g. an opaque primitive).
struct UnsupportedError : Error {
  using Error::Error;
};

}  // namespace cjax
