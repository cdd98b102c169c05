#include "runtime/cuda/gpu_executable.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "ir/parse/parser.h"
#include "ir/primitive.h"
#include "runtime/blas_dot.h"
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/driver.h"
#include "runtime/interpreter.h"

namespace cjax::runtime::cuda {
namespace {

// A runtime call made ready: a product cuBLAS runs, or an eqn the interpreter's kernel runs on
// host copies of its operands.
struct Call {
  bool cublas = false;
  // device_put to pinned host memory (offload) or back to the device: copies on the copy stream.
  enum class Transfer { none, to_host, to_device } transfer = Transfer::none;
  DotPlan plan;
  const Primitive* prim = nullptr;
  Params params;
  std::vector<ShapedArray> in_avals, out_avals;
  std::string description;
};

Call prepare_call(const std::string& text) {
  JaxprRef j = parse_jaxpr(text);
  if (j->eqns.size() != 1)
    throw Error(fmt::format("GPU program: a runtime call holds {} eqns, not one", j->eqns.size()));
  const Eqn& e = j->eqns[0];
  Call c;
  c.prim = e.prim;
  c.params = e.params;
  c.in_avals = avals_of(std::span<const Atom>(e.inputs));
  c.out_avals = avals_of(std::span<const Var>(e.outputs));
  if (e.prim->name == "dot_general" && c.in_avals.size() == 2 &&
      blas_dot_supported(c.in_avals[0], c.in_avals[1], c.out_avals[0])) {
    c.plan =
        plan_dot(c.in_avals[0], c.in_avals[1],
                 DotDimensionNumbers::from_param(e.params.at("dimension_numbers")), c.out_avals[0]);
    c.cublas = c.plan.lhs.dense && c.plan.rhs.dense;
  }
  if (e.prim->name == "device_put")
    if (auto kind = lax_params::device_put_memory_kind(e.params))
      c.transfer = *kind == "device" ? Call::Transfer::to_device : Call::Transfer::to_host;
  c.description =
      c.transfer != Call::Transfer::none
          ? fmt::format("device_put to {} memory: a copy on the copy stream, beside the kernels",
                        c.transfer == Call::Transfer::to_device ? "device" : "pinned host")
      : c.cublas
          ? fmt::format("dot_general via cuBLAS: {} x [{}x{}]{} @ [{}x{}]{}", c.plan.batch,
                        c.plan.m, c.plan.k, c.plan.lhs.transposed ? "^T" : "", c.plan.k, c.plan.n,
                        c.plan.rhs.transposed ? "^T" : "")
          : fmt::format("{} on the host (the interpreter's kernel, operands copied both ways)",
                        e.prim->name);
  return c;
}

// out (row-major) = lhs . rhs as a column-major gemm: out^T = rhs^T . lhs^T.
void run_cublas(const DotPlan& p, uint64_t lhs, uint64_t rhs, uint64_t out, void* stream) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  gemm_strided_batched(p.dtype, p.rhs.transposed, p.lhs.transposed, p.n, p.m, p.k, rhs, p.rhs.ld,
                       p.k * p.n, lhs, p.lhs.ld, p.m * p.k, out, p.n, p.m * p.n, p.batch, stream);
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Where each buffer lives in one arena: buffers whose lifetimes (first step that touches them to
// the step that frees them; arguments and results the whole run) overlap never share bytes.
// Largest first, each at the lowest offset that fits.
std::vector<size_t> place_buffers(const GpuProgram& p, const std::vector<bool>& on_host,
                                  size_t& arena_bytes) {
  constexpr size_t kAlign = 256;
  const size_t n = p.buffers.size(), end = p.steps.size() + 1;
  std::vector<size_t> first(n, end), last(n, end);
  for (size_t b = 0; b < n; ++b)
    if (p.buffers[b].role == GpuBufferRole::input) first[b] = 0;
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const GpuStep& st = p.steps[s];
    for (const GpuOperand& o : st.operands)
      if (o.buffer >= 0) first[o.buffer] = std::min(first[o.buffer], s + 1);
    if (st.kind == GpuStep::Kind::free) last[st.buffer] = s + 1;
  }
  std::vector<size_t> order;
  for (size_t b = 0; b < n; ++b)
    if (p.buffers[b].role != GpuBufferRole::constant && !on_host[b]) order.push_back(b);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.buffers[a].bytes > p.buffers[b].bytes; });
  std::vector<size_t> offset(n, 0);
  std::vector<size_t> placed;
  arena_bytes = 0;
  for (size_t b : order) {
    const size_t size = (p.buffers[b].bytes + kAlign - 1) / kAlign * kAlign;
    std::vector<std::pair<size_t, size_t>> taken;  // [begin, end) of overlapping lifetimes
    for (size_t q : placed)
      if (first[q] <= last[b] && first[b] <= last[q])
        taken.emplace_back(offset[q],
                           offset[q] + (p.buffers[q].bytes + kAlign - 1) / kAlign * kAlign);
    std::sort(taken.begin(), taken.end());
    size_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (at + size <= lo) break;
      at = std::max(at, hi);
    }
    offset[b] = at;
    placed.push_back(b);
    arena_bytes = std::max(arena_bytes, at + size);
  }
  return offset;
}

}  // namespace

struct GpuExecutable::Impl {
  GpuProgram p;
  int ordinal = 0;
  std::vector<Module> modules;
  std::vector<void*> step_function;     // per step: the kernel a launch runs
  std::vector<DeviceBuffer> constants;  // per buffer: its data, for constants
  std::vector<Call> calls;
  std::vector<size_t> offset;  // per buffer: its place in the arena
  // Per result: the buffer it is read from (its own, or the constant it returns unchanged), or
  // -1 for an argument it returns unchanged.
  std::vector<int> output_buffer;
  size_t arena_bytes = 0, constant_bytes = 0, pinned_bytes = 0;
  bool host_calls = false, transfers = false;
  std::vector<bool> on_host;         // per buffer: lives in host memory (offloaded residuals)
  std::vector<PinnedBuffer> pinned;  // per buffer: the pinned memory of on-host non-inputs
  std::vector<std::array<Event, 2>> step_events;  // per transfer step: issued, copied
  Stream stream, copy_stream;

  mutable std::mutex mu;  // one run at a time: the arena and the graph are shared
  mutable DeviceBuffer arena;
  mutable std::vector<uint64_t> address;  // per buffer, once the arena exists
  mutable Graph graph;

  uint64_t pointer(const GpuOperand& o) const {
    return o.buffer < 0 ? o.bits : address[o.buffer] + static_cast<uint64_t>(o.offset);
  }

  void run_host_call(const Call& c, const std::vector<uint64_t>& ptrs) const {
    stream.synchronize();
    std::vector<Buffer> ins;
    for (size_t i = 0; i < c.in_avals.size(); ++i) {
      ins.push_back(Buffer::allocate(c.in_avals[i]));
      copy_device_to_host(ins.back().data(), ptrs[i], ins.back().nbytes());
    }
    std::vector<Buffer> outs = apply_primitive(*c.prim, c.params, ins, c.out_avals);
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].nbytes() > 0)
        copy_host_to_device(ptrs[c.in_avals.size() + i], outs[i].data(), outs[i].nbytes());
  }

  // A transfer step: the copy stream waits for the work enqueued so far, copies, and records
  // when it is done; kernels wait for it only where they read a fetched buffer, or reuse the
  // bytes of an offloaded one (see run_steps).
  void transfer(size_t s, const Call& c, const std::vector<uint64_t>& values,
                std::map<int, const Event*>& fetched, std::map<int, const Event*>& offloaded,
                GpuRunStats& stats) const {
    const GpuStep& st = p.steps[s];
    const auto& [issued, copied] = step_events[s];
    issued.record(stream);
    copy_stream.wait(issued);
    const size_t n = c.in_avals.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = c.in_avals[i].nbytes();
      if (bytes == 0) continue;
      if (c.transfer == Call::Transfer::to_host) {
        copy_stream.copy_to_host(reinterpret_cast<void*>(values[n + i]), values[i], bytes);
        stats.offloaded_bytes += bytes;
      } else {
        copy_stream.copy_to_device(values[n + i], reinterpret_cast<const void*>(values[i]), bytes);
        stats.fetched_bytes += bytes;
      }
    }
    copied.record(copy_stream);
    for (size_t i = 0; i < n; ++i) {
      if (c.transfer == Call::Transfer::to_host)
        offloaded[st.operands[i].buffer] = &copied;
      else
        fetched[st.operands[n + i].buffer] = &copied;
    }
  }

  // Enqueues the steps on the stream (host calls wait for it).
  void run_steps(GpuRunStats& stats) const {
    std::map<int, const Event*> fetched, offloaded;  // buffer -> its copy, not waited for yet
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const GpuStep& st = p.steps[s];
      if (st.kind == GpuStep::Kind::free) {  // the arena's layout already reuses it, once
        if (auto it = offloaded.find(st.buffer); it != offloaded.end()) {  // its copy is done
          stream.wait(*it->second);
          offloaded.erase(it);
        }
        continue;
      }
      for (const GpuOperand& o : st.operands)
        if (auto it = fetched.find(o.buffer); it != fetched.end()) {
          stream.wait(*it->second);
          fetched.erase(it);
        }
      std::vector<uint64_t> values;
      values.reserve(st.operands.size());
      for (const GpuOperand& o : st.operands) values.push_back(pointer(o));
      if (st.kind == GpuStep::Kind::launch) {
        std::vector<void*> params;
        for (uint64_t& v : values) params.push_back(&v);
        launch(step_function[s], st.grid, st.block, params.data(), &stream);
        ++stats.kernel_launches;
        continue;
      }
      const Call& c = calls[st.call];
      if (values.size() != c.in_avals.size() + c.out_avals.size())
        throw Error(fmt::format("GPU program: call {} passes {} pointers for {} operands", st.call,
                                values.size(), c.in_avals.size() + c.out_avals.size()));
      if (c.transfer != Call::Transfer::none) {
        transfer(s, c, values, fetched, offloaded, stats);
      } else if (c.cublas) {
        run_cublas(c.plan, values[0], values[1], values[2], stream.handle());
        ++stats.cublas_calls;
      } else {
        run_host_call(c, values);
        ++stats.host_calls;
      }
    }
    for (const auto& [buffer, copied] : offloaded) stream.wait(*copied);
  }

  // The program's work, on arguments already in place: replayed from a CUDA graph once one run
  // went step by step (which also lets cuBLAS set up its workspace outside a capture); programs
  // with host calls always go step by step.
  void execute(GpuRunStats& stats) const {
    if (graph) {
      graph.launch(stream);
      stats = graph_stats;
      stats.graph = true;
      return;
    }
    run_steps(stats);
    if (host_calls || transfers) return;
    stream.synchronize();
    stream.begin_capture();
    GpuRunStats recorded;
    try {
      run_steps(recorded);
    } catch (...) {
      try {
        stream.end_capture();
      } catch (...) {
      }
      throw;
    }
    graph = stream.end_capture();
    graph_stats = recorded;
  }
  mutable GpuRunStats graph_stats;

  void check_args(std::span<const Buffer> args) const {
    if (args.size() != p.in_avals.size())
      throw TypeError(fmt::format("{}: {} arguments, the program takes {}", p.name, args.size(),
                                  p.in_avals.size()));
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].aval().dtype != p.in_avals[i].dtype ||
          args[i].aval().shape != p.in_avals[i].shape)
        throw TypeError(fmt::format("{}: argument {} is {}, the program takes {}", p.name, i,
                                    args[i].aval().str_short(), p.in_avals[i].str_short()));
  }

  // Makes the arena (once) and copies the arguments into it.
  void place_arguments(std::span<const Buffer> args) const {
    make_current(ordinal);
    if (!arena.address()) {
      arena = DeviceBuffer::allocate(std::max<size_t>(arena_bytes, 256), ordinal);
      address.assign(p.buffers.size(), 0);
      for (size_t b = 0; b < p.buffers.size(); ++b)
        address[b] = p.buffers[b].role == GpuBufferRole::constant ? constants[b].address()
                     : on_host[b] ? reinterpret_cast<uint64_t>(pinned[b].data())
                                  : arena.address() + offset[b];
    }
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      if (p.buffers[b].role != GpuBufferRole::input) continue;
      const Buffer& arg = args[p.buffers[b].index];
      if (on_host[b])  // fetched from where the caller keeps it when the program asks
        address[b] = reinterpret_cast<uint64_t>(arg.data());
      else if (p.buffers[b].bytes > 0)
        stream.copy_to_device(address[b], arg.data(), p.buffers[b].bytes);
    }
  }
};

std::string describe_gpu_call(const std::string& jaxpr_text) {
  return prepare_call(jaxpr_text).description;
}

namespace {

// Offloaded values live in host memory: what a device_put to pinned_host writes (pinned memory
// of the executable's own) and what a device_put to device reads (an argument, read where the
// caller keeps it). Nothing else may read them.
void mark_host_buffers(GpuExecutable::Impl& m) {
  const GpuProgram& p = m.p;
  m.on_host.assign(p.buffers.size(), false);
  auto moves_data = [&](const GpuStep& st) {
    return st.kind == GpuStep::Kind::call && m.calls[st.call].transfer != Call::Transfer::none;
  };
  for (const GpuStep& st : p.steps) {
    if (!moves_data(st)) continue;
    const size_t n = m.calls[st.call].in_avals.size();
    for (size_t i = 0; i < n && n + i < st.operands.size(); ++i) {
      const GpuOperand& host = m.calls[st.call].transfer == Call::Transfer::to_host
                                   ? st.operands[n + i]
                                   : st.operands[i];
      if (host.buffer < 0 || host.offset != 0)
        throw Error("GPU program: a transfer between device and host memory of part of a buffer");
      m.on_host[host.buffer] = true;
    }
  }
  for (const GpuStep& st : p.steps) {
    if (st.kind == GpuStep::Kind::free || moves_data(st)) continue;
    for (const GpuOperand& o : st.operands)
      if (o.buffer >= 0 && m.on_host[o.buffer])
        throw UnsupportedError(fmt::format(
            "{}: a value offloaded to host memory is read on the device without being brought "
            "back (a device_put to 'device')",
            p.name));
  }
  m.pinned.resize(p.buffers.size());
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (m.on_host[b] && p.buffers[b].role != GpuBufferRole::input) {
      m.pinned[b] = PinnedBuffer::allocate(p.buffers[b].bytes, m.ordinal);
      m.pinned_bytes += p.buffers[b].bytes;
    }
}

}  // namespace

GpuExecutable::GpuExecutable(GpuProgram program, int ordinal) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.p = std::move(program);
  m.ordinal = ordinal;
  for (const GpuModule& mod : m.p.modules) m.modules.push_back(Module::load_ptx(mod.ptx, ordinal));
  m.step_function.assign(m.p.steps.size(), nullptr);
  for (size_t s = 0; s < m.p.steps.size(); ++s)
    if (m.p.steps[s].kind == GpuStep::Kind::launch)
      m.step_function[s] = m.modules.at(m.p.steps[s].module).function(m.p.steps[s].kernel);
  m.constants.resize(m.p.buffers.size());
  for (size_t id = 0; id < m.p.buffers.size(); ++id)
    if (const GpuBuffer& b = m.p.buffers[id]; b.role == GpuBufferRole::constant) {
      m.constants[id] = DeviceBuffer::allocate(std::max<size_t>(b.bytes, 256), ordinal);
      m.constants[id].copy_from_host(b.data.data(), b.bytes);
      m.constant_bytes += b.bytes;
    }
  for (const std::string& text : m.p.calls) {
    m.calls.push_back(prepare_call(text));
    const Call& c = m.calls.back();
    m.host_calls = m.host_calls || (!c.cublas && c.transfer == Call::Transfer::none);
    m.transfers = m.transfers || c.transfer != Call::Transfer::none;
  }
  mark_host_buffers(m);
  m.offset = place_buffers(m.p, m.on_host, m.arena_bytes);
  for (size_t o = 0; o < m.p.out_avals.size(); ++o) {
    const int fw = m.p.forwarded[o];
    if (fw >= 0) {
      m.output_buffer.push_back(-1);
      continue;
    }
    // Its own buffer, or (fw <= -2) the constant it returns unchanged.
    const GpuBufferRole role = fw == -1 ? GpuBufferRole::output : GpuBufferRole::constant;
    const int index = fw == -1 ? static_cast<int>(o) : -2 - fw;
    auto it = std::find_if(m.p.buffers.begin(), m.p.buffers.end(),
                           [&](const GpuBuffer& b) { return b.role == role && b.index == index; });
    if (it == m.p.buffers.end())
      throw Error(fmt::format("GPU program: output {} has no buffer", o));
    m.output_buffer.push_back(static_cast<int>(it - m.p.buffers.begin()));
  }
  m.stream = Stream::create(ordinal);
  m.copy_stream = Stream::create(ordinal);
  m.step_events.resize(m.p.steps.size());
  for (size_t s = 0; s < m.p.steps.size(); ++s)
    if (m.p.steps[s].kind == GpuStep::Kind::call &&
        m.calls[m.p.steps[s].call].transfer != Call::Transfer::none)
      m.step_events[s] = {Event::create(ordinal), Event::create(ordinal)};
}

GpuExecutable::~GpuExecutable() = default;

const GpuProgram& GpuExecutable::program() const {
  return impl_->p;
}

std::vector<std::string> GpuExecutable::describe_calls() const {
  std::vector<std::string> out;
  for (const Call& c : impl_->calls) out.push_back(c.description);
  return out;
}

std::vector<Buffer> GpuExecutable::run(std::span<const Buffer> args, GpuRunStats* stats) const {
  const Impl& m = *impl_;
  m.check_args(args);
  std::lock_guard lock(m.mu);
  GpuRunStats local;
  m.place_arguments(args);
  m.execute(local);
  std::vector<Buffer> outs;
  for (size_t o = 0; o < m.p.out_avals.size(); ++o) {
    outs.push_back(Buffer::allocate(m.p.out_avals[o]));
    const size_t bytes = outs.back().nbytes();
    if (const int fw = m.p.forwarded[o]; fw >= 0)
      std::memcpy(outs.back().data(), args[fw].data(), bytes);
    else if (const int id = m.output_buffer[o]; bytes > 0 && !m.on_host[id])
      m.stream.copy_to_host(outs.back().data(), m.address[id], bytes);
  }
  m.stream.synchronize();
  for (size_t o = 0; o < outs.size(); ++o)  // offloaded results, from pinned memory
    if (const int id = m.output_buffer[o]; id >= 0 && m.on_host[id] && outs[o].nbytes() > 0)
      std::memcpy(outs[o].data(), m.pinned[id].data(), outs[o].nbytes());
  local.peak_device_bytes = m.arena_bytes + m.constant_bytes;
  local.pinned_host_bytes = m.pinned_bytes;
  if (stats) *stats = local;
  return outs;
}

GpuExecutable::Timing GpuExecutable::time(std::span<const Buffer> args, int reps) const {
  const Impl& m = *impl_;
  m.check_args(args);
  std::lock_guard lock(m.mu);
  m.place_arguments(args);
  GpuRunStats stats;
  std::vector<double> runs, products;
  for (int r = 0; r < reps + 2; ++r) {  // two warm-ups: the step-by-step run and the capture
    m.stream.synchronize();
    const double t0 = now_ms();
    m.execute(stats);
    m.stream.synchronize();
    if (r >= 2) runs.push_back(now_ms() - t0);
  }
  for (int r = 0; r < reps + 1; ++r) {
    const double t0 = now_ms();
    for (const GpuStep& st : m.p.steps)
      if (st.kind == GpuStep::Kind::call && m.calls[st.call].cublas)
        run_cublas(m.calls[st.call].plan, m.pointer(st.operands[0]), m.pointer(st.operands[1]),
                   m.pointer(st.operands[2]), m.stream.handle());
    m.stream.synchronize();
    if (r > 0) products.push_back(now_ms() - t0);
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  return {median(runs), median(products)};
}

}  // namespace cjax::runtime::cuda
