// The tutorial's print_fwd_bwd layout: the forward and backward jaxprs side by side under
// "forward computation:" / "backward computation:" (the tutorial renders a rich Table with
// padding (1, 2, 0, 2) and no box), or stacked one above the other.
#pragma once

#include <string>

namespace cjax {

std::string fwd_bwd_columns(const std::string& fwd, const std::string& bwd);
std::string fwd_bwd_stacked(const std::string& fwd, const std::string& bwd);

}  // namespace cjax
