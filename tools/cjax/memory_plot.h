// `cjax memory --plot FILE.svg`: the memory report as a picture, drawn with PLplot's SVG driver.
// Top: bytes live over the training step for each policy (the forward program scaled to [0, 1],
// the backward to [1, 2], the boundary marked). Bottom: peak bytes against recomputed FLOPs for
// each policy, and the trade-off curve the budget solver found.
#pragma once

#include <string>
#include <vector>

namespace cjax::cli {

struct PlotSeries {
  std::string label;
  std::vector<size_t> live;  // bytes live during each eqn: forward, then backward
  size_t boundary = 0;       // index of the first backward eqn
  size_t peak = 0;
  double recompute_flops = 0;
};

struct FrontierPoint {
  double recompute_flops = 0;
  size_t peak = 0;
};

// Throws cjax::UsageError when `path` cannot be written, cjax::UnsupportedError when cjax was
// built without PLplot.
void write_memory_plot(const std::string& path, const std::string& title,
                       const std::vector<PlotSeries>& series,
                       const std::vector<FrontierPoint>& frontier);

}  // namespace cjax::cli
