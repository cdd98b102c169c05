// Helpers shared by the shape rules, print rules and canonicalizers of ir/rules/ (internal).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace cjax::rules {

using Avals = std::span<const ShapedArray>;
using AvalList = std::vector<ShapedArray>;

// A built-in primitive with a shape rule; print rule and canonicalizer default when left empty.
Primitive make_primitive(std::string name, ShapeRule rule);
// The FLOP-count traits (Primitive::flop_count): costs nothing (moves or relabels data), or one
// operation per input element (a reduction or a scan along an axis).
Primitive moves_data(Primitive p);
Primitive reads_each_input_once(Primitive p);
// FlopCount::rule with this rule.
Primitive with_flop_rule(Primitive p, FlopRule rule);

// --- errors -------------------------------------------------------------------------------------

// Throws cjax::TypeError "<prim>: <msg>".
[[noreturn]] void fail(std::string_view prim, std::string_view msg);
// Throws cjax::TypeError "<prim>: <msg> (got <avals>)".
[[noreturn]] void fail_got(std::string_view prim, std::string_view msg, Avals in);
// "f32[3], i32[]"
std::string avals_str(Avals avals);
// "(0, 3)", Python tuple syntax (the way JAX prints an int tuple)
std::string ints_str(const std::vector<int64_t>& xs);

void expect_arity(std::string_view prim, Avals in, size_t n);
void expect_min_arity(std::string_view prim, Avals in, size_t n);

// --- dtype classes ------------------------------------------------------------------------------

enum DTypeClass : unsigned {
  kBool = 1,
  kSigned = 2,
  kUnsigned = 4,
  kFloat = 8,
  kOpaque = 16,  // extended dtypes such as key<fry>
  kInt = kSigned | kUnsigned,
  kNum = kInt | kFloat,
  kAny = kBool | kNum,
  kBoolOrInt = kBool | kInt,
};
bool in_class(DType t, unsigned cls);
// Throws "<prim>: does not accept dtype <t> (got <in>)" unless aval `i` of `in` is in `cls`.
void expect_dtype(std::string_view prim, Avals in, size_t i, unsigned cls);

bool all_weak(Avals in);
// "f32[3]" for the error messages that print one aval
inline std::string str(const ShapedArray& a) {
  return a.str_short();
}

// --- params -------------------------------------------------------------------------------------
// Each reader throws cjax::TypeError "<prim>: param '<key>' ..." when the param is missing or of
// another type.

const ParamValue& param(std::string_view prim, const Params& p, std::string_view key);
int64_t int_param(std::string_view prim, const Params& p, std::string_view key);
bool bool_param(std::string_view prim, const Params& p, std::string_view key);
std::vector<int64_t> ints_param(std::string_view prim, const Params& p, std::string_view key);
// None or missing -> nullopt.
std::optional<std::vector<int64_t>> opt_ints_param(std::string_view prim, const Params& p,
                                                   std::string_view key);
// A dtype param; accepts a DType or its long name as a string (`float32`).
DType dtype_param(std::string_view prim, const Params& p, std::string_view key);
// None or missing -> nullopt.
std::optional<DType> opt_dtype_param(std::string_view prim, const Params& p, std::string_view key);
const Jaxpr& jaxpr_param(std::string_view prim, const Params& p, std::string_view key);
// A tuple or list of jaxprs (cond's `branches`).
std::vector<const Jaxpr*> jaxprs_param(std::string_view prim, const Params& p,
                                       std::string_view key);
// Missing, or present with the value None.
bool none_or_missing(const Params& p, std::string_view key);
// The ints of a tuple/list of ints; nullopt when `v` is something else.
std::optional<std::vector<int64_t>> as_ints(const ParamValue& v);
// The text of a string or opaque param (`UnspecifiedValue`, `Mesh()`); nullopt otherwise.
std::optional<std::string_view> as_text(const ParamValue& v);

// --- shapes -------------------------------------------------------------------------------------

// Throws "<prim>: <what> <axis> out of range for rank <r> (got ...)" unless 0 <= axis < rank.
void check_axis(std::string_view prim, std::string_view what, int64_t axis, int64_t rank, Avals in);
// A nested jaxpr's input / output avals; throws "<prim>: <what> has a null variable" instead of
// crashing on a malformed jaxpr.
AvalList jaxpr_in_avals(std::string_view prim, std::string_view what, const Jaxpr& j);
AvalList jaxpr_out_avals(std::string_view prim, std::string_view what, const Jaxpr& j);
// The jaxpr's in/out avals must equal `in` (compared with same_type); throws naming `what`.
void expect_types(std::string_view prim, std::string_view what, Avals expected, Avals got);

// --- print rules and canonicalizers -------------------------------------------------------------

// All params sorted, except the listed keys when their value is None.
ParamPrintRule sorted_hiding_none(std::vector<std::string> keys);
// All params sorted, except the listed keys (always hidden).
ParamPrintRule sorted_hiding(std::vector<std::string> keys);
// Adds each (key, value) that is missing.
ParamCanonicalizer add_missing(std::vector<std::pair<std::string, ParamValue>> defaults);
// Removes the listed keys.
ParamCanonicalizer drop(std::vector<std::string> keys);
// Applies each in order.
ParamCanonicalizer chain(std::vector<ParamCanonicalizer> steps);

}  // namespace cjax::rules
