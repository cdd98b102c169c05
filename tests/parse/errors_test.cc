// Exact messages and positions of parse errors.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "parse_test_util.h"

using cjax::parse_test::parse_error;

TEST_CASE("parse errors: truncated text", "[parse][errors]") {
  CHECK(parse_error("") == "1:1: unexpected end of input, expected '{' to start a jaxpr");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,)") ==
        "1:50: unexpected end of input, expected '}'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin a") ==
        "1:42: unexpected end of input, expected an equation or 'in'");
  CHECK(parse_error("{ lambda ; a:f32[3") ==
        "1:19: malformed shape: expected ',' or ']' after a dimension, got end of input");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin[accuracy=None a in (b,) }") ==
        "1:66: unexpected end of input, expected ']' to close the params of 'sin' opened at "
        "1:40");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = jit[name=f jaxpr={ lambda ; c:f32[3]. "
                    "let  in (c,)") == "1:87: unexpected end of input, expected '}'");
  CHECK(parse_error("let f = { lambda ; a:f32[]. let  in (a,) }") ==
        "1:43: unexpected end of input, expected 'in' after the shared jaxpr 'f'");
}

TEST_CASE("parse errors: dtypes and shapes", "[parse][errors]") {
  CHECK(parse_error("{ lambda ; a:f33[3]. let  in (a,) }") == "1:14: unknown dtype 'f33'");
  CHECK(parse_error("{ lambda ; a:key[3]. let  in (a,) }") == "1:14: unknown dtype 'key'");
  CHECK(parse_error("{ lambda ; a:f32[3,x]. let  in (a,) }") ==
        "1:20: malformed shape: expected a dimension size, got 'x'");
  CHECK(parse_error("{ lambda ; a:f32[3 4]. let  in (a,) }") ==
        "1:19: malformed shape: expected ',' or ']' after a dimension, got ' '");
  CHECK(parse_error("{ lambda ; a:f32[-1]. let  in (a,) }") ==
        "1:18: malformed shape: expected a dimension size, got '-'");
  CHECK(parse_error("{ lambda ; a:f32 [3]. let  in (a,) }") ==
        "1:17: expected '[' after the dtype 'f32', got ' '");
  CHECK(parse_error("{ lambda ; a:f32[99999999999999999999]. let  in (a,) }") ==
        "1:18: dimension size 99999999999999999999 is too large");
}

// A type's annotations are read as raw text; a quote or a brace there would make the scan that
// skips a `let` preamble's body disagree with the parse, and a printout fail to parse back (found
// by fuzz_jaxpr_parser: `;x}8` in a body JAX's pjit printed inline, which cjax prints as a `let`).
TEST_CASE("parse errors: type annotations hold no quotes or braces", "[parse][errors]") {
  CHECK(parse_error("{ lambda ; a:f32[3;x}8]. let  in (a,) }") ==
        "1:21: unexpected '}' in the named axes of a type");
  CHECK(parse_error("{ lambda ; a:f32[3@x'y]. let  in (a,) }") ==
        "1:21: unexpected ''' in a sharding annotation");
  CHECK(parse_error("{ lambda ; a:f32<ho\"st>[3]. let  in (a,) }") ==
        "1:20: unexpected '\"' in a type's '<...>'");
  CHECK(parse_error("{ lambda ; a:f32[3]{V:'x}. let  in (a,) }") ==
        "1:23: unexpected ''' in a type's axes annotation");
  CHECK(parse_error("let f = { lambda ; a:f32[3;x}8]. let  in (a,) } in\n"
                    "{ lambda ; b:f32[3]. let c:f32[3] = jit[name=f jaxpr=f] b in (c,) }") ==
        "1:30: expected 'in' after the shared jaxpr 'f', got '8'");
}

TEST_CASE("parse errors: shapes beyond the limits of ir/limits.h", "[parse][errors]") {
  // Sizes whose element count or byte size overflows int64 are refused; huge but representable
  // ones are valid types.
  CHECK(parse_error("{ lambda ; a:f32[10000000000,10000000000,10000000000]. let  in (a,) }") ==
        "1:14: f32[10000000000,10000000000,10000000000] has too many elements: the product of "
        "its dimensions overflows int64");
  CHECK(parse_error("{ lambda ; a:f32[0,10000000000,10000000000]. let  in (a,) }") ==
        "1:14: f32[0,10000000000,10000000000] has too many elements: the product of its "
        "dimensions overflows int64");
  CHECK(parse_error("{ lambda ; a:f64[2305843009213693952]. let  in (a,) }") ==
        "1:14: f64[2305843009213693952] is too large: its size in bytes overflows int64");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[3] = add a [...]:f32[9223372036854775807,2] "
                    "in (b,) }") ==
        "1:48: f32[9223372036854775807,2] has too many elements: the product of its dimensions "
        "overflows int64");
  CHECK(parse_error("{ lambda ; a:f32[100000,100000,100000]. let  in (a,) }") == "no error");
  CHECK(parse_error("{ lambda ; a:u8[9223372036854775807]. let  in (a,) }") == "no error");
  // At most kMaxRank (64) dimensions.
  auto ones = [](int rank) {
    std::string s = "1";
    for (int i = 1; i < rank; ++i) s += ",1";
    return s;
  };
  CHECK(parse_error("{ lambda ; a:f32[" + ones(64) + "]. let b:f32[" + ones(64) +
                    "] = sin a in (b,) }") == "no error");
  CHECK(parse_error("{ lambda ; a:f32[" + ones(65) + "]. let  in (a,) }") ==
        "1:14: rank 65 exceeds the limit of 64 dimensions");
  CHECK(parse_error("{ lambda ; a:f32[" + ones(5000) + "]. let  in (a,) }") ==
        "1:14: rank 5000 exceeds the limit of 64 dimensions");
  // A shape rule's result is held to the same limits: the binder's rank is fine, the rule's is
  // not.
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[1] = broadcast_in_dim[broadcast_dimensions=() "
                    "shape=(" +
                    ones(65) + ",)] a in (b,) }") ==
        "1:25: broadcast_in_dim: rank 65 exceeds the limit of 64 dimensions");
}

TEST_CASE("parse errors: types against a known primitive's rule", "[parse][errors]") {
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }") ==
        "1:26: sin: output type f32[4] does not match the rule's f32[3]");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:i32[3] = sin a in (b,) }") ==
        "1:26: sin: output type i32[3] does not match the rule's f32[3]");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] c:f32[3] = sin a in (b,) }") ==
        "1:26: sin: 2 outputs written, but the rule gives 1");
  // The rule's own message, at the eqn.
  std::string arity = parse_error("{ lambda ; a:f32[3]. let b:f32[3] = add a in (b,) }");
  CHECK(arity.rfind("1:26: add: ", 0) == 0);
  CHECK(parse_error("{ lambda ; a:f32[3]. let\n    b:f32[] = reduce_sum[axes=(1,)] a\n  in (b,) }")
            .rfind("2:5: reduce_sum: ", 0) == 0);
  // Opaque primitives are typed by their binders only.
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[7] = my_custom_op[k=1] a in (b,) }") ==
        "no error");
}

TEST_CASE("parse errors: scopes", "[parse][errors]") {
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin x in (b,) }") ==
        "1:41: undefined variable 'x'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin b in (b,) }") ==
        "1:41: undefined variable 'b'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let a:f32[3] = sin a in (a,) }") ==
        "1:26: variable 'a' defined twice");
  CHECK(parse_error("{ lambda ; a:f32[3] a:f32[3]. let  in (a,) }") ==
        "1:21: variable 'a' defined twice");
  CHECK(parse_error("{ lambda ; a:f32[]. let c:f32[] = cos _ in (c,) }") ==
        "1:39: cannot read '_': no equation output or binder before it is named '_'");
  CHECK(parse_error("{ lambda ; _:f32[]. let  in (a,) }") == "1:30: undefined variable 'a'");
  // A jaxpr in a param is closed: it cannot read the enclosing jaxpr's variables.
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = jit[name=g jaxpr={ lambda ; c:f32[]. let "
                    "d:f32[] = add c a in (d,) }] a in (b,) }") == "1:92: undefined variable 'a'");
  CHECK(parse_error("let f = { lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=f] a in (b,) } in\n"
                    "{ lambda ; a:f32[]. let  in (a,) }") ==
        "1:60: shared jaxpr 'f' refers to itself");
  CHECK(parse_error("let f = { lambda ; a:f32[]. let  in (a,) } in\nlet f = { lambda ; a:f32[]. "
                    "let  in (a,) } in\n{ lambda ; a:f32[]. let  in (a,) }") ==
        "2:5: shared jaxpr 'f' defined twice");
}

TEST_CASE("parse errors: unbalanced brackets and stray tokens", "[parse][errors]") {
  CHECK(parse_error("{ lambda ; a:f32[3]. let  in (a, }") ==
        "1:34: expected a variable or a literal, got '}'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let  in (a,)) }") == "1:34: expected '}', got ')'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let  in (a b) }") ==
        "1:33: expected ',' or ')' in the output list, got 'b'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[] = reduce_sum[axes=(0,) out_sharding=None c "
                    "in (b,) }") ==
        "1:86: unexpected end of input, expected ']' to close the params of 'reduce_sum' "
        "opened at 1:46");
  CHECK(parse_error("{ lambda ; a:f32[]. let  in (a,) } }") ==
        "1:36: unexpected '}' after the jaxpr");
  CHECK(parse_error("{ lambda ; a:f32[]. let  in (a,) } x") ==
        "1:36: unexpected 'x' after the jaxpr");
  CHECK(parse_error("{ lambda ; a[3]. let  in (a,) }") ==
        "1:13: expected ':' after variable name 'a', got '['");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin a; in (b,) }") ==
        "1:44: expected an equation after ';', got 'in'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = ) a in (b,) }") ==
        "1:37: expected a primitive name after '=', got ')'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = custom[x=1 x=2] a in (b,) }") ==
        "1:48: param 'x' given twice");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = custom[x=] a in (b,) }") ==
        "1:46: expected a value after 'x=', got ']'");
  CHECK(parse_error("{ lambda ; a:f32[3]. go  in (a,) }") ==
        "1:22: expected 'let' after the binders, got 'go'");
  CHECK(parse_error(std::string("{ lambda ; a:f32[]\0. let  in (a,) }", 35)) ==
        "1:19: unexpected NUL byte");
}

TEST_CASE("parse errors: literals", "[parse][errors]") {
  CHECK(parse_error("{ lambda ; a:i32[]. let b:i32[] = add a 1.5:i32[] in (b,) }") ==
        "1:41: float literal 1.5 cannot have type i32[]");
  CHECK(parse_error("{ lambda ; a:u8[]. let b:u8[] = add a 300:u8[] in (b,) }") ==
        "1:39: integer literal 300 is out of range for u8[]");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = add a True:f32[] in (b,) }") ==
        "1:41: literal True cannot have type f32[]");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = sin 1.0:f32[3] in (b,) }") ==
        "1:39: literal 1.0 must be a scalar, got type f32[3] (array constants print as [...])");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = add a 1e999 in (b,) }") ==
        "1:41: float literal 1e999 is out of range");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = add a 1e300:f32[] in (b,) }") ==
        "1:41: float literal 1e300 is out of range for f32[]");
  CHECK(parse_error("{ lambda ; a:i64[]. let b:i64[] = add a 99999999999999999999 in (b,) }") ==
        "1:41: integer literal 99999999999999999999 is out of range");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = add a [..]:f32[3] in (b,) }") ==
        "1:42: expected '...' in an elided constant '[...]', got '.'");
}

TEST_CASE("parse errors: the untyped 2020 format is rejected", "[parse][errors]") {
  CHECK(parse_error("{ lambda  ; a.\n  let b = exp a\n  in (b,) }") ==
        "1:13: untyped binder 'a': untyped binders (pre-2021 jaxpr format) are not supported");
  CHECK(parse_error("{ lambda  ;  ; a.\n  let b = log a\n  in (b,) }") ==
        "1:16: untyped binder 'a': untyped binders (pre-2021 jaxpr format) are not supported");
  CHECK(parse_error("{ lambda ; a:f32[] b. let  in (a,) }") ==
        "1:20: untyped binder 'b': untyped binders (pre-2021 jaxpr format) are not supported");
  CHECK(parse_error("{ lambda ; ; a:f32[]. let  in (a,) }") ==
        "1:12: three binder groups (pre-2021 jaxpr format, with untyped binders) are not "
        "supported");
}

TEST_CASE("parse errors: nesting depth is bounded", "[parse][errors]") {
  // Param tuples count as levels too: the top jaxpr is level 1, so 99 tuples fit and the 100th
  // is refused (it would have been level 101).
  std::string prefix = "{ lambda ; a:f32[]. let b:f32[] = custom[x=";
  auto tuples = [&](int n) {
    return prefix + std::string(n, '(') + std::string(n, ')') + "] a in (b,) }";
  };
  CHECK(parse_error(tuples(99)) == "no error");
  CHECK(parse_error(tuples(100)) ==
        fmt::format("1:{}: nesting deeper than 100 levels is not supported", prefix.size() + 100));
  CHECK(parse_error(tuples(5000)) ==
        fmt::format("1:{}: nesting deeper than 100 levels is not supported", prefix.size() + 100));
  CHECK(parse_error(prefix + std::string(5000, '[') + "{ lambda") ==
        fmt::format("1:{}: nesting deeper than 100 levels is not supported", prefix.size() + 100));
  // Text the parser keeps verbatim is not read as nested values: it may nest.
  CHECK(parse_error(prefix + "P" + std::string(5000, '(') + std::string(5000, ')') +
                    "] a in (b,) }") == "no error");
  // Jaxprs nest up to 100 levels.
  std::string jit = "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=";
  std::string nested;
  for (int i = 0; i < 200; ++i) nested += jit;
  CHECK(parse_error(nested) ==
        fmt::format("1:{}: nesting deeper than 100 levels is not supported", 100 * jit.size() + 1));
}

namespace {

// `let f_k = { ... jit[jaxpr=f_(k-1)] ... } in` for k < n, then a jaxpr calling f_(n-1): n + 1
// levels of nesting, though the parser never recurses more than two levels to read it.
std::string shared_chain(int n) {
  std::string text = "let f0 = { lambda ; a:f32[]. let  in (a,) } in\n";
  for (int k = 1; k < n; ++k)
    text += fmt::format(
        "let f{} = {{ lambda ; a:f32[]. let b:f32[] = jit[name=f{} jaxpr=f{}] a in (b,) }} in\n", k,
        k - 1, k - 1);
  return text +
         fmt::format("{{ lambda ; a:f32[]. let b:f32[] = jit[name=f{} jaxpr=f{}] a in (b,) }}",
                     n - 1, n - 1);
}

// "LINE:COL: " of the first `what` at or after `from` in `text`.
std::string position(const std::string& text, const std::string& what, size_t from = 0) {
  size_t at = text.find(what, from);
  REQUIRE(at != std::string::npos);
  auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  size_t line_start = text.rfind('\n', at);
  size_t col = line_start == std::string::npos ? at + 1 : at - line_start;
  return fmt::format("{}:{}: ", line, col);
}

}  // namespace

TEST_CASE("parse errors: shared jaxprs count their whole height where they are used",
          "[parse][errors]") {
  const std::string message = "nesting deeper than 100 levels is not supported";
  CHECK(parse_error(shared_chain(99)) == "no error");  // 100 levels
  // The top jaxpr's call of f99 (100 levels high) would reach level 101.
  std::string deep = shared_chain(100);
  CHECK(parse_error(deep) == position(deep, "f99]", deep.rfind("{ lambda")) + message);
  // In a longer chain, f100's call of f99 is the first to go past the limit.
  std::string deeper = shared_chain(10000);
  CHECK(parse_error(deeper) == position(deeper, "f99]", deeper.find("let f100 =")) + message);
}
