// Eqn params: `[key=value key=value ...]`. Values cjax models are typed (None, bools, ints,
// floats, bare identifiers, dtypes, tuples, lists, jaxprs); any other Python repr is kept as its
// exact text. A value ends before the next ` key=` or at the `]` at bracket depth 0.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "ir/parse/jaxpr_parser.h"

namespace cjax::parse {
namespace {

bool is_dtype_key(std::string_view k) {
  return k == "new_dtype" || k == "preferred_element_type" || k == "dtype" || k == "index_dtype" ||
         k == "out_dtype";
}

// Keys whose bare identifier value may name a shared jaxpr (`jaxpr=lambda`): any key, since JAX
// prints every jaxpr-valued param of a primitive it does not know the same way (fuzzing found
// `out_s=<preamble>` on an unknown primitive not reading back).
bool is_jaxpr_key(std::string_view) {
  return true;
}

std::optional<ParamValue> number_value(std::string_view s) {
  if (s == "-inf") return ParamValue(-std::numeric_limits<double>::infinity());
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (s.find_first_of(".eE") != std::string_view::npos) {
    double d = 0;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || ptr != last) return std::nullopt;
    return ParamValue(d);
  }
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(first, last, i);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return ParamValue(i);
}

}  // namespace

Params JaxprParser::parse_params(std::string_view prim) {
  size_t open = lex.offset();
  lex.advance();  // '['
  Params params;
  while (true) {
    Token t = lex.peek();
    if (t.is(']')) {
      lex.next();
      return params;
    }
    if (!t.is_ident())
      fail_expected(t, fmt::format("a param name or ']' in the params of '{}'", prim));
    lex.next();
    Token eq = lex.next();
    if (!eq.is('=')) fail_expected(eq, fmt::format("'=' after the param name '{}'", t.text));
    if (params.has(t.text)) fail(t.offset, fmt::format("param '{}' given twice", t.text));
    ParamValue v = read_value(prim, t.text, open);
    params.set(std::string(t.text), std::move(v));
  }
}

ParamValue JaxprParser::read_value(std::string_view prim, std::string_view key, size_t open) {
  lex.skip_space();
  size_t start = lex.offset();
  // `key= = x` would print as `key== x`, which reads as no key at all.
  if (lex.peek_char() == '=') fail_expected(char_token(), fmt::format("a value after '{}='", key));
  if (key == "name") {  // a function's name, printed by str(): `<lambda>`, `transpose(f)`
    std::string text = raw_value_text(prim, start, open);
    if (text.empty()) fail_expected(lex.peek(), "a value after 'name='");
    check_one_line(prim, key, start, text);
    return ParamValue(std::move(text));
  }
  if (is_jaxpr_key(key) && !shared_.empty() && lex.peek_char() != '{' &&
      lex.peek_char() != '(') {  // `jaxpr=lambda`, `jaxpr=unnamed function`
    std::string text = raw_value_text(prim, start, open);
    if (is_shared_name(text)) return ParamValue(resolve_shared(text, start));
    lex.seek(start);
  }
  bool jaxpr_text = lex.peek_char() == '{';
  if (auto v = structured_value(key, true)) {
    if (value_ends()) return std::move(*v);
    if (jaxpr_text && v->is<JaxprRef>())
      fail_expected(lex.peek(), fmt::format("']' or the next param after the jaxpr of '{}='", key));
  }
  lex.seek(start);
  std::string text = raw_value_text(prim, start, open);
  if (text.empty()) fail_expected(lex.peek(), fmt::format("a value after '{}='", key));
  check_one_line(prim, key, start, text);
  return ParamValue(OpaqueParam{std::move(text)});
}

// JAX prints a value it does not structure with str(), on one line; text running past the line is
// a mangled next key (`name` values may also become `let NAME =` preambles, which are one line).
void JaxprParser::check_one_line(std::string_view prim, std::string_view key, size_t start,
                                 std::string_view text) const {
  if (size_t nl = text.find('\n'); nl != std::string_view::npos)
    fail(start + nl,
         fmt::format("the value of '{}=' in '{}' runs past the end of its line", key, prim));
}

// A value cjax models, or nullopt (then the caller keeps the text). `top` is false inside tuples
// and lists, where Python prints repr(): strings are quoted there, and a bare identifier is some
// other object's repr (`(Explicit, Explicit)`), so it is not a string.
std::optional<ParamValue> JaxprParser::structured_value(std::string_view key, bool top) {
  Token t = lex.peek();
  if (t.is('{')) {
    if (!lex.peek2().is_ident("lambda")) return std::nullopt;
    return ParamValue(parse_braced_jaxpr());
  }
  if (t.is('(') || t.is('[')) {
    DepthGuard guard(*this, t.offset);
    bool tuple = t.is('(');
    char close = tuple ? ')' : ']';
    lex.next();
    std::vector<ParamValue> items;
    bool need_separator = false;
    while (true) {
      Token n = lex.peek();
      if (n.is(close)) {
        lex.next();
        break;
      }
      if (need_separator) {
        // Jaxprs in a tuple are separated by line breaks only: `branches=( {...} {...} )`.
        bool jaxpr_next =
            n.is('{') || (n.is_ident() && is_jaxpr_key(key) && is_shared_name(n.text));
        if (!items.back().is<JaxprRef>() || !jaxpr_next) return std::nullopt;
      }
      auto v = structured_value(key, false);
      if (!v) return std::nullopt;
      items.push_back(std::move(*v));
      need_separator = true;
      if (lex.peek().is(',')) {
        lex.next();
        need_separator = false;
      }
    }
    if (tuple) return ParamValue(ParamTuple{std::move(items)});
    return ParamValue(ParamList{std::move(items)});
  }
  if (t.kind == TokKind::number) {
    lex.next();
    return number_value(t.text);
  }
  if (t.kind == TokKind::string) {
    lex.next();
    std::string_view body = t.text.substr(1, t.text.size() - 2);
    // Only simple reprs: a string with escapes, quotes or control bytes is kept as text. (Python's
    // repr escapes control bytes, so a raw one is no printout's; kept as a string, it would print
    // escaped and read back as text.)
    auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
    if (top || body.find_first_of("\\'\"") != std::string_view::npos ||
        std::any_of(body.begin(), body.end(), control))
      return std::nullopt;
    return ParamValue(std::string(body));
  }
  if (t.is_ident()) {
    lex.next();
    std::string_view s = t.text;
    if (s == "np") return numpy_int_value(t.offset);
    if (s == "None") return ParamValue(NoneParam{});
    if (s == "True" || s == "False") return ParamValue(s == "True");
    if (s == "nan") return ParamValue(std::numeric_limits<double>::quiet_NaN());
    if (s == "inf") return ParamValue(std::numeric_limits<double>::infinity());
    if (!top && is_jaxpr_key(key) && is_shared_name(s))
      return ParamValue(resolve_shared(s, t.offset));
    if (is_dtype_key(key))
      if (auto d = dtype_from_long_name(s)) return ParamValue(*d);
    if (!top) return std::nullopt;
    return ParamValue(std::string(s));
  }
  if (t.is('<') && top) {  // `<lambda>`: a name; `<function f at 0x...>` is kept as text
    std::string_view src = lex.source();
    size_t i = t.offset + 1;
    while (i < src.size() && is_ident_char(src[i])) ++i;
    if (i == t.offset + 1 || i >= src.size() || src[i] != '>') return std::nullopt;
    lex.seek(i + 1);
    return ParamValue(std::string(src.substr(t.offset, i + 1 - t.offset)));
  }
  return std::nullopt;
}

// `np.int64(-3)` (the `np` read): a numpy int; anything else after `np` is kept as text.
std::optional<ParamValue> JaxprParser::numpy_int_value(size_t start) {
  std::string_view src = lex.source();
  constexpr std::string_view kPrefix = "np.int64(";
  if (src.substr(start, kPrefix.size()) != kPrefix) return std::nullopt;
  size_t i = start + kPrefix.size();
  const size_t digits = i;
  if (i < src.size() && src[i] == '-') ++i;
  while (i < src.size() && is_digit(src[i])) ++i;
  if (i >= src.size() || src[i] != ')') return std::nullopt;
  std::optional<ParamValue> v = number_value(src.substr(digits, i - digits));
  if (!v || !v->is<int64_t>()) return std::nullopt;
  lex.seek(i + 1);
  return ParamValue::np_int(v->as<int64_t>());
}

bool JaxprParser::value_ends() const {
  Lexer probe = lex;
  probe.skip_space();
  if (probe.peek_char() == ']') return true;
  return probe.offset() > lex.offset() && key_follows(lex.offset());
}

// Whether ` key=` starts at `offset` (whitespace, an identifier, '=' but not '==').
bool JaxprParser::key_follows(size_t offset) const {
  std::string_view src = lex.source();
  size_t i = offset;
  while (i < src.size() && is_space(src[i])) ++i;
  if (i == offset || i >= src.size() || !is_ident_start(src[i])) return false;
  while (i < src.size() && is_ident_char(src[i])) ++i;
  return i < src.size() && src[i] == '=' && (i + 1 >= src.size() || src[i + 1] != '=');
}

// The text of a value from `start` to the next ` key=` or the closing `]` at bracket depth 0,
// without trailing whitespace. Quoted strings are skipped whole; a `)` with no opening partner is
// text (jax 0.6 printed PartitionSpecs as `P('x', None))`). Other closers must match their
// opener: braces in particular stay balanced, as the scan for the end of a `let` preamble needs.
std::string JaxprParser::raw_value_text(std::string_view prim, size_t start, size_t open) {
  std::string_view src = lex.source();
  size_t i = start;
  std::string openers;  // the unclosed brackets, innermost last
  size_t stray = std::string_view::npos;
  while (true) {
    if (i >= src.size()) {
      Token end;
      end.offset = src.size();
      Position p = position_of(src, open);
      fail_expected(end, fmt::format("']' to close the params of '{}' opened at {}:{}", prim,
                                     p.line, p.column));
    }
    char c = src[i];
    if (c == '\'' || c == '"') {
      size_t j = lex.skip_quoted(i);
      i = j == i ? i + 1 : j;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      openers.push_back(c);
    } else if (c == ')' || c == ']' || c == '}') {
      char want = openers.empty()         ? '\0'
                  : openers.back() == '(' ? ')'
                  : openers.back() == '[' ? ']'
                                          : '}';
      if (c == want) {
        openers.pop_back();
      } else if (openers.empty() && c == ']') {
        break;
      } else if (openers.empty() && c == '}') {
        // Reported once the value's end is found (an unclosed '[' is the better message when
        // the text runs out first).
        if (stray == std::string_view::npos) stray = i;
      } else if (!(openers.empty() && c == ')')) {
        fail(i, fmt::format("unbalanced '{}' in a param value of '{}'", c, prim));
      }
    } else if (openers.empty() && is_space(c)) {
      if (key_follows(i)) break;
      while (i < src.size() && is_space(src[i])) ++i;  // one look per run of spaces
      continue;
    }
    ++i;
  }
  if (stray != std::string_view::npos)
    fail(stray, fmt::format("unbalanced '}}' in a param value of '{}'", prim));
  size_t end = i;
  while (end > start && is_space(src[end - 1])) --end;
  lex.seek(i);
  return std::string(src.substr(start, end - start));
}

}  // namespace cjax::parse
