// Array::to_string: JAX's repr of an array, `Array([1., 2., 3.], dtype=float32)`, with NumPy's
// default formatting (precision 8, unique shortest digits, aligned columns, scientific notation for
// very large or small magnitudes, summarisation with `...` above 1000 elements, width 75).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "cjax/array.h"
#include "cjax/array_impl.h"

namespace cjax {
namespace {

constexpr int kPrecision = 8;
constexpr size_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;

// Shortest round-trip digits of v in the precision of `t`, as "d.ddd" and a decimal exponent.
void shortest_digits(double v, DType t, std::string& digits, int& exponent) {
  char buf[64];
  std::to_chars_result r =
      t == DType::f64 ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific)
                      : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v),
                                      std::chars_format::scientific);
  std::string s(buf, r.ptr);
  if (s[0] == '-') s.erase(0, 1);
  size_t e = s.find('e');
  exponent = std::stoi(s.substr(e + 1));
  digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
}

// NumPy's format_float_positional(v, precision=8, unique=True, trim='.') without padding.
std::string positional(double v, DType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string digits;
  int exp10;
  shortest_digits(v, t, digits, exp10);
  int frac = std::max(0, static_cast<int>(digits.size()) - 1 - exp10);
  std::string out;
  if (frac > kPrecision) {
    out = fmt::format("{:.{}f}", std::fabs(v), kPrecision);
    while (!out.empty() && out.back() == '0') out.pop_back();
  } else {
    if (exp10 >= 0) {
      std::string ip = digits.substr(0, std::min<size_t>(digits.size(), exp10 + 1));
      ip.append(static_cast<size_t>(exp10 + 1) - ip.size(), '0');
      std::string fp =
          static_cast<size_t>(exp10 + 1) < digits.size() ? digits.substr(exp10 + 1) : "";
      out = ip + "." + fp;
    } else {
      out = "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
    }
  }
  if (out == "0." && digits == "0") out = "0.";
  if (std::signbit(v)) out.insert(out.begin(), '-');
  return out;
}

// NumPy's format_float_scientific(v, precision=8, unique=True, trim='.'): "1.2345e+08", "1.e-05".
std::string scientific(double v, DType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string digits;
  int exp10;
  shortest_digits(v, t, digits, exp10);
  if (digits.size() > kPrecision + 1) {
    std::string s = fmt::format("{:.{}e}", std::fabs(v), kPrecision);
    size_t e = s.find('e');
    digits = s.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    exp10 = std::stoi(s.substr(e + 1));
  }
  std::string out = digits.substr(0, 1) + "." + digits.substr(1);
  out += fmt::format("e{}{:02d}", exp10 < 0 ? '-' : '+', std::abs(exp10));
  if (std::signbit(v)) out.insert(out.begin(), '-');
  return out;
}

struct Formatter {
  DType dtype;
  bool exp_format = false;
  size_t pad_left = 0, pad_right = 0;  // around the decimal point (floats)

  std::string raw(double v) const {
    if (dtype == DType::bool_) return v != 0.0 ? "True" : "False";
    if (is_integer(dtype)) return fmt::format("{}", static_cast<int64_t>(v));
    return exp_format ? scientific(v, dtype) : positional(v, dtype);
  }

  void fit(const std::vector<double>& vals) {
    if (is_floating(dtype)) {
      double max_abs = 0, min_abs = INFINITY;
      bool any_finite = false;
      for (double v : vals) {
        if (!std::isfinite(v)) continue;
        double a = std::fabs(v);
        if (a == 0) continue;
        any_finite = true;
        max_abs = std::max(max_abs, a);
        min_abs = std::min(min_abs, a);
      }
      if (any_finite && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3))
        exp_format = true;
    }
    if (!is_floating(dtype)) {
      for (double v : vals) pad_left = std::max(pad_left, raw(v).size());
      return;
    }
    size_t nonfinite_len = 0;
    for (double v : vals) {
      std::string s = raw(v);
      if (!std::isfinite(v)) {
        nonfinite_len = std::max(nonfinite_len, s.size());
        continue;
      }
      size_t dot = s.find('.');
      size_t end = exp_format ? s.find('e') : s.size();
      pad_left = std::max(pad_left, dot);
      pad_right = std::max(pad_right, end - dot - 1);
    }
    // NumPy right-aligns nan / inf in the width of the finite numbers (widened if needed).
    if (nonfinite_len > pad_right + 1) pad_left = std::max(pad_left, nonfinite_len - pad_right - 1);
  }

  std::string operator()(double v) const {
    std::string s = raw(v);
    if (!is_floating(dtype) || !std::isfinite(v)) {
      size_t width = is_floating(dtype) ? pad_left + 1 + pad_right : pad_left;
      return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
    }
    size_t dot = s.find('.');
    size_t end = exp_format ? s.find('e') : s.size();
    std::string left(pad_left > dot ? pad_left - dot : 0, ' ');
    std::string right(pad_right > end - dot - 1 ? pad_right - (end - dot - 1) : 0, ' ');
    if (exp_format) return left + s.substr(0, end) + std::string(right.size(), '0') + s.substr(end);
    return left + s + right;
  }
};

struct Printer {
  const std::vector<double>& vals;
  const Shape& shape;
  const Formatter& fmt_;
  bool summarize;
  std::vector<int64_t> strides;

  // Row-major element indices of one axis, with -1 for the `...` gap when summarising.
  std::vector<int64_t> axis_indices(int64_t n) const {
    std::vector<int64_t> idx;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      idx.push_back(-1);
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  std::string format(size_t axis, int64_t offset, const std::string& indent) const {
    std::vector<int64_t> idx = axis_indices(shape[axis]);
    std::string out = "[";
    if (axis + 1 == shape.size()) {
      std::string line = indent;  // measures the current line
      line += "[";
      for (size_t k = 0; k < idx.size(); ++k) {
        std::string word = idx[k] < 0 ? "..." : fmt_(vals[offset + idx[k]]);
        bool last = k + 1 == idx.size();
        std::string sep = last ? "" : ",";
        if (k > 0 && line.size() + word.size() + sep.size() + 1 > kLineWidth) {
          out += "\n" + indent + " ";
          line = indent + " ";
        } else if (k > 0) {
          out += " ";
          line += " ";
        }
        out += word + sep;
        line += word + sep;
      }
      return out + "]";
    }
    std::string blank(shape.size() - axis - 1, '\n');
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) out += "," + blank + indent + " ";
      if (idx[k] < 0)
        out += "...";
      else
        out += format(axis + 1, offset + idx[k] * strides[axis], indent + " ");
    }
    return out + "]";
  }
};

}  // namespace

std::string Array::to_string() const {
  if (!impl_) return "Array(null)";
  const ShapedArray& a = impl_->aval;
  if (impl_->kind == detail::ArrayImpl::Kind::tracer)
    return fmt::format("Traced<{}>", a.str_short());
  if (impl_->kind == detail::ArrayImpl::Kind::abstract)
    return fmt::format("ShapeDtype({})", a.str_short());
  if (impl_->deleted) return fmt::format("Array(deleted, {})", a.str_short());
  std::vector<double> vals = impl_->buffer.to_doubles();
  bool summarize = vals.size() > kThreshold;
  Formatter f{a.dtype};
  if (summarize) {
    // Only the printed elements decide the layout.
    std::vector<double> shown;
    std::vector<int64_t> strides(a.shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(a.shape.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * a.shape[i + 1];
    for (size_t i = 0; i < vals.size(); ++i) {
      bool keep = true;
      int64_t rem = static_cast<int64_t>(i);
      for (size_t d = 0; d < a.shape.size(); ++d) {
        int64_t c = rem / strides[d];
        rem %= strides[d];
        if (a.shape[d] > 2 * kEdgeItems && c >= kEdgeItems && c < a.shape[d] - kEdgeItems)
          keep = false;
      }
      if (keep) shown.push_back(vals[i]);
    }
    f.fit(shown);
  } else {
    f.fit(vals);
  }
  std::string body;
  if (a.shape.empty()) {
    body = f.raw(vals.at(0));
  } else if (a.size() == 0) {
    body = "[]";
  } else {
    std::vector<int64_t> strides(a.shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(a.shape.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * a.shape[i + 1];
    Printer p{vals, a.shape, f, summarize, strides};
    body = p.format(0, 0, std::string(6, ' '));
  }
  std::string out = fmt::format("Array({}, dtype={}", body, long_name(a.dtype));
  if (a.size() == 0 && a.rank() > 0) out += fmt::format(", shape={}", shape_str(a.shape));
  if (a.weak_type) out += ", weak_type=True";
  return out + ")";
}

}  // namespace cjax
