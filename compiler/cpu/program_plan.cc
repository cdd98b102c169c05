#include "compiler/cpu/program_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <limits>

#include "ir/dtype.h"
#include "ir/errors.h"
#include "ir/limits.h"

namespace cjax::lower {
namespace {

constexpr std::string_view kHeader = "cjax-cpu-plan 1";
// Far beyond any real program: a plan past them is damaged, not large.
constexpr size_t kMaxPlanCount = size_t{1} << 24;

std::string aval_text(const ShapedArray& a) {
  return fmt::format("{}[{}]", short_name(a.dtype), fmt::join(a.shape, ","));
}

// Reads the plan's lines, each a keyword and its fields.
class PlanReader {
 public:
  explicit PlanReader(std::string_view text) : text_(text) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("compilation cache: plan line {}: {}", line_, what));
  }
  bool done() const { return pos_ >= text_.size(); }

  // The next line's words.
  std::vector<std::string_view> line() {
    if (done()) fail("the plan ends early");
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view l = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    std::vector<std::string_view> words;
    for (size_t i = 0; i < l.size();) {
      const size_t j = std::min(l.find(' ', i), l.size());
      if (j > i) words.push_back(l.substr(i, j - i));
      i = j + 1;
    }
    if (words.empty()) fail("an empty line");
    return words;
  }
  // `n` raw bytes and the newline after them.
  std::string_view bytes(size_t n) {
    if (n > text_.size() - std::min(pos_, text_.size()) || pos_ + n >= text_.size() ||
        text_[pos_ + n] != '\n')
      fail("a runtime call's text is cut short");
    std::string_view b = text_.substr(pos_, n);
    for (char c : b) line_ += c == '\n';
    pos_ += n + 1;
    ++line_;
    return b;
  }

  int64_t integer(std::string_view w, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size() || v < lo || v > hi)
      fail(fmt::format("'{}' is not an integer in [{}, {}]", w, lo, hi));
    return v;
  }
  size_t count(std::string_view w) const {
    return static_cast<size_t>(integer(w, 0, static_cast<int64_t>(kMaxPlanCount)));
  }
  ShapedArray aval(std::string_view w) const {
    const size_t open = w.find('[');
    if (open == std::string_view::npos || w.back() != ']') fail(fmt::format("'{}' is no type", w));
    std::optional<DType> dtype = dtype_from_short_name(w.substr(0, open));
    if (!dtype) fail(fmt::format("'{}' names no dtype", w.substr(0, open)));
    Shape shape;
    std::string_view dims = w.substr(open + 1, w.size() - open - 2);
    for (size_t i = 0; i < dims.size();) {
      const size_t j = std::min(dims.find(',', i), dims.size());
      if (static_cast<int64_t>(shape.size()) >= kMaxRank) fail("a type of too many dimensions");
      shape.push_back(integer(dims.substr(i, j - i), 0, std::numeric_limits<int64_t>::max()));
      i = j + 1;
    }
    if (std::string why = shape_limit_error(*dtype, shape); !why.empty()) fail(why);
    return ShapedArray{*dtype, std::move(shape)};
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 0;
};

void expect(const PlanReader& r, const std::vector<std::string_view>& words, std::string_view key,
            size_t min_words) {
  if (words[0] != key || words.size() < min_words)
    r.fail(fmt::format("expected '{}' with at least {} fields", key, min_words - 1));
}

// The slots listed after `words[from]` up to the next keyword (or the end).
std::vector<size_t> slots(const PlanReader& r, const std::vector<std::string_view>& words,
                          size_t& at, size_t num_slots) {
  std::vector<size_t> out;
  while (at < words.size() && !words[at].empty() && words[at][0] >= '0' && words[at][0] <= '9') {
    const size_t s = r.count(words[at++]);
    if (s >= num_slots) r.fail(fmt::format("slot {} is beyond the plan's {} slots", s, num_slots));
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::string write_plan(const ProgramPlan& plan) {
  std::string out =
      fmt::format("{}\nslots {}\nfunctions {}\n", kHeader, plan.num_slots, plan.functions.size());
  for (const CompiledFunction& f : plan.functions) {
    out += fmt::format("function {} {}", f.name, f.out_avals.size());
    for (size_t i = 0; i < f.out_avals.size(); ++i)
      out += fmt::format(" {} {}", aval_text(f.out_avals[i]), f.forwarded[i]);
    out += '\n';
  }
  out += fmt::format("steps {}\n", plan.steps.size());
  for (const Step& s : plan.steps)
    out += fmt::format("step {} in {} out {} release {}\n", s.function, fmt::join(s.inputs, " "),
                       fmt::join(s.outputs, " "), fmt::join(s.release, " "));
  out += fmt::format("outputs {}\n", fmt::join(plan.output_slots, " "));
  out += fmt::format("calls {}\n", plan.calls.size());
  for (const auto& c : plan.calls) {
    const std::string text = c->jaxpr_text();
    out += fmt::format("call {}\n{}\n", text.size(), text);
  }
  return out;
}

ProgramPlan read_plan(std::string_view text, size_t num_inputs, size_t num_outputs) {
  PlanReader r(text);
  ProgramPlan plan;
  if (auto w = r.line(); w.size() != 2 || fmt::format("{} {}", w[0], w[1]) != kHeader)
    r.fail(fmt::format("expected '{}'", kHeader));
  auto w = r.line();
  expect(r, w, "slots", 2);
  plan.num_slots = r.count(w[1]);
  if (plan.num_slots < num_inputs) r.fail("fewer slots than the program has inputs");

  w = r.line();
  expect(r, w, "functions", 2);
  plan.functions.resize(r.count(w[1]));
  for (CompiledFunction& f : plan.functions) {
    w = r.line();
    expect(r, w, "function", 3);
    f.name = std::string(w[1]);
    const size_t outs = r.count(w[2]);
    if (w.size() != 3 + 2 * outs) r.fail("a function's outputs are not (type, forwarded) pairs");
    for (size_t i = 0; i < outs; ++i) {
      f.out_avals.push_back(r.aval(w[3 + 2 * i]));
      f.forwarded.push_back(static_cast<int>(r.integer(w[4 + 2 * i], -1, 1 << 30)));
    }
  }

  w = r.line();
  expect(r, w, "steps", 2);
  plan.steps.resize(r.count(w[1]));
  for (Step& s : plan.steps) {
    w = r.line();
    expect(r, w, "step", 3);
    s.function = r.count(w[1]);
    if (s.function >= plan.functions.size())
      r.fail(fmt::format("function {} is beyond the plan's {}", s.function, plan.functions.size()));
    size_t at = 2;
    auto list = [&](std::string_view key) {
      if (at >= w.size() || w[at] != key) r.fail(fmt::format("expected '{}'", key));
      ++at;
      return slots(r, w, at, plan.num_slots);
    };
    s.inputs = list("in");
    s.outputs = list("out");
    s.release = list("release");
    if (at != w.size()) r.fail("a step has fields after its releases");
    const CompiledFunction& f = plan.functions[s.function];
    if (s.outputs.size() != f.out_avals.size())
      r.fail("a step's outputs differ in number from its function's");
    for (int from : f.forwarded)
      if (from >= static_cast<int>(s.inputs.size()))
        r.fail("a function forwards an input its step does not pass");
  }

  w = r.line();
  size_t at = 1;
  expect(r, w, "outputs", 1);
  plan.output_slots = slots(r, w, at, plan.num_slots);
  if (at != w.size() || plan.output_slots.size() != num_outputs)
    r.fail(fmt::format("expected {} output slots", num_outputs));

  w = r.line();
  expect(r, w, "calls", 2);
  const size_t calls = r.count(w[1]);
  for (size_t i = 0; i < calls; ++i) {
    w = r.line();
    expect(r, w, "call", 2);
    const std::string_view call_text = r.bytes(r.count(w[1]));
    try {
      plan.calls.push_back(runtime_call_from_text(call_text));
    } catch (const Error& e) {
      r.fail(e.what());
    }
  }
  if (!r.done()) r.fail("text after the last runtime call");
  return plan;
}

std::string cache_payload(std::string_view plan_text, std::string_view object) {
  std::string out = fmt::format("{}\n", plan_text.size());
  out += plan_text;
  out += object;
  return out;
}

std::optional<CachePayload> split_cache_payload(std::string_view payload) {
  const size_t newline = payload.find('\n');
  if (newline == std::string_view::npos || newline > 20) return std::nullopt;
  size_t plan_size = 0;
  auto [end, ec] = std::from_chars(payload.data(), payload.data() + newline, plan_size);
  if (ec != std::errc() || end != payload.data() + newline ||
      plan_size > payload.size() - newline - 1)
    return std::nullopt;
  return CachePayload{payload.substr(newline + 1, plan_size),
                      payload.substr(newline + 1 + plan_size)};
}

}  // namespace cjax::lower
