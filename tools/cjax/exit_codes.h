// Exit codes of the cjax CLI, documented in docs/cli.md.
#pragma once

namespace cjax::cli {

enum ExitCode : int {
  kOk = 0,
  kBadInput = 1,     // the jaxpr text, the example's program or the inputs are invalid
  kUsage = 2,        // unknown subcommand, option or example name
  kUnsupported = 3,  // valid input that uses something cjax does not support yet
  kInternal = 4,     // a bug in cjax
};

}  // namespace cjax::cli
