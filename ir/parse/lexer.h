// The jaxpr lexer: splits jaxpr text into tokens on demand. The parser also reads raw characters
// through it where JAX's text is not token-shaped (avals such as `f64[8@x,8]{U:y}`, Python reprs
// in params), so the lexer is just an offset into the text that can be saved and restored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cjax::parse {

enum class TokKind : uint8_t {
  end,     // end of input
  ident,   // [A-Za-z_][A-Za-z0-9_]*
  number,  // 3, -2, 1.5, 1e-06, 9.99e+07, -inf
  string,  // a quoted Python string: 'rows'
  punct,   // any other single character; `...` is one punct token
};

struct Token {
  TokKind kind = TokKind::end;
  std::string_view text;
  size_t offset = 0;

  bool is(char c) const { return kind == TokKind::punct && text.size() == 1 && text[0] == c; }
  bool is_ident() const { return kind == TokKind::ident; }
  bool is_ident(std::string_view s) const { return kind == TokKind::ident && text == s; }
  bool is_end() const { return kind == TokKind::end; }
};

// 1-based line and column (in bytes) of `offset` in `src`.
struct Position {
  int line = 1;
  int column = 1;
};
Position position_of(std::string_view src, size_t offset);

// How a token is named in a message: `'['`, `'lambda'`, `end of input`.
std::string describe(const Token& t);

bool is_space(char c);
bool is_digit(char c);
bool is_ident_start(char c);
bool is_ident_char(char c);

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::string_view source() const { return src_; }
  size_t offset() const { return pos_; }
  void seek(size_t offset) { pos_ = offset < src_.size() ? offset : src_.size(); }
  bool at_end() const { return pos_ >= src_.size(); }

  // Tokens (whitespace, newlines included, separates tokens and is otherwise ignored).
  Token peek() const;   // the next token, not consumed
  Token peek2() const;  // the token after it
  Token next();         // consumes and returns the next token

  // Characters.
  void skip_space();
  char peek_char(size_t ahead = 0) const;  // '\0' past the end
  void advance(size_t n = 1) { seek(pos_ + n); }

  // The offset just past a quoted Python string starting at `offset`, or `offset` itself when
  // the quote is not closed on the same line (a lone apostrophe is then ordinary text).
  size_t skip_quoted(size_t offset) const;

 private:
  Token lex_at(size_t offset) const;
  size_t skip_space_from(size_t offset) const;

  std::string_view src_;
  size_t pos_ = 0;
};

}  // namespace cjax::parse
