// Control flow, evaluated by running its jaxprs with eval_jaxpr: cond, while and scan. They
// produce their outputs (OutputMode::produced), forwarding the inner results instead of copying
// them. (Call-like primitives, jit, remat2 and the rest, are run by apply_primitive itself, found
// by their trait: Primitive::call_body.)
#include <algorithm>
#include <cstring>

#include "ir/jaxpr.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

std::vector<Buffer> run(const Jaxpr& jaxpr, std::span<const Buffer> args) {
  return eval_jaxpr(jaxpr, args);
}

void assign_outputs(std::span<Buffer> out, std::vector<Buffer> results) {
  if (results.size() != out.size())
    kernel_type_error("the inner jaxpr returns {} values for {} outputs", results.size(),
                      out.size());
  std::move(results.begin(), results.end(), out.begin());
}

const Jaxpr& jaxpr_param(const Params& params, std::string_view key) {
  const JaxprRef& j = params.get_jaxpr(key);
  if (!j) kernel_type_error("param '{}' holds no jaxpr", key);
  return *j;
}

// cond[branches](index, *operands): the index (an integer clamped into range, or a bool) picks
// the branch to evaluate.
void cond_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_min_arity(in, 1);
  const ParamValue& bv = params.at("branches");
  const std::vector<ParamValue>* items = nullptr;
  if (bv.is<ParamTuple>()) items = &bv.as<ParamTuple>().items;
  if (bv.is<ParamList>()) items = &bv.as<ParamList>().items;
  if (!items || items->empty()) kernel_type_error("'branches' must be a non-empty tuple of jaxprs");
  const int64_t n = static_cast<int64_t>(items->size());
  const int64_t index = std::clamp<int64_t>(scalar_index(in[0]), 0, n - 1);
  const ParamValue& branch = (*items)[static_cast<size_t>(index)];
  if (!branch.is<JaxprRef>() || !branch.as<JaxprRef>())
    kernel_type_error("branch {} is not a jaxpr", index);
  assign_outputs(out, run(*branch.as<JaxprRef>(), in.subspan(1)));
}

bool scalar_true(const Buffer& b) {
  if (b.aval().dtype != DType::bool_ || b.aval().rank() != 0)
    kernel_type_error("cond_jaxpr must return bool[], got {}", b.aval().str_short());
  return b.as<bool>()[0];
}

// while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts](*cond_consts, *body_consts, *carry):
// while cond(cond_consts, carry): carry = body(body_consts, carry).
// A batched loop's predicate (bool[B...]): whether any element is true.
bool any_true(const Buffer& pred) {
  const auto* p = static_cast<const bool*>(pred.data());
  return std::any_of(p, p + pred.aval().size(), [](bool b) { return b; });
}

// Each carry's new value where the predicate (a prefix of its shape) is true, its old value
// elsewhere: a batched loop's finished examples keep their carries.
std::vector<Buffer> select_by_prefix(const Buffer& pred, const std::vector<Buffer>& old,
                                     const std::vector<Buffer>& updated) {
  const auto* p = static_cast<const bool*>(pred.data());
  const int64_t n = pred.aval().size();
  const Shape& prefix = pred.aval().shape;
  std::vector<Buffer> out;
  for (size_t i = 0; i < old.size(); ++i) {
    const Shape& s = old[i].aval().shape;
    if (prefix.size() > s.size() || !std::equal(prefix.begin(), prefix.end(), s.begin()))
      kernel_type_error("while: the predicate {} is not a prefix of carry {}",
                        pred.aval().str_short(), old[i].aval().str_short());
    Buffer b = Buffer::allocate(old[i].aval());
    const size_t block =
        n == 0 ? 0 : static_cast<size_t>(old[i].aval().size() / n) * itemsize(old[i].aval().dtype);
    auto* dst = static_cast<char*>(b.data());
    const auto* now = static_cast<const char*>(updated[i].data());
    const auto* before = static_cast<const char*>(old[i].data());
    for (int64_t k = 0; k < n; ++k) {
      const size_t at = static_cast<size_t>(k) * block;
      std::memcpy(dst + at, (p[k] ? now : before) + at, block);
    }
    out.push_back(std::move(b));
  }
  return out;
}

void while_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  const Jaxpr& cond = jaxpr_param(params, "cond_jaxpr");
  const Jaxpr& body = jaxpr_param(params, "body_jaxpr");
  const int64_t cn = params.get_int("cond_nconsts"), bn = params.get_int("body_nconsts");
  if (cn < 0 || bn < 0 || static_cast<size_t>(cn + bn) > in.size())
    kernel_type_error("{} operands cannot hold {} + {} consts", in.size(), cn, bn);
  const auto nc = static_cast<size_t>(cn), nb = static_cast<size_t>(bn);
  std::vector<Buffer> carry(in.begin() + static_cast<ptrdiff_t>(nc + nb), in.end());
  std::vector<Buffer> cond_args(in.begin(), in.begin() + static_cast<ptrdiff_t>(nc));
  std::vector<Buffer> body_args(in.begin() + static_cast<ptrdiff_t>(nc),
                                in.begin() + static_cast<ptrdiff_t>(nc + nb));
  while (true) {
    cond_args.resize(nc);
    cond_args.insert(cond_args.end(), carry.begin(), carry.end());
    std::vector<Buffer> pred = run(cond, cond_args);
    if (pred.size() != 1) kernel_type_error("cond_jaxpr returns {} values, not 1", pred.size());
    const bool batched = pred[0].aval().rank() > 0;
    if (batched ? !any_true(pred[0]) : !scalar_true(pred[0])) break;
    body_args.resize(nb);
    body_args.insert(body_args.end(), carry.begin(), carry.end());
    std::vector<Buffer> next = run(body, body_args);
    carry = batched ? select_by_prefix(pred[0], carry, next) : std::move(next);
  }
  assign_outputs(out, std::move(carry));
}

// The aval of one slice along the leading axis.
ShapedArray unstacked(const ShapedArray& a) {
  ShapedArray s = a;
  s.shape.erase(s.shape.begin());
  return s;
}

// scan[jaxpr num_consts num_carry length reverse](*consts, *init, *xs): for t in 0..length-1
// (descending when reverse) (carry, y_t) = jaxpr(consts, carry, xs[t]). Outputs: the final
// carry, then the ys stacked along a new leading axis (ys[t] belongs to xs[t]).
void scan_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  const Jaxpr& body = jaxpr_param(params, "jaxpr");
  const int64_t num_consts = params.get_int("num_consts");
  const int64_t num_carry = params.get_int("num_carry");
  const int64_t length = params.get_int("length");
  const bool reverse = params.has("reverse") && params.get_bool("reverse");
  if (num_consts < 0 || num_carry < 0 || length < 0 ||
      static_cast<size_t>(num_consts + num_carry) > in.size())
    kernel_type_error("{} operands cannot hold {} consts and {} carries", in.size(), num_consts,
                      num_carry);
  const auto nconst = static_cast<size_t>(num_consts), ncarry = static_cast<size_t>(num_carry);
  const size_t nxs = in.size() - nconst - ncarry;
  std::span<const Buffer> xs = in.subspan(nconst + ncarry);
  for (const Buffer& x : xs)
    if (x.aval().rank() == 0 || x.aval().shape[0] != length)
      kernel_type_error("scanned operand {} does not have leading dimension {}",
                        x.aval().str_short(), length);
  const std::vector<ShapedArray> body_out = body.out_avals();
  if (body_out.size() < ncarry || out.size() != body_out.size())
    kernel_type_error("the body returns {} values for {} carries and {} outputs", body_out.size(),
                      ncarry, out.size());
  const size_t nys = body_out.size() - ncarry;

  std::vector<Buffer> ys;
  std::vector<size_t> y_bytes;
  for (size_t k = 0; k < nys; ++k) {
    ShapedArray stacked = body_out[ncarry + k];
    stacked.shape.insert(stacked.shape.begin(), length);
    ys.push_back(Buffer::allocate(stacked));
    y_bytes.push_back(body_out[ncarry + k].nbytes());
  }
  std::vector<Buffer> carry(in.begin() + static_cast<ptrdiff_t>(nconst),
                            in.begin() + static_cast<ptrdiff_t>(nconst + ncarry));
  std::vector<Buffer> args;
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = reverse ? length - 1 - step : step;
    args.assign(in.begin(), in.begin() + static_cast<ptrdiff_t>(nconst));
    args.insert(args.end(), carry.begin(), carry.end());
    for (size_t k = 0; k < nxs; ++k) {
      Buffer x = Buffer::allocate(unstacked(xs[k].aval()));
      if (x.nbytes())
        std::memcpy(
            x.data(),
            static_cast<const unsigned char*>(xs[k].data()) + static_cast<size_t>(t) * x.nbytes(),
            x.nbytes());
      args.push_back(std::move(x));
    }
    std::vector<Buffer> res = run(body, args);
    args.clear();
    for (size_t k = 0; k < nys; ++k)
      if (res[ncarry + k].nbytes() != y_bytes[k])
        kernel_type_error("the body's output {} is {}, not {}", ncarry + k,
                          res[ncarry + k].aval().str_short(), body_out[ncarry + k].str_short());
    for (size_t k = 0; k < nys; ++k)
      if (y_bytes[k])
        std::memcpy(static_cast<unsigned char*>(ys[k].data()) + static_cast<size_t>(t) * y_bytes[k],
                    res[ncarry + k].data(), y_bytes[k]);
    res.resize(ncarry);
    carry = std::move(res);
  }
  for (size_t k = 0; k < ncarry; ++k) out[k] = carry[k];
  for (size_t k = 0; k < nys; ++k) out[ncarry + k] = ys[k];
}

// custom_lin stands for a custom_vjp function's tangent map, which only its transpose (the user's
// bwd) defines: evaluating it means forward-mode differentiation of that function.
void custom_lin_kernel(const Params&, std::span<const Buffer>, std::span<Buffer>) {
  kernel_unsupported("can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
}

}  // namespace

void register_control_flow_kernels(KernelRegistry& r) {
  r.add("custom_lin", custom_lin_kernel);
  r.add("cond", cond_kernel, OutputMode::produced);
  r.add("while", while_kernel, OutputMode::produced);
  r.add("scan", scan_kernel, OutputMode::produced);
}

}  // namespace cjax::runtime
