// Input values for `cjax grad` and `cjax run`: fill values, .npy files or seeded random arrays;
// and writing results as .npy files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"

namespace cjax::cli {

// Integers drawn from a seed lie in [0, kDefaultIntHigh) unless --int-high says otherwise: valid
// indices (token ids, labels) for any dimension of at least 10.
inline constexpr int64_t kDefaultIntHigh = 10;

struct InputOptions {
  // --inputs: one item per argument, a number (an array filled with it) or a .npy file.
  std::vector<std::string> items;
  std::optional<uint64_t> seed;        // --seed: reproducible random arrays
  int64_t int_low = 0;                 // --int-range lo,hi: seeded integers in [lo, hi)
  int64_t int_high = kDefaultIntHigh;  // --int-high: seeded integers in [0, int_high)
};

// The input options as the command line gives them, before input_options() reads them.
struct InputArgs {
  std::vector<std::string> items;
  std::optional<std::string> seed, int_high, int_range;
};

// Reads and checks the input options; cjax::UsageError for --inputs with --seed (both choose the
// inputs), a seed that is not an integer from 0 to 2^64-1, an --int-high or --int-range without
// --seed, an --int-high outside [1, 2^31], an --int-range that is not `lo,hi` with
// -2^31 <= lo < hi <= 2^31, and both of them.
InputOptions input_options(const InputArgs& args);

// The arguments' values: --inputs, else --seed, else `defaults` (an example's own inputs), else
// ones. `--inputs DIR` or `--inputs FILE.npz` reads every argument by name (DIR/<name>.npy, or the
// archive's entry <name>: `params.layers.W1`). Checks each array's dtype and shape against the
// argument's; a seeded integer argument whose dtype cannot hold the range is a UsageError.
std::vector<runtime::Buffer> make_inputs(const Jaxpr& jaxpr,
                                         const std::vector<std::string>& arg_names,
                                         const InputOptions& opts,
                                         std::vector<runtime::Buffer> defaults);

// Writes `values[i]` to DIR/<file_stem(names[i])>.npy, creating DIR; returns the paths.
std::vector<std::string> write_npy_files(const std::string& dir,
                                         const std::vector<std::string>& names,
                                         const std::vector<runtime::Buffer>& values);

// A name as a file stem: `params[0]` -> `params_0`, `opt['w']` -> `opt_w`.
std::string file_stem(const std::string& name);

}  // namespace cjax::cli
