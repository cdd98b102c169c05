// The structure of jaxpr text: `let` preambles, `{ lambda ... ; ... . let EQNS in (OUTS) }`,
// binders, eqns and their operands.
#include "ir/parse/jaxpr_parser.h"

#include <fmt/format.h>

#include "ir/errors.h"
#include "ir/limits.h"
#include "ir/parse/parser.h"

namespace cjax {
namespace parse {
namespace {

// Words that are literals, untyped unless a variable has that name, typed (`nan:f32[]`) always.
bool is_literal_word(std::string_view s) {
  return s == "True" || s == "False" || s == "nan" || s == "inf";
}

}  // namespace

JaxprParser::JaxprParser(std::string_view text) : lex(text) {}

// Jaxprs and param tuples nest at most kMaxNesting levels (ir/limits.h): the recursion here and
// in every later pass must not exhaust the stack on hostile input (also under AddressSanitizer).
JaxprParser::DepthGuard::DepthGuard(JaxprParser& parser, size_t offset) : p(parser) {
  if (p.depth_ >= kMaxNesting) p.fail(offset, nesting_limit_message());
  ++p.depth_;
  p.max_depth_ = std::max(p.max_depth_, p.depth_);
}

void JaxprParser::fail(size_t offset, const std::string& message) const {
  Position pos = position_of(lex.source(), offset);
  throw ParseError(pos.line, pos.column, message);
}

void JaxprParser::fail_expected(const Token& got, std::string_view what) const {
  if (got.is_end()) fail(got.offset, fmt::format("unexpected end of input, expected {}", what));
  fail(got.offset, fmt::format("expected {}, got {}", what, describe(got)));
}

Token JaxprParser::expect_punct(char c, std::string_view what) {
  Token t = lex.next();
  if (!t.is(c)) fail_expected(t, what);
  return t;
}

Token JaxprParser::char_token_at(size_t offset) const {
  Token t;
  t.offset = offset;
  if (offset >= lex.source().size()) return t;
  t.kind = TokKind::punct;
  t.text = lex.source().substr(offset, 1);
  return t;
}

JaxprRef JaxprParser::parse_text() {
  std::string_view src = lex.source();
  size_t nul = src.find('\0');
  if (nul != std::string_view::npos) fail(nul, "unexpected NUL byte");
  parse_preambles();
  size_t top = lex.offset();
  for (size_t i = 0; i < shared_.size(); ++i) parse_shared(i, shared_[i].offset);
  lex.seek(top);
  Token t = lex.peek();
  if (!t.is('{')) fail_expected(t, shared_.empty() ? "'{' to start a jaxpr" : "'{' or 'let'");
  JaxprRef jaxpr = parse_braced_jaxpr();
  Token rest = lex.peek();
  if (!rest.is_end())
    fail(rest.offset, fmt::format("unexpected {} after the jaxpr", describe(rest)));
  if (expanded_eqn_count(*jaxpr) > kMaxExpandedEqns) fail(t.offset, expansion_limit_message());
  return jaxpr;
}

// Shared jaxprs ---------------------------------------------------------------------------------

// Records every `let NAME = { ... } in` first (skipping the bodies), so that preambles can refer
// to ones defined after them (JAX prints `let outer_fn = {... jaxpr=inner_fn ...} in let inner_fn
// = ...`); the bodies are parsed on first reference, or in order afterwards.
void JaxprParser::parse_preambles() {
  std::string_view src = lex.source();
  while (lex.peek().is_ident("let")) {
    lex.next();
    // The name is the jaxpr's `name` param without `<>`, so it may hold any character but a
    // newline (`let lambda = `, `let unnamed function = `, `let transpose(f) = `); it ends at the
    // first '=' that a '{' follows.
    lex.skip_space();
    size_t start = lex.offset();
    size_t eq = start;
    auto opens_body = [&](size_t i) {
      size_t j = i + 1;
      while (j < src.size() && is_space(src[j]) && src[j] != '\n') ++j;
      return j < src.size() && src[j] == '{';
    };
    while (eq < src.size() && src[eq] != '\n' && !(src[eq] == '=' && opens_body(eq))) ++eq;
    size_t end = eq;
    while (end > start && is_space(src[end - 1])) --end;
    if (end == start) fail_expected(lex.peek(), "a name after 'let'");
    std::string_view name = src.substr(start, end - start);
    if (eq >= src.size() || src[eq] != '=') {
      lex.seek(eq);
      fail_expected(char_token(), fmt::format("'=' after 'let {}'", name));
    }
    if (is_shared_name(name)) fail(start, fmt::format("shared jaxpr '{}' defined twice", name));
    lex.seek(eq + 1);
    Token open = lex.peek();
    if (!open.is('{'))
      fail_expected(open, fmt::format("'{{' to start the shared jaxpr '{}'", name));
    Shared s;
    s.name = std::string(name);
    s.offset = open.offset;
    shared_index_.emplace(s.name, shared_.size());
    shared_.push_back(std::move(s));
    size_t close = skip_braces(open.offset);
    if (close == std::string_view::npos) {
      // Unbalanced: parsing it now reports the precise error.
      parse_shared(shared_.size() - 1, open.offset);
      close = shared_.back().end;
    }
    shared_.back().skipped_end = close;
    lex.seek(close);
    Token in = lex.next();
    if (!in.is_ident("in"))
      fail_expected(in, fmt::format("'in' after the shared jaxpr '{}'", name));
  }
}

size_t JaxprParser::skip_braces(size_t offset) const {
  std::string_view src = lex.source();
  int depth = 0;
  size_t i = offset;
  while (i < src.size()) {
    char c = src[i];
    if (c == '\'' || c == '"') {
      size_t j = lex.skip_quoted(i);
      i = j == i ? i + 1 : j;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return i + 1;
    ++i;
  }
  return std::string_view::npos;
}

bool JaxprParser::is_shared_name(std::string_view name) const {
  return !shared_.empty() && shared_index_.count(std::string(name)) != 0;
}

JaxprRef JaxprParser::resolve_shared(std::string_view name, size_t offset) {
  auto it = shared_index_.find(std::string(name));
  if (it == shared_index_.end()) fail(offset, fmt::format("unknown shared jaxpr '{}'", name));
  return parse_shared(it->second, offset);
}

// A shared jaxpr is parsed once, at the depth of its first reference, and its height (the levels
// it spans) recorded: a later reference puts that height below its own depth. Without it, a chain
// of preambles each calling the one before would nest without bound while no recursion here
// goes deeper than two levels.
JaxprRef JaxprParser::parse_shared(size_t index, size_t ref_offset) {
  Shared& s = shared_[index];
  if (s.state == Shared::State::done) {
    if (depth_ + s.height > kMaxNesting) fail(ref_offset, nesting_limit_message());
    max_depth_ = std::max(max_depth_, depth_ + s.height);
    return s.jaxpr;
  }
  if (s.state == Shared::State::parsing)
    fail(ref_offset, fmt::format("shared jaxpr '{}' refers to itself", s.name));
  s.state = Shared::State::parsing;
  size_t saved = lex.offset();
  int outer_max = max_depth_;
  max_depth_ = depth_;
  lex.seek(s.offset);
  JaxprRef jaxpr = parse_braced_jaxpr();
  // The preamble scan and the parse must agree on where the body ends; every raw text the parser
  // reads keeps quotes and braces balanced (raw_value_text, check_annotation_text) so that they do.
  if (s.skipped_end != std::string_view::npos && lex.offset() != s.skipped_end)
    fail(s.offset, fmt::format("the body of the shared jaxpr '{}' does not end where its braces "
                               "close",
                               s.name));
  // shared_ does not grow while parsing (preambles are all recorded first): `s` is still valid.
  s.height = max_depth_ - depth_;
  max_depth_ = std::max(outer_max, max_depth_);
  s.state = Shared::State::done;
  s.jaxpr = jaxpr;
  s.end = lex.offset();
  lex.seek(saved);
  return jaxpr;
}

// Jaxprs ----------------------------------------------------------------------------------------

JaxprRef JaxprParser::parse_braced_jaxpr() {
  Token open = expect_punct('{', "'{'");
  DepthGuard guard(*this, open.offset);
  Token lambda = lex.next();
  if (!lambda.is_ident("lambda")) fail_expected(lambda, "'lambda' after '{'");
  auto jaxpr = std::make_shared<Jaxpr>();
  Scope scope;
  scope.jaxpr = jaxpr.get();
  bool three_groups = false;
  parse_binders(scope, jaxpr->constvars, ';', three_groups);
  parse_binders(scope, jaxpr->invars, '.', three_groups);
  Token let = lex.next();
  if (!let.is_ident("let")) fail_expected(let, "'let' after the binders");
  while (true) {
    Token t = lex.peek();
    if (t.is_ident("in") && lex.peek2().is('(')) break;
    if (!t.is_ident() && !t.is('=')) fail_expected(t, "an equation or 'in'");
    parse_eqn(scope, *jaxpr);
    if (lex.peek().is(';')) {
      lex.next();
      Token n = lex.peek();
      if ((!n.is_ident() && !n.is('=')) || (n.is_ident("in") && lex.peek2().is('(')))
        fail_expected(n, "an equation after ';'");
    }
  }
  lex.next();  // in
  parse_outvars(scope, *jaxpr);
  expect_punct('}', "'}'");
  return jaxpr;
}

void JaxprParser::parse_binders(Scope& scope, std::vector<Var>& out, char terminator,
                                bool& three_groups) {
  size_t third_group_at = 0;
  while (true) {
    Token t = lex.peek();
    if (t.is(terminator)) {
      lex.next();
      break;
    }
    if (terminator == '.' && t.is(';') && !three_groups) {
      // `{ lambda  ;  ; a.`: consts; freevars; args, as jax printed them until 2020.
      lex.next();
      three_groups = true;
      third_group_at = t.offset;
      continue;
    }
    if (!t.is_ident()) fail_expected(t, fmt::format("a binder (name:type) or '{}'", terminator));
    Token after = lex.peek2();
    if (!after.is(':')) {
      if (after.is('.') || after.is(';') || after.is_ident())
        fail(t.offset, fmt::format("untyped binder '{}': untyped binders (pre-2021 jaxpr format) "
                                   "are not supported",
                                   t.text));
      fail_expected(after, fmt::format("':' after variable name '{}'", t.text));
    }
    lex.next();
    lex.next();
    Var v(parse_aval());
    if (t.text == "_") {
      // A jit body's argument named after its caller's operand, itself named `_` (an output
      // nothing outside the body reads): the body reads it as `_` (Scope::underscore_binders).
      v.set_hint("_");
      scope.underscore_binders.push_back(v);
    } else {
      define(scope, t, v);
    }
    out.push_back(v);
  }
  if (three_groups && terminator == '.')
    fail(third_group_at,
         "three binder groups (pre-2021 jaxpr format, with untyped binders) are not supported");
}

void JaxprParser::define(Scope& scope, const Token& name, const Var& v) {
  auto [it, inserted] = scope.vars.emplace(std::string(name.text), v);
  if (!inserted) fail(name.offset, fmt::format("variable '{}' defined twice", name.text));
  // The name as written. Older JAX printed some unused binders with a trailing underscore (`g_`):
  // the current format prints them as `g` (names are handed out afresh), the jax 0.4.30 format
  // keeps the suffix (printer.h, TextFormat).
  v.set_hint(std::string(name.text));
}

// Eqns ------------------------------------------------------------------------------------------

void JaxprParser::parse_eqn(Scope& scope, Jaxpr& jaxpr) {
  EqnDraft d;
  d.offset = lex.peek().offset;
  // An eqn without outputs prints as just its right-hand side (`debug_callback[...] a`), as JAX
  // prints one: no binders and no '='. Such an eqn must have params (`prim[`), so that it cannot
  // be mistaken for an operand of the eqn before it.
  bool no_outputs = lex.peek().is_ident() && ident_opens_params(lex.peek());
  while (!no_outputs && !lex.peek().is('=')) {
    Token name = lex.next();
    if (!name.is_ident()) fail_expected(name, "a binder (name:type) or '='");
    Token colon = lex.next();
    if (!colon.is(':'))
      fail_expected(colon, fmt::format("':' after variable name '{}'", name.text));
    d.outs.push_back({name, parse_aval()});
  }
  if (!no_outputs) lex.next();  // '='
  Token prim = lex.next();
  if (!prim.is_ident()) fail_expected(prim, "a primitive name after '='");
  d.prim_name = std::string(prim.text);
  // JAX names the scatters with a hyphen (`scatter-add`): one name, the '-' between two words.
  while (lex.peek_char() == '-' && is_ident_start(lex.peek_char(1))) {
    lex.advance();
    Token word = lex.next();
    d.prim_name.push_back('-');
    d.prim_name.append(word.text);
  }
  if (lex.peek_char() == '[') {
    std::vector<ShapedArray> call_outs;
    for (const char* c : {"jit", "pjit", "closed_call", "core_call"})
      if (prim.text == c)
        for (const auto& o : d.outs) call_outs.push_back(o.aval);
    call_out_types_.push_back(std::move(call_outs));
    d.params = parse_params(d.prim_name);
    call_out_types_.pop_back();
  }
  // It would print as a bare name, indistinguishable from an operand of the eqn before it.
  if (d.outs.empty() && d.params.empty())
    fail(prim.offset, fmt::format("equation '{}' has neither outputs nor params", prim.text));
  parse_args(scope, d);
  Eqn eqn = finish_eqn(d);
  for (size_t i = 0; i < d.outs.size(); ++i) {
    if (d.outs[i].name.text == "_")
      scope.underscores.emplace_back(jaxpr.eqns.size(), i);
    else
      define(scope, d.outs[i].name, eqn.outputs[i]);
  }
  jaxpr.eqns.push_back(std::move(eqn));
}

// Operands run until the next eqn (`name:type ... =`, or `prim[` for one without outputs), a `;`,
// or `in (`. They may continue on the following lines (JAX breaks a long operand list after a
// param block).
void JaxprParser::parse_args(Scope& scope, EqnDraft& d) {
  while (true) {
    Token t = lex.peek();
    if (t.is_ident()) {
      if (t.text == "in" && lex.peek2().is('(')) return;
      if (ident_opens_params(t)) return;  // the next eqn, one without outputs
      if (lex.peek2().is(':')) {
        // `True:bool[]` is a literal operand; so is `nan:f32[]` (or `inf:`) unless binders and
        // '=' follow on the same line: an eqn defining a variable JAX happened to name `nan`.
        bool literal =
            is_literal_word(t.text) && (t.text == "True" || t.text == "False" || !binders_follow());
        if (!literal) return;
      }
    } else if (t.kind != TokKind::number && !t.is('[')) {
      return;
    }
    std::optional<UntypedLiteral> untyped;
    std::optional<Atom> atom = parse_atom(scope, &untyped);
    if (untyped) {
      d.untyped.emplace_back(d.inputs.size(), *untyped);
      d.inputs.emplace_back(Literal{});
    } else {
      d.inputs.push_back(std::move(*atom));
    }
  }
}

// Whether `t` starts a primitive with params: `name[`, or a hyphenated name (`scatter-add[`).
bool JaxprParser::ident_opens_params(const Token& t) const {
  const std::string_view src = lex.source();
  size_t after = t.offset + t.text.size();
  while (after + 1 < src.size() && src[after] == '-' && is_ident_start(src[after + 1])) {
    after += 2;
    while (after < src.size() && is_ident_char(src[after])) ++after;
  }
  return after < src.size() && src[after] == '[';
}

// The answer depends only on where the scan starts, and is the same from every `name:type` pair
// the scan crossed: it is kept for them, so that an eqn with many operands like `nan:f32[]` is
// read in linear time (each operand would otherwise rescan the rest of the run).
bool JaxprParser::binders_follow() {
  size_t first = lex.peek().offset;
  if (first >= follows_.from && first <= follows_.to) return follows_.result;
  Lexer probe = lex;
  size_t pair = first;  // where the current `name:type` starts
  auto answer = [&](bool result) {
    follows_ = {first, pair, result};
    return result;
  };
  while (true) {
    pair = probe.peek().offset;
    if (!probe.next().is_ident()) return answer(false);
    if (!probe.next().is(':')) return answer(false);
    // An aval holds no whitespace. It ends at a ';' outside its brackets too (named axes are
    // `bf16[4;x:8]`): on one line, `add a nan:f32[]; c:f32[] = ...` has a literal operand.
    int brackets = 0;
    for (char c = probe.peek_char(); !probe.at_end() && !is_space(c) && c != '=';
         c = probe.peek_char()) {
      if (c == '[' || c == '{') ++brackets;
      if (c == ']' || c == '}') --brackets;
      if (c == ';' && brackets <= 0) break;
      probe.advance();
    }
    Token t = probe.peek();
    if (probe.source().substr(probe.offset(), t.offset - probe.offset()).find('\n') !=
        std::string_view::npos)
      return answer(false);
    if (t.is('=')) return answer(true);
    if (!t.is_ident()) return answer(false);
  }
}

std::optional<Atom> JaxprParser::parse_atom(Scope& scope, std::optional<UntypedLiteral>* untyped) {
  Token t = lex.next();
  if (t.is('[')) {
    Token dots = lex.next();
    if (dots.text != "...") fail_expected(dots, "'...' in an elided constant '[...]'");
    expect_punct(']', "']' after '[...'");
    expect_punct(':', "':' and a type after '[...]'");
    Literal l;
    l.aval = parse_aval();
    l.elided = true;
    return Atom(std::move(l));
  }
  // `nan` is a literal when typed (`nan:f32[]`) or when no variable has that name.
  bool word = t.is_ident() && is_literal_word(t.text) &&
              (lex.peek().is(':') || !scope.vars.count(std::string(t.text)));
  if (t.kind == TokKind::number || word) {
    LiteralValue v = parse_literal_value(t);
    if (lex.peek().is(':')) {
      lex.next();
      ShapedArray aval = parse_aval();
      return Atom(typed_literal(v, aval, t));
    }
    if (v.big_unsigned) fail(t.offset, fmt::format("integer literal {} is out of range", t.text));
    UntypedLiteral u;
    u.kind = v.kind;
    u.b = v.b;
    u.i = v.i;
    u.d = v.d;
    u.offset = t.offset;
    u.text = std::string(t.text);
    *untyped = std::move(u);
    return std::nullopt;
  }
  if (t.is_ident()) {
    if (t.text == "_") return Atom(read_underscore(scope, t.offset, 0));
    auto it = scope.vars.find(std::string(t.text));
    if (it == scope.vars.end()) fail(t.offset, fmt::format("undefined variable '{}'", t.text));
    return Atom(it->second);
  }
  fail_expected(t, "a variable or a literal");
}

Var JaxprParser::read_underscore(Scope& scope, size_t offset, size_t from_end) {
  if (from_end >= scope.underscores.size()) {
    // Binders come before every eqn: the latest `_` of all when no output was written `_`.
    if (!scope.underscore_binders.empty()) return scope.underscore_binders.back();
    fail(offset, "cannot read '_': no equation output or binder before it is named '_'");
  }
  auto [eqn, output] = scope.underscores[scope.underscores.size() - 1 - from_end];
  Var& v = scope.jaxpr->eqns[eqn].outputs[output];
  if (v.is_drop()) {
    v = Var(v.aval());
    v.set_hint("_");
  }
  return v;
}

void JaxprParser::parse_outvars(Scope& scope, Jaxpr& jaxpr) {
  expect_punct('(', "'(' after 'in'");
  // Outputs read as `_` (see Scope::underscores): k of them take the last k outputs written
  // `_`, in order; when fewer were written, the latest.
  std::vector<std::pair<size_t, size_t>> underscore_reads;  // (outvar index, offset)
  while (true) {
    if (lex.peek().is(')')) {
      lex.next();
      break;
    }
    if (lex.peek().is_ident("_")) {
      underscore_reads.emplace_back(jaxpr.outvars.size(), lex.next().offset);
      jaxpr.outvars.emplace_back(Literal{});
    } else {
      std::optional<UntypedLiteral> untyped;
      std::optional<Atom> atom = parse_atom(scope, &untyped);
      if (untyped)
        jaxpr.outvars.emplace_back(untyped_literal_as(*untyped, default_dtype(*untyped)));
      else
        jaxpr.outvars.push_back(std::move(*atom));
    }
    Token sep = lex.peek();
    if (sep.is(',')) {
      lex.next();
    } else if (!sep.is(')')) {
      fail_expected(sep, "',' or ')' in the output list");
    }
  }
  size_t k = underscore_reads.size();
  bool enough = scope.underscores.size() >= k;
  // In a call's body, the outputs are typed by the call's: each `_` read takes the first output
  // written `_` of its type not taken yet (which of two equal-typed ones it takes is not
  // observable: the call's output there is unused).
  const std::vector<ShapedArray>* types =
      call_out_types_.empty() || call_out_types_.back().size() != jaxpr.outvars.size()
          ? nullptr
          : &call_out_types_.back();
  std::vector<bool> taken(scope.underscores.size(), false);
  for (size_t i = 0; i < k; ++i) {
    auto [index, offset] = underscore_reads[i];
    size_t from_end = enough ? k - 1 - i : 0;
    if (types) {
      const ShapedArray& want = (*types)[index];
      for (size_t c = 0; c < scope.underscores.size(); ++c) {
        auto [eqn, output] = scope.underscores[c];
        if (taken[c] || !jaxpr.eqns[eqn].outputs[output].aval().same_type(want)) continue;
        from_end = scope.underscores.size() - 1 - c;
        break;
      }
    }
    if (from_end < taken.size()) taken[taken.size() - 1 - from_end] = true;
    jaxpr.outvars[index] = read_underscore(scope, offset, from_end);
  }
}

}  // namespace parse

JaxprRef parse_jaxpr(std::string_view text) {
  parse::JaxprParser parser(text);
  return parser.parse_text();
}

}  // namespace cjax
