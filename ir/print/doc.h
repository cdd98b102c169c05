// A Wadler-Lindig pretty-printing document and its layout algorithm, with the exact semantics of
// JAX's printer (jax/_src/pretty_printer.py, jaxlib/_pretty_printer.cc), so that jaxprs laid out
// with it match JAX's text byte for byte:
//   - the root is laid out in break mode;
//   - a group is laid out flat iff the group alone (all its breaks flat) fits in the rest of the
//     line, `width - column`; the text that follows the group is not measured;
//   - a break in break mode ends the line and starts the next one with `indent` spaces;
//   - a line may therefore exceed the width. No trailing whitespace is stripped.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace cjax::pp {

class Doc {
 public:
  Doc();                                  // the empty document
  Doc operator+(const Doc& other) const;  // concat

  struct Node;
  explicit Doc(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  const Node& node() const { return *node_; }

 private:
  std::shared_ptr<const Node> node_;
};

Doc nil();
Doc text(std::string s);
Doc concat(std::vector<Doc> docs);
// Prints `sep` in flat mode, a newline plus the current indent in break mode.
Doc brk(std::string sep = " ");
Doc group(Doc d);
Doc nest(int n, Doc d);  // adds n to the indent of the breaks inside d
Doc join(const Doc& sep, std::vector<Doc> docs);

// Lays `doc` out at `width` columns; lines are separated by '\n', no trailing newline.
std::string format(const Doc& doc, int width = 80);

}  // namespace cjax::pp
