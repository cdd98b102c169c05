// Registers the rules of `shard_map` eqns (jvp, partial eval, transpose, batching), as JAX's
// shard_map defines them with check_vma=False, so that a function calling shard_map can itself
// be differentiated and vmapped.
#pragma once

namespace cjax {

void register_shard_map_rules();

}  // namespace cjax
