#include "tools/cjax/memory_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "ir/errors.h"

#ifdef CJAX_HAVE_PLPLOT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <plplot.h>
#pragma GCC diagnostic pop
#endif

namespace cjax::cli {

#ifdef CJAX_HAVE_PLPLOT
namespace {

// A unit for an axis whose values reach `max`.
struct Unit {
  double scale;
  const char* name;
};
Unit byte_unit(double max) {
  if (max >= 1 << 30) return {1.0 / (1 << 30), "GiB"};
  if (max >= 1 << 20) return {1.0 / (1 << 20), "MiB"};
  if (max >= 1 << 10) return {1.0 / (1 << 10), "KiB"};
  return {1.0, "B"};
}
Unit flop_unit(double max) {
  if (max >= 1e9) return {1e-9, "GFLOPs"};
  if (max >= 1e6) return {1e-6, "MFLOPs"};
  if (max >= 1e3) return {1e-3, "KFLOPs"};
  return {1.0, "FLOPs"};
}

// Distinct colours for cmap0 entries 1..10 (0 is the white background, 15 black for axes).
void set_palette() {
  static const int kRgb[][3] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                {188, 189, 34},  {23, 190, 207}};
  plscolbg(255, 255, 255);
  for (int i = 0; i < 10; ++i) plscol0(i + 1, kRgb[i][0], kRgb[i][1], kRgb[i][2]);
  plscol0(15, 0, 0, 0);
}

int colour(size_t i) {
  return static_cast<int>(i % 10) + 1;
}

void live_panel(const std::string& title, const std::vector<PlotSeries>& series) {
  double ymax = 1;
  for (const PlotSeries& s : series)
    for (size_t b : s.live) ymax = std::max(ymax, static_cast<double>(b));
  const Unit u = byte_unit(ymax);
  pladv(1);
  plvpor(0.08, 0.72, 0.12, 0.88);
  plwind(0, 2, 0, ymax * u.scale * 1.05);
  plcol0(15);
  plbox("bcnst", 0.25, 0, "bcnstv", 0, 0);
  pllab("forward program (0 to 1), then backward program (1 to 2)",
        fmt::format("live ({})", u.name).c_str(), fmt::format("{}: bytes live", title).c_str());
  pllsty(2);
  pljoin(1, 0, 1, ymax * u.scale * 1.05);
  pllsty(1);
  plptex(1.01, ymax * u.scale * 1.0, 0, 0, 0, "backward starts");
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    std::vector<PLFLT> x, y;
    const size_t n = s.live.size(), fwd = s.boundary, bwd = n - s.boundary;
    for (size_t k = 0; k < n; ++k) {
      // Each eqn spans a step; draw it flat so a one-eqn program still shows.
      const double x0 =
          k < fwd
              ? static_cast<double>(k) / static_cast<double>(std::max<size_t>(fwd, 1))
              : 1 + static_cast<double>(k - fwd) / static_cast<double>(std::max<size_t>(bwd, 1));
      const double x1 =
          k < fwd ? static_cast<double>(k + 1) / static_cast<double>(std::max<size_t>(fwd, 1))
                  : 1 + static_cast<double>(k + 1 - fwd) /
                            static_cast<double>(std::max<size_t>(bwd, 1));
      x.push_back(x0);
      x.push_back(x1);
      y.push_back(static_cast<double>(s.live[k]) * u.scale);
      y.push_back(static_cast<double>(s.live[k]) * u.scale);
    }
    plcol0(colour(i));
    plwidth(1.5);
    if (!x.empty()) plline(static_cast<PLINT>(x.size()), x.data(), y.data());
  }
  plwidth(1);
  // The legend, right of the panel.
  const auto n = static_cast<PLINT>(series.size());
  std::vector<PLINT> opts(series.size(), PL_LEGEND_LINE), colours, styles(series.size(), 1),
      text_colours;
  std::vector<PLFLT> widths(series.size(), 2.0);
  std::vector<const char*> labels;
  for (size_t i = 0; i < series.size(); ++i) {
    colours.push_back(colour(i));
    text_colours.push_back(15);
    labels.push_back(series[i].label.c_str());
  }
  PLFLT w = 0, h = 0;
  pllegend(&w, &h, 0, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.01, 0, 0.05,
           0, 15, 1, 0, 0, n, opts.data(), 0.6, 0.7, 2.0, 0, text_colours.data(), labels.data(),
           nullptr, nullptr, nullptr, nullptr, colours.data(), styles.data(), widths.data(),
           nullptr, nullptr, nullptr, nullptr);
}

void pareto_panel(const std::vector<PlotSeries>& series,
                  const std::vector<FrontierPoint>& frontier) {
  double xmax = 1, ymax = 1, ymin = 1e300;
  for (const PlotSeries& s : series) {
    xmax = std::max(xmax, s.recompute_flops);
    ymax = std::max(ymax, static_cast<double>(s.peak));
    ymin = std::min(ymin, static_cast<double>(s.peak));
  }
  for (const FrontierPoint& f : frontier) {
    xmax = std::max(xmax, f.recompute_flops);
    ymax = std::max(ymax, static_cast<double>(f.peak));
    ymin = std::min(ymin, static_cast<double>(f.peak));
  }
  const Unit ux = flop_unit(xmax), uy = byte_unit(ymax);
  const double pad = std::max((ymax - ymin) * 0.1, ymax * 0.01);
  pladv(2);
  plvpor(0.08, 0.72, 0.12, 0.88);
  plwind(-xmax * ux.scale * 0.03, xmax * ux.scale * 1.05, (ymin - pad) * uy.scale,
         (ymax + pad) * uy.scale);
  plcol0(15);
  plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  pllab(fmt::format("recomputed in the backward program ({})", ux.name).c_str(),
        fmt::format("peak ({})", uy.name).c_str(), "peak memory vs recomputation");
  if (!frontier.empty()) {
    std::vector<PLFLT> x, y;
    for (const FrontierPoint& f : frontier) {  // a staircase: each point holds until the next
      if (!x.empty()) {
        x.push_back(f.recompute_flops * ux.scale);
        y.push_back(y.back());
      }
      x.push_back(f.recompute_flops * ux.scale);
      y.push_back(static_cast<double>(f.peak) * uy.scale);
    }
    plcol0(8);
    pllsty(3);
    plline(static_cast<PLINT>(x.size()), x.data(), y.data());
    pllsty(1);
    for (const FrontierPoint& f : frontier) {  // its corners: the save sets on the curve
      PLFLT px = f.recompute_flops * ux.scale, py = static_cast<double>(f.peak) * uy.scale;
      plssym(0, 0.8);
      plpoin(1, &px, &py, 4);
    }
    plptex(x.back(), y.back(), 1, 0, -0.05, "budget solver's curve");
  }
  for (size_t i = 0; i < series.size(); ++i) {
    PLFLT x = series[i].recompute_flops * ux.scale;
    PLFLT y = static_cast<double>(series[i].peak) * uy.scale;
    plcol0(colour(i));
    plssym(0, 1.6);
    plpoin(1, &x, &y, 17);
  }
}

}  // namespace
#endif

void write_memory_plot(const std::string& path, const std::string& title,
                       const std::vector<PlotSeries>& series,
                       const std::vector<FrontierPoint>& frontier) {
#ifdef CJAX_HAVE_PLPLOT
  // PLplot exits the process on a file it cannot open: check first.
  if (!std::ofstream(path)) throw UsageError(fmt::format("--plot: cannot write '{}'", path));
  PLINT stream = 0;
  plmkstrm(&stream);
  plsdev("svg");
  plsfnam(path.c_str());
  plspage(0, 0, 1100, 900, 0, 0);
  set_palette();
  plssub(1, 2);
  plinit();
  plschr(0, 0.75);
  live_panel(title, series);
  pareto_panel(series, frontier);
  plend1();
#else
  (void)path, (void)title, (void)series, (void)frontier;
  throw UnsupportedError("--plot: this cjax was built without PLplot (install libplplot-dev)");
#endif
}

}  // namespace cjax::cli
