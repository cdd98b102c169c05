// Registration of the built-in autodiff rules (jvp and transpose), one file per primitive family
// under passes/ad_rules/. Explicit calls, not static initialisers: static libraries drop object
// files nobody references.
#pragma once

namespace cjax {

// Registers every family's rules once (thread-safe); the jvp and transpose passes call it.
void ensure_builtin_ad_rules();

void register_arithmetic_ad_rules();
void register_transcendental_ad_rules();
void register_structural_ad_rules();
void register_dot_general_ad_rules();

}  // namespace cjax
