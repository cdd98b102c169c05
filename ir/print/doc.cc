#include "ir/print/doc.h"

#include <utility>

namespace cjax::pp {

struct Doc::Node {
  enum class Kind { nil, text, concat, brk, group, nest };
  Kind kind = Kind::nil;
  std::string text;           // text, or the flat form of a break
  int indent = 0;             // nest
  std::vector<Doc> children;  // concat; group and nest have exactly one
};

using Node = Doc::Node;
using Kind = Node::Kind;

namespace {
Doc make(Node n) {
  return Doc(std::make_shared<const Node>(std::move(n)));
}

const std::shared_ptr<const Node>& nil_node() {
  static const std::shared_ptr<const Node> n = std::make_shared<const Node>();
  return n;
}
}  // namespace

Doc::Doc() : node_(nil_node()) {}

Doc Doc::operator+(const Doc& other) const {
  return concat({*this, other});
}

Doc nil() {
  return Doc();
}

Doc text(std::string s) {
  Node n;
  n.kind = Kind::text;
  n.text = std::move(s);
  return make(std::move(n));
}

Doc concat(std::vector<Doc> docs) {
  Node n;
  n.kind = Kind::concat;
  n.children = std::move(docs);
  return make(std::move(n));
}

Doc brk(std::string sep) {
  Node n;
  n.kind = Kind::brk;
  n.text = std::move(sep);
  return make(std::move(n));
}

Doc group(Doc d) {
  Node n;
  n.kind = Kind::group;
  n.children.push_back(std::move(d));
  return make(std::move(n));
}

Doc nest(int indent, Doc d) {
  Node n;
  n.kind = Kind::nest;
  n.indent = indent;
  n.children.push_back(std::move(d));
  return make(std::move(n));
}

Doc join(const Doc& sep, std::vector<Doc> docs) {
  if (docs.empty()) return nil();
  if (docs.size() == 1) return std::move(docs[0]);
  std::vector<Doc> xs;
  xs.reserve(2 * docs.size() - 1);
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i) xs.push_back(sep);
    xs.push_back(std::move(docs[i]));
  }
  return concat(std::move(xs));
}

namespace {

// Whether `doc`, laid out flat, fits in `width` columns. Stops as soon as it does not.
bool fits(const Node& doc, long width) {
  std::vector<const Node*> stack{&doc};
  while (width >= 0 && !stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    switch (n->kind) {
      case Kind::nil:
        break;
      case Kind::text:
      case Kind::brk:
        width -= static_cast<long>(n->text.size());
        break;
      case Kind::concat:
        for (auto it = n->children.rbegin(); it != n->children.rend(); ++it)
          stack.push_back(&it->node());
        break;
      case Kind::group:
      case Kind::nest:
        stack.push_back(&n->children[0].node());
        break;
    }
  }
  return width >= 0;
}

struct Agendum {
  int indent;
  bool flat;
  const Node* doc;
};

}  // namespace

std::string format(const Doc& doc, int width) {
  std::string out;
  long column = 0;
  std::vector<Agendum> stack{{0, false, &doc.node()}};
  while (!stack.empty()) {
    Agendum a = stack.back();
    stack.pop_back();
    const Node& n = *a.doc;
    switch (n.kind) {
      case Kind::nil:
        break;
      case Kind::text:
        out += n.text;
        column += static_cast<long>(n.text.size());
        break;
      case Kind::concat:
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
          stack.push_back({a.indent, a.flat, &it->node()});
        break;
      case Kind::brk:
        if (a.flat) {
          out += n.text;
          column += static_cast<long>(n.text.size());
        } else {
          out += '\n';
          out.append(static_cast<size_t>(a.indent), ' ');
          column = a.indent;
        }
        break;
      case Kind::group:
        stack.push_back({a.indent, fits(n, width - column), &n.children[0].node()});
        break;
      case Kind::nest:
        stack.push_back({a.indent + n.indent, a.flat, &n.children[0].node()});
        break;
    }
  }
  return out;
}

}  // namespace cjax::pp
