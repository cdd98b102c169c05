// The training curve of models/gpt as a small self-contained SVG: the training loss per step, the
// validation loss where it was measured, and reference lines (ln(vocab), the 1.5 nats/char goal).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cjax::models::gpt {

struct CurvePoint {
  int64_t step;
  double loss;
};

struct TrainingCurve {
  std::string title;
  std::vector<CurvePoint> train, validation;
  std::vector<std::pair<double, std::string>> reference_lines;  // (loss, label)
};

std::string curve_svg(const TrainingCurve& curve);
// "step,train_loss,validation_loss" rows (validation empty where not measured).
std::string curve_csv(const TrainingCurve& curve);

}  // namespace cjax::models::gpt
