#include <catch2/catch.hpp>

#include "ir/print/doc.h"

using namespace cjax::pp;

TEST_CASE("doc: text and concat") {
  CHECK(format(nil()) == "");
  CHECK(format(text("abc")) == "abc");
  CHECK(format(text("ab") + text("cd")) == "abcd");
  CHECK(format(concat({text("a"), nil(), text("b")})) == "ab");
}

TEST_CASE("doc: the root is in break mode") {
  CHECK(format(text("a") + brk() + text("b")) == "a\nb");
  CHECK(format(nest(3, text("a") + brk() + text("b"))) == "a\n   b");
}

TEST_CASE("doc: a group that fits is flat") {
  Doc d = group(text("a") + brk() + text("b") + brk("; ") + text("c"));
  CHECK(format(d, 80) == "a b; c");
  CHECK(format(d, 6) == "a b; c");  // exactly the width fits
  CHECK(format(d, 5) == "a\nb\nc");
}

TEST_CASE("doc: nest indents breaks, not the current line") {
  Doc d = group(text("{") + nest(2, brk() + text("x") + brk() + text("y")) + brk() + text("}"));
  CHECK(format(d, 80) == "{ x y }");
  CHECK(format(d, 5) == "{\n  x\n  y\n}");
}

TEST_CASE("doc: fits measures only the group, not the text after it") {
  // The group "ab cd" fits in 6 columns; the trailing text makes the line longer than the width.
  Doc d = group(text("ab") + brk() + text("cd")) + text("efghij");
  CHECK(format(d, 6) == "ab cdefghij");
  CHECK(format(d, 4) == "ab\ncdefghij");
}

TEST_CASE("doc: a nested group is decided where it starts") {
  // Outer group too wide -> break mode; each inner group then checks only itself.
  Doc items = join(group(brk()), {text("aaa"), text("bbb"), text("ccc"), text("ddd")});
  Doc d = nest(2, group(items));
  CHECK(format(d, 80) == "aaa bbb ccc ddd");
  CHECK(format(d, 11) == "aaa bbb ccc\n  ddd");
  // A line may exceed the width: the break before ccc needs only its own space to fit.
  CHECK(format(d, 8) == "aaa bbb ccc\n  ddd");
  CHECK(format(d, 7) == "aaa bbb\n  ccc ddd");
}

TEST_CASE("doc: join") {
  CHECK(format(join(text(", "), {})) == "");
  CHECK(format(join(text(", "), {text("x")})) == "x");
  CHECK(format(join(text(", "), {text("x"), text("y"), text("z")})) == "x, y, z");
}

TEST_CASE("doc: empty breaks and trailing spaces are kept") {
  Doc d = group(text("[") + nest(2, brk("") + text("k=v")) + brk("") + text("]"));
  CHECK(format(d, 80) == "[k=v]");
  CHECK(format(d, 4) == "[\n  k=v\n]");
  CHECK(format(text("x ") + brk() + text("y"), 80) == "x \ny");
}

TEST_CASE("doc: width is measured from the current column") {
  Doc g = group(text("12") + brk() + text("34"));
  CHECK(format(text("abcd") + g, 9) == "abcd12 34");
  CHECK(format(text("abcd") + g, 8) == "abcd12\n34");
}
