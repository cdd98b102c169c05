#include "ir/parse/lexer.h"

#include <fmt/format.h>

namespace cjax::parse {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

Position position_of(std::string_view src, size_t offset) {
  Position p;
  if (offset > src.size()) offset = src.size();
  for (size_t i = 0; i < offset; ++i) {
    if (src[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string describe(const Token& t) {
  if (t.is_end()) return "end of input";
  std::string_view text = t.text;
  if (text.size() == 1) {
    auto c = static_cast<unsigned char>(text[0]);
    if (c < 0x20 || c >= 0x7f) return fmt::format("byte 0x{:02x}", c);
  }
  if (text.size() > 40) return fmt::format("'{}...'", text.substr(0, 40));
  return fmt::format("'{}'", text);
}

size_t Lexer::skip_space_from(size_t offset) const {
  while (offset < src_.size() && is_space(src_[offset])) ++offset;
  return offset;
}

void Lexer::skip_space() {
  pos_ = skip_space_from(pos_);
}

char Lexer::peek_char(size_t ahead) const {
  size_t i = pos_ + ahead;
  return i < src_.size() ? src_[i] : '\0';
}

size_t Lexer::skip_quoted(size_t offset) const {
  char quote = src_[offset];
  for (size_t i = offset + 1; i < src_.size(); ++i) {
    char c = src_[i];
    if (c == '\n') break;
    if (c == '\\') {
      ++i;
      continue;
    }
    if (c == quote) return i + 1;
  }
  return offset;
}

Token Lexer::lex_at(size_t offset) const {
  size_t i = skip_space_from(offset);
  Token t;
  t.offset = i;
  if (i >= src_.size()) {
    t.kind = TokKind::end;
    return t;
  }
  const size_t n = src_.size();
  char c = src_[i];
  size_t j = i;
  if (is_ident_start(c)) {
    while (j < n && is_ident_char(src_[j])) ++j;
    t.kind = TokKind::ident;
  } else if (is_digit(c) || (c == '-' && i + 1 < n && is_digit(src_[i + 1]))) {
    if (c == '-') ++j;
    while (j < n && is_digit(src_[j])) ++j;
    if (j + 1 < n && src_[j] == '.' && is_digit(src_[j + 1])) {
      ++j;
      while (j < n && is_digit(src_[j])) ++j;
    }
    if (j < n && (src_[j] == 'e' || src_[j] == 'E')) {
      size_t k = j + 1;
      if (k < n && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < n && is_digit(src_[k])) {
        while (k < n && is_digit(src_[k])) ++k;
        j = k;
      }
    }
    t.kind = TokKind::number;
  } else if (c == '-' && src_.substr(i + 1, 3) == "inf" &&
             (i + 4 >= n || !is_ident_char(src_[i + 4]))) {
    j = i + 4;
    t.kind = TokKind::number;
  } else if (c == '\'' || c == '"') {
    j = skip_quoted(i);
    if (j == i) {
      j = i + 1;
      t.kind = TokKind::punct;
    } else {
      t.kind = TokKind::string;
    }
  } else if (src_.substr(i, 3) == "...") {
    j = i + 3;
    t.kind = TokKind::punct;
  } else {
    j = i + 1;
    t.kind = TokKind::punct;
  }
  t.text = src_.substr(i, j - i);
  return t;
}

Token Lexer::peek() const {
  return lex_at(pos_);
}

Token Lexer::peek2() const {
  Token first = lex_at(pos_);
  if (first.is_end()) return first;
  return lex_at(first.offset + first.text.size());
}

Token Lexer::next() {
  Token t = lex_at(pos_);
  pos_ = t.is_end() ? src_.size() : t.offset + t.text.size();
  return t;
}

}  // namespace cjax::parse
