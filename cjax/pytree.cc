#include "cjax/pytree.h"

#include <cctype>

namespace cjax {

std::string KeyEntry::str() const {
  switch (kind) {
    case Kind::index:
      return fmt::format("[{}]", index);
    case Kind::key:
      return fmt::format("['{}']", name);
    case Kind::attr:
      return "." + name;
  }
  return "";
}

std::string keystr(const KeyPath& path) {
  std::string out;
  for (const KeyEntry& e : path) out += e.str();
  return out;
}

namespace detail {

std::vector<std::string> split_field_names(const char* text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = text; *p; ++p) {
    if (*p == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (!std::isspace(static_cast<unsigned char>(*p))) {
      cur += *p;
    }
  }
  out.push_back(cur);
  return out;
}

void FlattenVisitor::leaf(const Array& x) {
  out_.leaves.push_back(x);
  out_.paths.push_back(path_);
  out_.structure += "*,";
}

void FlattenVisitor::static_value(const std::string& repr) {
  out_.structure += repr + ",";
}

void FlattenVisitor::open(std::string_view node, size_t arity) {
  out_.structure += fmt::format("{}{}(", node, arity);
}

void FlattenVisitor::close() {
  out_.structure += "),";
}

}  // namespace detail
}  // namespace cjax
