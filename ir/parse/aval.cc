// Types: `f32[5,4]`, `bool[]`, and the annotations cjax keeps only as text: sharding per
// dimension `f64[8@x,2@(y,z)]`, named axes `bf16[4,512;x:8]`, unreduced/varying axes
// `f64[8@x,8]{U:y}`, memory spaces `f32<host>[8]`, extended dtypes `key<fry>[]`.
#include <fmt/format.h>

#include <array>
#include <charconv>

#include "ir/limits.h"
#include "ir/parse/jaxpr_parser.h"

namespace cjax::parse {
namespace {

// JAX dtypes cjax does not compute with; parsed as DType::opaque and printed back by name.
bool is_other_jax_dtype(std::string_view s) {
  // clang-format off
  static constexpr std::array<std::string_view, 19> kNames = {
      "c64", "c128", "float0", "i1", "i2", "i4", "u1", "u2", "u4", "f4_e2m1fn", "f6_e2m3fn",
      "f8_e3m4", "f8_e4m3", "f8_e4m3b11fnuz", "f8_e4m3fn", "f8_e4m3fnuz", "f8_e5m2",
      "f8_e5m2fnuz", "f8_e8m0fnu"};
  // clang-format on
  for (auto n : kNames)
    if (n == s) return true;
  return false;
}

}  // namespace

// The annotations above are kept as text read character by character, not token by token: a
// quote or a brace there would be read differently by the scan that skips a `let` preamble's body
// (skip_braces), so the printout of an accepted program would not parse back. None belongs there.
void JaxprParser::check_annotation_text(size_t start, size_t end, std::string_view what) const {
  std::string_view src = lex.source();
  for (size_t i = start; i < end; ++i) {
    auto c = static_cast<unsigned char>(src[i]);
    if (c == '\'' || c == '"' || c == '{' || c == '}' || c == '[' || c < 0x20 || c >= 0x7f)
      fail(i, fmt::format("unexpected {} in {}", describe(char_token_at(i)), what));
  }
}

ShapedArray JaxprParser::parse_aval() {
  std::string_view src = lex.source();
  Token dt = lex.next();
  if (!dt.is_ident()) fail_expected(dt, "a type such as f32[3]");

  // `<...>` right after the dtype: a memory space (`f32<host>`) or an extended dtype's
  // parameter (`key<fry>`).
  std::string angle;
  if (lex.peek_char() == '<') {
    size_t open = lex.offset();
    size_t i = open + 1;
    while (i < src.size() && src[i] != '>' && src[i] != '[' && !is_space(src[i])) ++i;
    if (i >= src.size() || src[i] != '>')
      fail(open, fmt::format("unclosed '<' in the type '{}<'", dt.text));
    check_annotation_text(open + 1, i, "a type's '<...>'");
    angle = std::string(src.substr(open, i + 1 - open));
    lex.seek(i + 1);
  }
  auto ann = std::make_shared<AvalAnnotations>();
  ShapedArray aval;
  if (dt.text == "key" && angle == "<fry>") {
    aval.dtype = DType::key_fry;
  } else if (auto d = dtype_from_short_name(dt.text)) {
    aval.dtype = *d;
    if (!angle.empty()) ann->dtype_text = std::string(dt.text) + angle;
  } else if ((dt.text == "key" && !angle.empty()) ||
             (angle.empty() && is_other_jax_dtype(dt.text))) {
    aval.dtype = DType::opaque;
    ann->dtype_text = std::string(dt.text) + angle;
  } else {
    fail(dt.offset, fmt::format("unknown dtype '{}{}'", dt.text, angle));
  }

  if (lex.peek_char() != '[')
    fail_expected(char_token(), fmt::format("'[' after the dtype '{}{}'", dt.text, angle));
  lex.advance();
  bool any_dim_suffix = false;
  std::vector<std::string> dim_suffix;
  while (lex.peek_char() != ']' && lex.peek_char() != ';') {
    if (!is_digit(lex.peek_char()))
      fail(lex.offset(), fmt::format("malformed shape: expected a dimension size, got {}",
                                     describe(char_token())));
    size_t start = lex.offset();
    size_t i = start;
    while (i < src.size() && is_digit(src[i])) ++i;
    int64_t dim = 0;
    auto [ptr, ec] = std::from_chars(src.data() + start, src.data() + i, dim);
    (void)ptr;
    if (ec != std::errc())
      fail(start, fmt::format("dimension size {} is too large", src.substr(start, i - start)));
    aval.shape.push_back(dim);
    lex.seek(i);
    // A sharding annotation: `@x`, `@(x,y)`.
    std::string suffix;
    if (lex.peek_char() == '@') {
      int depth = 0;
      size_t j = i;
      for (; j < src.size(); ++j) {
        char c = src[j];
        if (is_space(c)) break;
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (depth <= 0 && (c == ',' || c == ']' || c == ';')) break;
      }
      if (j >= src.size() || is_space(src[j]))
        fail(i, "malformed shape: unterminated sharding annotation");
      check_annotation_text(i + 1, j, "a sharding annotation");
      suffix = std::string(src.substr(i, j - i));
      any_dim_suffix = true;
      lex.seek(j);
    }
    dim_suffix.push_back(std::move(suffix));
    if (lex.peek_char() == ',') {
      lex.advance();
      continue;
    }
    if (lex.peek_char() != ']' && lex.peek_char() != ';')
      fail(lex.offset(), fmt::format("malformed shape: expected ',' or ']' after a dimension, "
                                     "got {}",
                                     describe(char_token())));
  }
  if (lex.peek_char() == ';') {  // named axes of xmap: `;x:8`
    size_t start = lex.offset();
    size_t j = start;
    while (j < src.size() && src[j] != ']' && !is_space(src[j])) ++j;
    if (j >= src.size() || src[j] != ']')
      fail(start, "malformed shape: expected ']' after the named axes");
    check_annotation_text(start + 1, j, "the named axes of a type");
    ann->inner_suffix = std::string(src.substr(start, j - start));
    lex.seek(j);
  }
  lex.advance();                 // ']'
  if (lex.peek_char() == '{') {  // unreduced / varying / reduced axes: `{U:y}`, `{V:x, U:y}`
    size_t start = lex.offset();
    size_t j = start + 1;  // braces do not nest here
    while (j < src.size() && src[j] != '}' && src[j] != '\n' && src[j] != '{') ++j;
    if (j >= src.size() || src[j] != '}')
      fail(start, "malformed type: unclosed '{' after the shape");
    check_annotation_text(start + 1, j, "a type's axes annotation");
    ann->suffix = std::string(src.substr(start, j + 1 - start));
    lex.seek(j + 1);
  }
  // Checked once the whole shape is read: the message names the rank, or prints the shape.
  if (std::string why = shape_limit_error(aval.dtype, aval.shape); !why.empty())
    fail(dt.offset, why);
  if (any_dim_suffix) ann->dim_suffix = std::move(dim_suffix);
  if (!ann->dtype_text.empty() || !ann->dim_suffix.empty() || !ann->inner_suffix.empty() ||
      !ann->suffix.empty())
    aval.annotations = std::move(ann);
  return aval;
}

}  // namespace cjax::parse
