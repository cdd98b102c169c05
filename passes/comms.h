// What a program sends between processes, read from the program (`cjax comms`): every collective
// of every shard_map body, and the gathering of each shard_map output, with the bytes one process
// sends per call under the usual algorithms (docs/distributed.md):
//
//   psum, pmax, pmin   ring all-reduce          2 (n - 1) / n x operand bytes
//   all_gather         ring                     (n - 1) x operand bytes
//   reduce_scatter     ring                     (n - 1) / n x operand bytes
//   all_to_all         pairwise                 (n - 1) / n x operand bytes
//   ppermute           one send                 operand bytes, if the process sends
//   shard_map output   all_gather of its block  (n - 1) x block bytes
//
// n is the size of the group: the product of the named mesh axes' sizes. A collective in a scan's
// body counts once per iteration; in a while loop's, once (its trip count is not in the program);
// in a cond's branches, the largest branch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct CommsEntry {
  std::string what;               // "psum", "all_gather", ..., "shard_map output 0"
  std::vector<std::string> axes;  // the mesh axes it runs over
  int64_t group = 1;              // processes in its group
  ShapedArray operand;            // one process's operand (for an output: its block)
  int64_t calls = 1;              // per run of the program
  int64_t bytes_per_call = 0;     // one process sends
  std::string source;             // where the user's code bound it
};

struct CommsReport {
  std::vector<CommsEntry> entries;
  int64_t total_bytes() const;  // per process, per run of the program
  // The bytes sent per run by each kind of collective ("all_gather", ...; the gathering of the
  // outputs as "shard_map outputs"), in the order of their first entries.
  std::vector<std::pair<std::string, int64_t>> bytes_by_collective() const;
};

// `outputs_gathered` false: each shard_map's outputs stay blocks on their processes, as
// ShardMapped::on_blocks returns them, so gathering them sends nothing.
CommsReport comms_report(const Jaxpr& jaxpr, bool outputs_gathered = true);

// The table `cjax comms` prints.
std::string format_comms(const CommsReport& report);

}  // namespace cjax
