// Pytrees: nested containers whose leaves are Arrays, as jax.tree_util. Supported nodes:
// cjax::Array (a leaf), std::vector, std::array, std::tuple, std::pair, std::optional,
// std::map<std::string, ...>, and user structs registered with one macro at namespace scope:
//
//   struct MyParams { cjax::Array w, b; int layers; };
//   CJAX_PYTREE(MyParams, w, b, layers)
//
// Anything else that is a number, bool, enum or string is *static*: not a leaf, not traced, and
// part of the structure key (what a trace cache keys on). Key paths print as JAX's keystr:
// `[0]` for sequences and tuples, `['w']` for maps, `.w` for struct fields.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "ir/errors.h"

namespace cjax {

struct KeyEntry {
  enum class Kind { index, key, attr };
  Kind kind = Kind::index;
  int64_t index = 0;
  std::string name;
  std::string str() const;  // "[0]", "['w']", ".w"
};
using KeyPath = std::vector<KeyEntry>;
std::string keystr(const KeyPath& path);

// What flatten visits, in order.
class TreeVisitor {
 public:
  virtual ~TreeVisitor() = default;
  virtual void leaf(const Array& x) = 0;
  virtual void static_value(const std::string& repr) { (void)repr; }
  virtual void push(const KeyEntry& e) { (void)e; }
  virtual void pop() {}
  virtual void open(std::string_view node, size_t arity) { (void)node, (void)arity; }
  virtual void close() {}
};

// Hands out replacement leaves, in flatten order.
class LeafReader {
 public:
  explicit LeafReader(std::span<const Array> leaves) : leaves_(leaves) {}
  const Array& next() {
    if (pos_ >= leaves_.size()) throw Error("tree_unflatten: too few leaves");
    return leaves_[pos_++];
  }
  bool done() const { return pos_ == leaves_.size(); }

 private:
  std::span<const Array> leaves_;
  size_t pos_ = 0;
};

template <class T, class Enable = void>
struct PyTreeTraits;

namespace detail {

template <class T>
inline constexpr bool is_static_v =
    std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string> ||
    std::is_same_v<T, std::string_view> || std::is_same_v<T, const char*>;

template <class T>
struct is_std_array : std::false_type {};
template <class T, size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_tuple_like : std::false_type {};
template <class... Ts>
struct is_tuple_like<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class V, class C, class A>
struct is_string_map<std::map<std::string, V, C, A>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// The fields of a registered struct: names and member pointers.
template <class T, class... Ms>
struct Fields {
  std::vector<std::string> names;
  std::tuple<Ms T::*...> members;
};
std::vector<std::string> split_field_names(const char* text);
template <class T, class... Ms>
Fields<T, Ms...> make_fields(const char* names, Ms T::*... members) {
  Fields<T, Ms...> f{split_field_names(names), std::make_tuple(members...)};
  if (f.names.size() != sizeof...(Ms)) throw Error("CJAX_PYTREE: field names do not match");
  return f;
}

template <class T>
concept RegisteredStruct = requires(const T* p) {
  cjax_pytree_fields(p);
};

template <class T>
std::string static_repr(const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "True" : "False";
  else if constexpr (std::is_enum_v<T>)
    return fmt::format("{}", static_cast<std::underlying_type_t<T>>(v));
  else if constexpr (std::is_arithmetic_v<T>)
    return fmt::format("{}", v);
  else
    return fmt::format("'{}'", std::string_view(v));
}

}  // namespace detail

template <>
struct PyTreeTraits<Array> {
  static void visit(const Array& x, TreeVisitor& v) { v.leaf(x); }
  static Array rebuild(const Array&, LeafReader& r) { return r.next(); }
};

template <class T>
struct PyTreeTraits<T, std::enable_if_t<detail::is_static_v<T>>> {
  static void visit(const T& x, TreeVisitor& v) { v.static_value(detail::static_repr(x)); }
  static T rebuild(const T& proto, LeafReader&) { return proto; }
};

template <class T>
struct PyTreeTraits<
    T, std::enable_if_t<detail::is_vector<T>::value || detail::is_std_array<T>::value>> {
  using E = typename T::value_type;
  static void visit(const T& x, TreeVisitor& v) {
    v.open(detail::is_vector<T>::value ? "list" : "array", x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      v.push({KeyEntry::Kind::index, static_cast<int64_t>(i), {}});
      PyTreeTraits<E>::visit(x[i], v);
      v.pop();
    }
    v.close();
  }
  static T rebuild(const T& proto, LeafReader& r) {
    T out = proto;
    for (size_t i = 0; i < proto.size(); ++i) out[i] = PyTreeTraits<E>::rebuild(proto[i], r);
    return out;
  }
};

template <class T>
struct PyTreeTraits<T, std::enable_if_t<detail::is_tuple_like<T>::value>> {
  static constexpr size_t N = std::tuple_size_v<T>;
  static void visit(const T& x, TreeVisitor& v) {
    v.open("tuple", N);
    visit_each(x, v, std::make_index_sequence<N>{});
    v.close();
  }
  static T rebuild(const T& proto, LeafReader& r) {
    return rebuild_each(proto, r, std::make_index_sequence<N>{});
  }

 private:
  template <size_t... I>
  static void visit_each(const T& x, TreeVisitor& v, std::index_sequence<I...>) {
    ((v.push({KeyEntry::Kind::index, static_cast<int64_t>(I), {}}),
      PyTreeTraits<std::decay_t<std::tuple_element_t<I, T>>>::visit(std::get<I>(x), v), v.pop()),
     ...);
  }
  template <size_t... I>
  static T rebuild_each(const T& proto, LeafReader& r, std::index_sequence<I...>) {
    // Braced initialisation evaluates left to right, so leaves are read in order.
    return T{
        PyTreeTraits<std::decay_t<std::tuple_element_t<I, T>>>::rebuild(std::get<I>(proto), r)...};
  }
};

template <class T>
struct PyTreeTraits<T, std::enable_if_t<detail::is_string_map<T>::value>> {
  using V = typename T::mapped_type;
  static void visit(const T& x, TreeVisitor& v) {
    v.open("dict", x.size());
    for (const auto& [k, val] : x) {
      v.static_value(fmt::format("'{}'", k));
      v.push({KeyEntry::Kind::key, 0, k});
      PyTreeTraits<V>::visit(val, v);
      v.pop();
    }
    v.close();
  }
  static T rebuild(const T& proto, LeafReader& r) {
    T out;
    for (const auto& [k, val] : proto) out.emplace(k, PyTreeTraits<V>::rebuild(val, r));
    return out;
  }
};

template <class T>
struct PyTreeTraits<T, std::enable_if_t<detail::is_optional<T>::value>> {
  using V = typename T::value_type;
  static void visit(const T& x, TreeVisitor& v) {
    if (!x) {
      v.static_value("None");
      return;
    }
    PyTreeTraits<V>::visit(*x, v);
  }
  static T rebuild(const T& proto, LeafReader& r) {
    if (!proto) return proto;
    return T(PyTreeTraits<V>::rebuild(*proto, r));
  }
};

template <detail::RegisteredStruct T>
struct PyTreeTraits<T, void> {
  static void visit(const T& x, TreeVisitor& v) {
    auto fields = cjax_pytree_fields(static_cast<const T*>(nullptr));
    v.open(typeid(T).name(), fields.names.size());
    size_t i = 0;
    std::apply(
        [&](auto... m) {
          ((v.push({KeyEntry::Kind::attr, 0, fields.names[i++]}),
            PyTreeTraits<std::decay_t<decltype(x.*m)>>::visit(x.*m, v), v.pop()),
           ...);
        },
        fields.members);
    v.close();
  }
  static T rebuild(const T& proto, LeafReader& r) {
    auto fields = cjax_pytree_fields(static_cast<const T*>(nullptr));
    T out = proto;
    std::apply(
        [&](auto... m) {
          ((out.*m = PyTreeTraits<std::decay_t<decltype(proto.*m)>>::rebuild(proto.*m, r)), ...);
        },
        fields.members);
    return out;
  }
};

// ---- flatten / unflatten
// -------------------------------------------------------------------------

struct FlatTree {
  std::vector<Array> leaves;
  std::vector<KeyPath> paths;  // one per leaf
  std::string structure;       // node kinds, arities and static values: the cache key
};

namespace detail {
class FlattenVisitor : public TreeVisitor {
 public:
  explicit FlattenVisitor(FlatTree& out) : out_(out) {}
  void leaf(const Array& x) override;
  void static_value(const std::string& repr) override;
  void push(const KeyEntry& e) override { path_.push_back(e); }
  void pop() override { path_.pop_back(); }
  void open(std::string_view node, size_t arity) override;
  void close() override;

 private:
  FlatTree& out_;
  KeyPath path_;
};
}  // namespace detail

template <class T>
FlatTree tree_flatten(const T& tree) {
  FlatTree out;
  detail::FlattenVisitor v(out);
  PyTreeTraits<T>::visit(tree, v);
  return out;
}

// A copy of `proto` with its leaves replaced by `leaves` (in flatten order).
template <class T>
T tree_unflatten(const T& proto, std::span<const Array> leaves) {
  LeafReader r(leaves);
  T out = PyTreeTraits<T>::rebuild(proto, r);
  if (!r.done()) throw Error("tree_unflatten: too many leaves");
  return out;
}

// jax.tree.map(f, tree, *rest): f applied to the leaves at each position of `tree` and of every
// tree in `rest`, which must have tree's structure (a cjax::Error names the first that does not).
template <class T, class F, class... Rest>
T tree_map(F&& f, const T& tree, const Rest&... rest) {
  FlatTree flat = tree_flatten(tree);
  const std::array<FlatTree, sizeof...(Rest)> others{tree_flatten(rest)...};
  for (size_t k = 0; k < others.size(); ++k)
    if (others[k].structure != flat.structure)
      throw Error(
          fmt::format("tree_map: tree {} has another structure than the first tree", k + 1));
  std::vector<Array> mapped;
  mapped.reserve(flat.leaves.size());
  for (size_t i = 0; i < flat.leaves.size(); ++i)
    mapped.push_back(std::apply(
        [&](const auto&... o) -> Array { return f(flat.leaves[i], o.leaves[i]...); }, others));
  return tree_unflatten(tree, mapped);
}

// jax.tree.leaves and jax.tree.structure (the structure as the key a trace cache compares).
template <class T>
std::vector<Array> tree_leaves(const T& tree) {
  return tree_flatten(tree).leaves;
}
template <class T>
std::string tree_structure(const T& tree) {
  return tree_flatten(tree).structure;
}

}  // namespace cjax

// ---- registration macro
// -----------------------------------------------------------------------------

#define CJAX_PP_EXPAND(x) x
#define CJAX_PP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, \
                       ...)                                                                      \
  N
#define CJAX_PP_NARGS(...) \
  CJAX_PP_EXPAND(CJAX_PP_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1))
#define CJAX_PP_CAT_(a, b) a##b
#define CJAX_PP_CAT(a, b) CJAX_PP_CAT_(a, b)
#define CJAX_PP_M1(T, a) &T::a
#define CJAX_PP_M2(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M1(T, __VA_ARGS__))
#define CJAX_PP_M3(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M2(T, __VA_ARGS__))
#define CJAX_PP_M4(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M3(T, __VA_ARGS__))
#define CJAX_PP_M5(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M4(T, __VA_ARGS__))
#define CJAX_PP_M6(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M5(T, __VA_ARGS__))
#define CJAX_PP_M7(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M6(T, __VA_ARGS__))
#define CJAX_PP_M8(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M7(T, __VA_ARGS__))
#define CJAX_PP_M9(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M8(T, __VA_ARGS__))
#define CJAX_PP_M10(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M9(T, __VA_ARGS__))
#define CJAX_PP_M11(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M10(T, __VA_ARGS__))
#define CJAX_PP_M12(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M11(T, __VA_ARGS__))
#define CJAX_PP_M13(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M12(T, __VA_ARGS__))
#define CJAX_PP_M14(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M13(T, __VA_ARGS__))
#define CJAX_PP_M15(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M14(T, __VA_ARGS__))
#define CJAX_PP_M16(T, a, ...) &T::a, CJAX_PP_EXPAND(CJAX_PP_M15(T, __VA_ARGS__))

// Registers struct `Type` (at most 16 fields) as a pytree node whose children are the listed
// fields, in order; use it at namespace scope in Type's namespace.
#define CJAX_PYTREE(Type, ...)                                                                  \
  [[maybe_unused]] inline auto cjax_pytree_fields(const Type*) {                                \
    return ::cjax::detail::make_fields<Type>(                                                   \
        #__VA_ARGS__,                                                                           \
        CJAX_PP_EXPAND(CJAX_PP_CAT(CJAX_PP_M, CJAX_PP_NARGS(__VA_ARGS__))(Type, __VA_ARGS__))); \
  }
