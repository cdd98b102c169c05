#include "models/gpt/curve_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace cjax::models::gpt {
namespace {

constexpr double kWidth = 640, kHeight = 400;
constexpr double kLeft = 60, kRight = 20, kTop = 40, kBottom = 50;

// Round numbers for axis ticks: 1, 2 or 5 times a power of ten, about `count` of them.
double tick_step(double span, int count) {
  const double raw = span / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string curve_svg(const TrainingCurve& c) {
  int64_t max_step = 1;
  double max_loss = 0.5;
  for (const auto* series : {&c.train, &c.validation})
    for (const CurvePoint& p : *series) {
      max_step = std::max(max_step, p.step);
      if (std::isfinite(p.loss)) max_loss = std::max(max_loss, p.loss);
    }
  for (const auto& [loss, label] : c.reference_lines) max_loss = std::max(max_loss, loss);
  const double y_step = tick_step(max_loss, 6);
  const double y_max = std::ceil(max_loss / y_step) * y_step;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x = [&](double step) { return kLeft + plot_w * step / double(max_step); };
  auto y = [&](double loss) {
    return kTop + plot_h * (1.0 - std::clamp(loss, 0.0, y_max) / y_max);
  };

  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
      kWidth, kHeight, kWidth / 2, escape(c.title));
  for (double v = 0; v <= y_max + 1e-9; v += y_step)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        kLeft, kWidth - kRight, y(v), kLeft - 6, y(v) + 4, v);
  const double x_step = tick_step(double(max_step), 8);
  for (double v = 0; v <= double(max_step) + 1e-9; v += x_step)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", x(v),
                     kHeight - kBottom + 18, v);
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">step</text>\n"
      "<text x=\"16\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {})\">loss "
      "(nats/char)</text>\n",
      kLeft + plot_w / 2, kHeight - 12, kTop + plot_h / 2, kTop + plot_h / 2);
  for (const auto& [loss, label] : c.reference_lines)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\" "
        "stroke-dasharray=\"5,4\"/><text x=\"{1}\" y=\"{3:.1f}\" text-anchor=\"end\" "
        "fill=\"#555\">{4}</text>\n",
        kLeft, kWidth - kRight - 4, y(loss), y(loss) - 4, escape(label));
  auto polyline = [&](const std::vector<CurvePoint>& pts, const char* colour) {
    std::string points;
    for (const CurvePoint& p : pts)
      if (std::isfinite(p.loss))
        points += fmt::format("{:.1f},{:.1f} ", x(double(p.step)), y(p.loss));
    return fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", colour,
        points);
  };
  s += polyline(c.train, "#1f77b4");
  if (!c.validation.empty()) {
    s += polyline(c.validation, "#d62728");
    for (const CurvePoint& p : c.validation)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#d62728\"/>\n",
                       x(double(p.step)), y(p.loss));
  }
  s += fmt::format(
      "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"black\"/>"
      "<line x1=\"{0}\" x2=\"{0}\" y1=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" fill=\"#1f77b4\">training loss</text>"
      "<text x=\"{4}\" y=\"{6}\" fill=\"#d62728\">validation loss</text>\n</svg>\n",
      kLeft, kWidth - kRight, kTop + plot_h, kTop, kWidth - kRight - 130, kTop + 0.3 * plot_h,
      kTop + 0.3 * plot_h + 16);
  return s;
}

std::string curve_csv(const TrainingCurve& c) {
  std::map<int64_t, std::pair<double, double>> rows;
  for (const CurvePoint& p : c.train)
    rows.try_emplace(p.step, NAN, NAN).first->second.first = p.loss;
  for (const CurvePoint& p : c.validation)
    rows.try_emplace(p.step, NAN, NAN).first->second.second = p.loss;
  std::string s = "step,train_loss,validation_loss\n";
  for (const auto& [step, losses] : rows) {
    s += fmt::format("{},", step);
    if (!std::isnan(losses.first)) s += fmt::format("{:.6g}", losses.first);
    s += ',';
    if (!std::isnan(losses.second)) s += fmt::format("{:.6g}", losses.second);
    s += '\n';
  }
  return s;
}

}  // namespace cjax::models::gpt
