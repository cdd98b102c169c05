// sort and top_k. sort[dimension is_stable num_keys]: the operands are permuted together along
// `dimension`, by the lexicographic order of the first num_keys of them. Floats compare as JAX's
// sort comparator does (lax._sort_lt_comparator): -0.0 equals 0.0 and every NaN sorts after +inf,
// so the order is total. An unstable sort is computed stably, which is one of its valid results.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// -1, 0 or 1 as a goes before, with or after b.
template <class T>
int total_order(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Compares elements i and j (flat indices) of one key operand.
using KeyCompare = std::function<int(int64_t i, int64_t j)>;

KeyCompare key_compare(const Buffer& key) {
  return dispatch<kAll>(key.aval().dtype, "sort", [&](auto tag) -> KeyCompare {
    using T = typename decltype(tag)::type;
    const T* x = key.as<T>();
    return [x](int64_t i, int64_t j) { return total_order(x[i], x[j]); };
  });
}

void sort_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  if (in.empty()) kernel_type_error("sort takes at least one operand, got none");
  check_outputs(out, in.size());
  const ShapedArray& a0 = in[0].aval();
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].aval().shape != a0.shape || !in[k].aval().same_type(out[k].aval()))
      kernel_type_error("operand {} does not match the output {}", in[k].aval().str_short(),
                        out[k].aval().str_short());
  if (a0.rank() == 0) kernel_type_error("operand {} has no dimension to sort", a0.str_short());
  const size_t dim = static_cast<size_t>(normalize_axis(params.get_int("dimension"), a0.rank()));
  const size_t num_keys = static_cast<size_t>(params.get_int("num_keys"));
  if (num_keys < 1 || num_keys > in.size())
    kernel_type_error("num_keys={} for {} operands", num_keys, in.size());
  std::vector<KeyCompare> keys;
  for (size_t k = 0; k < num_keys; ++k) keys.push_back(key_compare(in[k]));

  const auto [outer, len, inner] = split_at(a0.shape, dim);
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * len * inner + j;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        for (const KeyCompare& c : keys)
          if (int r = c(base + p * inner, base + q * inner)) return r < 0;
        return false;
      });
      // Every operand moves by the same permutation, element by element in bytes.
      for (size_t k = 0; k < in.size(); ++k) {
        const size_t width = itemsize(in[k].aval().dtype);
        const auto* src = static_cast<const unsigned char*>(in[k].data());
        auto* dst = static_cast<unsigned char*>(out[k].data());
        for (int64_t s = 0; s < len; ++s)
          std::memcpy(
              dst + static_cast<size_t>(base + s * inner) * width,
              src + static_cast<size_t>(base + order[static_cast<size_t>(s)] * inner) * width,
              width);
      }
    }
}

// top_k[axis is_stable k]: the k largest along `axis`, largest first (NaN above +inf, as the
// total order puts it last); equal values keep their order, and their indices.
void top_k_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 2);
  const ShapedArray& a = in[0].aval();
  if (a.rank() == 0) kernel_type_error("operand {} has no dimension", a.str_short());
  const size_t axis = static_cast<size_t>(normalize_axis(params.get_int("axis"), a.rank()));
  const int64_t k = params.get_int("k");
  Shape want = a.shape;
  want[axis] = k;
  if (k < 0 || k > a.shape[axis] || out[0].aval().shape != want || out[1].aval().shape != want ||
      out[0].aval().dtype != a.dtype || out[1].aval().dtype != DType::i32)
    kernel_type_error("k={} of {} does not give outputs {} and {}", k, a.str_short(),
                      out[0].aval().str_short(), out[1].aval().str_short());
  const KeyCompare compare = key_compare(in[0]);
  const auto [outer, len, inner] = split_at(a.shape, axis);
  const size_t width = itemsize(a.dtype);
  const auto* src = static_cast<const unsigned char*>(in[0].data());
  auto* values = static_cast<unsigned char*>(out[0].data());
  auto* indices = static_cast<int32_t*>(out[1].data());
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * len * inner + j;
      const int64_t out_base = o * k * inner + j;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return compare(base + p * inner, base + q * inner) > 0;
      });
      for (int64_t s = 0; s < k; ++s) {
        const int64_t from = order[static_cast<size_t>(s)];
        std::memcpy(values + static_cast<size_t>(out_base + s * inner) * width,
                    src + static_cast<size_t>(base + from * inner) * width, width);
        indices[out_base + s * inner] = static_cast<int32_t>(from);
      }
    }
}

}  // namespace

void register_sort_kernels(KernelRegistry& r) {
  r.add("sort", sort_kernel);
  r.add("top_k", top_k_kernel);
}

}  // namespace cjax::runtime
