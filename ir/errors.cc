#include "ir/errors.h"

#include <fmt/format.h>

namespace cjax {

ParseError::ParseError(int l, int c, const std::string& msg)
    : Error(fmt::format("{}:{}: {}", l, c, msg)), line(l), column(c), message(msg) {}

}  // namespace cjax
