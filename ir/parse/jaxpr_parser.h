// The parser's internals (see parser.h for the accepted text). One JaxprParser reads one text;
// its parts live in jaxpr_parser.cc (structure), aval.cc (types), literal.cc (literals),
// param_value.cc (params) and eqn_types.cc (primitive lookup and type checks).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/parse/lexer.h"

namespace cjax::parse {

// The variables one jaxpr defines (constvars, invars, eqn outputs), by their written name.
struct Scope {
  std::unordered_map<std::string, Var> vars;
  // Eqn outputs written `_`, as (eqn index, output index). Usually dropped; but since jax 0.10.2
  // a jit's inner jaxpr takes the outer names of its results, so an inner result whose outer
  // twin is unused is *named* `_` and read as `_` (`... in (_,) }`). Such outputs become
  // ordinary Vars when read.
  std::vector<std::pair<size_t, size_t>> underscores;
  // Binders written `_`: a jit body's argument takes its caller's operand name, `_` when that
  // operand is such an output. Read as `_` when no eqn output was written `_` before.
  std::vector<Var> underscore_binders;
  Jaxpr* jaxpr = nullptr;
};

// A literal without a type suffix, as older JAX printed them; typed once its eqn is read.
struct UntypedLiteral {
  enum class Kind { boolean, integer, floating };
  Kind kind = Kind::floating;
  bool b = false;
  int64_t i = 0;
  double d = 0.0;
  size_t offset = 0;
  std::string text;
};

// A literal's written value, before its type is known.
struct LiteralValue {
  UntypedLiteral::Kind kind = UntypedLiteral::Kind::floating;
  bool b = false;
  int64_t i = 0;
  bool big_unsigned = false;  // an integer above INT64_MAX, held in u
  uint64_t u = 0;
  double d = 0.0;
};

// An eqn as read, before its primitive is resolved and its untyped literals are typed.
struct EqnDraft {
  size_t offset = 0;  // where the eqn starts (its first binder or '=')
  std::string prim_name;
  Params params;
  std::vector<Atom> inputs;                                // untyped literals hold a placeholder
  std::vector<std::pair<size_t, UntypedLiteral>> untyped;  // input index -> literal
  struct Binder {
    Token name;  // `_` for a dropped output
    ShapedArray aval;
  };
  std::vector<Binder> outs;
};

class JaxprParser {
 public:
  explicit JaxprParser(std::string_view text);
  JaxprRef parse_text();

  // Errors ------------------------------------------------------------------------------------
  [[noreturn]] void fail(size_t offset, const std::string& message) const;
  // "expected WHAT, got 'X'", or "unexpected end of input, expected WHAT".
  [[noreturn]] void fail_expected(const Token& got, std::string_view what) const;
  Token expect_punct(char c, std::string_view what);

  // Structure (jaxpr_parser.cc) ---------------------------------------------------------------
  JaxprRef parse_braced_jaxpr();
  JaxprRef resolve_shared(std::string_view name, size_t offset);
  bool is_shared_name(std::string_view name) const;

  // Types (aval.cc) ---------------------------------------------------------------------------
  ShapedArray parse_aval();
  // Fails on a quote, brace, '[' or non-printable byte in the annotation text [start, end).
  void check_annotation_text(size_t start, size_t end, std::string_view what) const;

  // Literals (literal.cc) ---------------------------------------------------------------------
  LiteralValue parse_literal_value(const Token& t) const;
  Literal typed_literal(const LiteralValue& v, const ShapedArray& aval, const Token& t) const;
  Literal untyped_literal_as(const UntypedLiteral& u, DType dtype) const;
  // The dtype an untyped literal gets when nothing in its eqn says otherwise.
  DType default_dtype(const UntypedLiteral& u) const;
  bool fits(const UntypedLiteral& u, DType dtype) const;

  // Params (param_value.cc) -------------------------------------------------------------------
  Params parse_params(std::string_view prim);
  // A single character at the current offset (or at `offset`) as a token, for messages about
  // raw text.
  Token char_token() const { return char_token_at(lex.offset()); }
  Token char_token_at(size_t offset) const;

  // Eqn types (eqn_types.cc) ------------------------------------------------------------------
  // Resolves the primitive, types the untyped literals, checks the binders against the shape
  // rule and makes the output Vars (not yet in scope).
  Eqn finish_eqn(EqnDraft& draft);

  // Depth of nested jaxprs and param tuples, bounded (kMaxNesting) so that deep input cannot
  // exhaust the stack, here or in the passes that recurse on the result.
  struct DepthGuard {
    DepthGuard(JaxprParser& p, size_t offset);
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    JaxprParser& p;
  };

  Lexer lex;

 private:
  struct Shared {
    std::string name;
    size_t offset = 0;                            // of its '{'
    size_t end = 0;                               // just past its '}', once parsed
    size_t skipped_end = std::string_view::npos;  // just past its '}' as skip_braces found it
    enum class State { unparsed, parsing, done } state = State::unparsed;
    JaxprRef jaxpr;
    int height = 0;  // the levels of nesting it spans, itself included, once parsed
  };

  void parse_preambles();
  JaxprRef parse_shared(size_t index, size_t ref_offset);
  size_t skip_braces(size_t offset) const;  // past the matching '}', or npos

  void parse_binders(Scope& scope, std::vector<Var>& out, char terminator, bool& three_groups);
  void define(Scope& scope, const Token& name, const Var& v);
  void parse_eqn(Scope& scope, Jaxpr& jaxpr);
  void parse_args(Scope& scope, EqnDraft& draft);
  bool binders_follow();
  // Whether the identifier `t` is directly followed by '[' (a primitive with params).
  bool ident_opens_params(const Token& t) const;
  std::optional<Atom> parse_atom(Scope& scope, std::optional<UntypedLiteral>* untyped);
  void parse_outvars(Scope& scope, Jaxpr& jaxpr);
  // The output written `_` that `from_end` positions before the latest one, made readable.
  Var read_underscore(Scope& scope, size_t offset, size_t from_end);

  ParamValue read_value(std::string_view prim, std::string_view key, size_t open);
  std::optional<ParamValue> structured_value(std::string_view key, bool top);
  std::optional<ParamValue> numpy_int_value(size_t start);
  bool value_ends() const;
  bool key_follows(size_t offset) const;
  std::string raw_value_text(std::string_view prim, size_t start, size_t open);
  void check_one_line(std::string_view prim, std::string_view key, size_t start,
                      std::string_view text) const;

  // The output types of the call eqns (jit, pjit, ...) whose params are being read, innermost
  // last, empty for other eqns: a call body reading `_` (see Scope::underscores) takes the
  // output written `_` whose type is that of the call's output at the same position.
  std::vector<std::vector<ShapedArray>> call_out_types_;
  std::vector<Shared> shared_;
  std::unordered_map<std::string, size_t> shared_index_;  // name -> index in shared_
  int depth_ = 0;
  int max_depth_ = 0;  // the deepest level reached (see parse_shared)
  // binders_follow's last answer, valid for scans starting in [from, to].
  struct Follows {
    size_t from = 1, to = 0;
    bool result = false;
  } follows_;
};

}  // namespace cjax::parse
