// Collectives over the named axes of a process mesh, and shard_map, which binds one: each process
// runs the body on its block of the operands, the collectives exchange data with the processes of
// the named axes (runtime/distributed.h, over MPI), and the results' blocks are gathered into the
// whole outputs. (psum, pmax and pmin over named axes are in reductions.cc, with their positional
// form; under vmap every collective has become array ops before it runs.)
#include <numeric>

#include "ir/axis_env.h"
#include "ir/jaxpr.h"
#include "ir/sharding.h"
#include "runtime/distributed.h"
#include "runtime/distributed_blocks.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

namespace dist = distributed;

int64_t product(const Shape& s, size_t from, size_t to) {
  return std::accumulate(s.begin() + ptrdiff_t(from), s.begin() + ptrdiff_t(to), int64_t{1},
                         std::multiplies<>());
}

// An array seen as [outer, n, inner] (inner in bytes) becomes [n, outer, inner]: the n blocks
// along an axis made contiguous, in order.
void blocks_to_front(const char* in, char* out, int64_t outer, int64_t n, size_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(out + size_t(k * outer + o) * inner, in + size_t(o * n + k) * inner, inner);
}
// The inverse: [n, outer, inner] becomes [outer, n, inner].
void blocks_from_front(const char* in, char* out, int64_t outer, int64_t n, size_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(out + size_t(o * n + k) * inner, in + size_t(k * outer + o) * inner, inner);
}

void axis_index_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 0);
  out[0].as<int32_t>()[0] = int32_t(dist::group_rank(axis_names_of(params.at("axis_name"))));
}

// Every member's operand, stacked along all_gather_dimension (tiled: joined along it).
void all_gather_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  const std::vector<std::string> axes = axis_names_of(params.at("axis_name"));
  const int64_t n = dist::group_size(axes);
  const Shape& s = in[0].aval().shape;
  const size_t d = size_t(params.get_int("all_gather_dimension"));
  const size_t item = itemsize(in[0].aval().dtype);
  const int64_t outer = product(s, 0, d);
  if (outer == 1)  // the members' blocks are contiguous in the output: received in place
    return dist::all_gather(axes, in[0].data(), out[0].data(), in[0].nbytes());
  std::vector<char> gathered(in[0].nbytes() * size_t(n));
  dist::all_gather(axes, in[0].data(), gathered.data(), in[0].nbytes());
  blocks_from_front(gathered.data(), static_cast<char*>(out[0].data()), outer, n,
                    size_t(product(s, d, s.size())) * item);
}

// The block of the sum at this member's index along scatter_dimension.
void reduce_scatter_kernel(const Params& params, std::span<const Buffer> in,
                           std::span<Buffer> out) {
  check_arity(in, 1);
  const std::vector<std::string> axes = axis_names_of(params.at("axis_name"));
  const int64_t n = dist::group_size(axes);
  const Shape& s = in[0].aval().shape;
  const size_t d = size_t(params.get_int("scatter_dimension"));
  const DType dtype = in[0].aval().dtype;
  const int64_t inner = s[d] / n * product(s, d + 1, s.size());
  const int64_t outer = product(s, 0, d);
  if (outer == 1)  // the members' blocks are contiguous in the operand: sent in place
    return dist::reduce_scatter_sum(axes, dtype, in[0].data(), out[0].data(), inner);
  std::vector<char> blocks(in[0].nbytes());
  blocks_to_front(static_cast<const char*>(in[0].data()), blocks.data(), outer, n,
                  size_t(inner) * itemsize(dtype));
  dist::reduce_scatter_sum(axes, dtype, blocks.data(), out[0].data(), outer * inner);
}

// Block j of split_axis to member j; the blocks received joined along concat_axis.
void all_to_all_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  const std::vector<std::string> axes = axis_names_of(params.at("axis_name"));
  const int64_t n = dist::group_size(axes);
  const size_t split = size_t(params.get_int("split_axis"));
  const size_t concat = size_t(params.get_int("concat_axis"));
  const size_t item = itemsize(in[0].aval().dtype);
  const Shape& s = in[0].aval().shape;
  Shape block = s;
  block[split] /= n;
  // Blocks contiguous along a leading split (concat) axis are sent from (received into) place.
  const int64_t split_outer = product(s, 0, split), concat_outer = product(block, 0, concat);
  std::vector<char> sent(split_outer == 1 ? 0 : in[0].nbytes());
  std::vector<char> received(concat_outer == 1 ? 0 : in[0].nbytes());
  const void* send = in[0].data();
  if (split_outer != 1) {
    blocks_to_front(static_cast<const char*>(in[0].data()), sent.data(), split_outer, n,
                    size_t(product(block, split, block.size())) * item);
    send = sent.data();
  }
  void* receive = concat_outer == 1 ? out[0].data() : received.data();
  dist::all_to_all(axes, send, receive, in[0].nbytes() / size_t(n));
  if (concat_outer != 1)
    blocks_from_front(received.data(), static_cast<char*>(out[0].data()), concat_outer, n,
                      size_t(product(block, concat, block.size())) * item);
}

// This member's operand to the destination its pair names; zeros where no pair sends here.
void ppermute_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  const std::vector<std::string> axes = axis_names_of(params.at("axis_name"));
  const int64_t me = dist::group_rank(axes), n = dist::group_size(axes);
  std::optional<int64_t> to, from;
  for (const ParamValue& pair : params.at("perm").as<ParamTuple>().items) {
    const std::vector<int64_t> sd = pair.to_ints();
    if (sd.at(0) >= n || sd.at(1) >= n)
      kernel_type_error("the pair ({}, {}) is outside the axis of size {}", sd[0], sd[1], n);
    if (sd[0] == me) to = sd[1];
    if (sd[1] == me) from = sd[0];
  }
  if (!from) std::memset(out[0].data(), 0, out[0].nbytes());
  dist::send_recv(axes, in[0].data(), to, out[0].data(), from, in[0].nbytes());
}

const Jaxpr& body_of(const Params& params) {
  const JaxprRef& j = params.get_jaxpr("jaxpr");
  if (!j) kernel_type_error("param 'jaxpr' holds no jaxpr");
  return *j;
}

// This process's blocks of the operands go through the body; each result's blocks are gathered
// over the mesh axes its spec names (the other axes hold equal copies: check_vma=False's
// contract) into the whole output.
void shard_map_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  const Jaxpr& body = body_of(params);
  const MeshAxes mesh = mesh_from_param(params.at("mesh"));
  const std::vector<PartitionSpec> in_specs = specs_from_param(params.at("in_specs"), "in_specs");
  const std::vector<PartitionSpec> out_specs =
      specs_from_param(params.at("out_specs"), "out_specs");
  dist::MeshScope scope(mesh);
  std::vector<Buffer> blocks;
  for (size_t i = 0; i < in.size(); ++i)
    blocks.push_back(dist::take_block(in[i], body.invars[i].aval().shape, in_specs[i], mesh,
                                      dist::process_index()));
  std::vector<Buffer> results = dist::run_shard_map_body(body, blocks);
  blocks.clear();
  for (size_t i = 0; i < results.size(); ++i)
    out[i] = dist::gather_blocks(results[i], out[i].aval().shape, out_specs[i], mesh);
}

}  // namespace

void register_collective_kernels(KernelRegistry& r) {
  r.add("axis_index", axis_index_kernel);
  r.add("all_gather", all_gather_kernel);
  r.add("reduce_scatter", reduce_scatter_kernel);
  r.add("all_to_all", all_to_all_kernel);
  r.add("ppermute", ppermute_kernel);
  r.add("shard_map", shard_map_kernel);
}

}  // namespace cjax::runtime
