// models/gpt trained on several processes (mpirun), each one device of a one-axis mesh, the step
// a shard_map run on process-local blocks (ShardMapped::on_blocks):
//
//   data parallel  every process holds the whole weights and optimizer state, takes its rows of
//                  the batch, and the gradients are pmean-ed: every process makes the same update.
//   FSDP           every weight and moment is split along its last dimension (scalars whole): a
//                  process holds 1/n of the model and of its optimizer state. The model gathers
//                  each weight where it is used (GptConfig::fsdp_axis), the gradient of that
//                  gather is a psum_scatter, so each process gets its block of the whole batch's
//                  gradient; the clipping norm is psum-ed over the mesh.
//
// The batch's rows are split over the processes in both; the loss returned is the whole batch's.
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "cjax/cjax.h"
#include "models/gpt/train.h"

namespace cjax::models::gpt {

enum class Parallelism { data, fsdp };
// "data" or "fsdp"; throws cjax::UsageError naming both otherwise.
Parallelism parallelism_by_name(const std::string& name);

// How each leaf of the train state is held: its spec over the mesh axis `axis` (data parallel:
// P() for every leaf; FSDP: P(None, ..., axis) splitting the last dimension, P() for scalars).
std::vector<PartitionSpec> state_specs(const std::vector<Array>& leaves, Parallelism mode,
                                       const std::string& axis);

struct ShardedTraining {
  GptConfig config;  // with fsdp_axis set under FSDP
  optim::GradientTransformation opt;
  Mesh mesh;
  Parallelism mode;
  std::string axis;

  // Every process's own part of `whole` (each process made `whole` from the same key).
  TrainState shard(const TrainState& whole) const;
  // The whole state from every process's part (a collective: every process calls it).
  TrainState gather(const TrainState& part) const;
  // One step on this process's part of the state and its rows of the batch (tokens and labels
  // i32[batch / processes, T]); returns the whole batch's loss, the same on every process. The
  // old part is donated to the step (its Arrays deleted), as make_train_step's state is.
  float step(TrainState& part, const Array& tokens, const Array& labels,
             const Array& dropout_key) const;
  // The step as one shard_map eqn over whole arrays (make_jaxpr's), whose body is the program
  // `step` runs on each process: what `cjax comms` reads.
  Jaxpr step_jaxpr(const TrainState& whole, int64_t batch) const;

  using StepFn = std::function<std::tuple<GptParams, optim::OptState, Array>(
      const GptParams&, const optim::OptState&, const Array&, const Array&, const Array&)>;
  StepFn on_blocks, on_whole;  // the shard_map's on_blocks, and the shard_map itself
};

// The training of `config` with `options` over a mesh of every process, along one axis "x".
// Throws cjax::UsageError when the batch or (FSDP) d_model and the vocabulary do not divide by
// the number of processes.
ShardedTraining make_sharded_training(GptConfig config, const TrainOptions& options,
                                      Parallelism mode);

}  // namespace cjax::models::gpt
