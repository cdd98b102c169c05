// Exit codes of the cjax CLI, documented in docs/cli.md.
#pragma once

namespace cjax::cli {

enum ExitCode : int {
  kOk = 0,
  // The input is wrong or asks for what cjax does not support: malformed or ill-typed jaxpr text
  // or JSON, a failing plugin, a malformed .npy file, inputs of the wrong shape, an unsupported
  // primitive.
  kUserError = 1,
  kUsage = 2,     // unknown subcommand, option, example, function or file; a bad option value
  kInternal = 3,  // a bug in cjax
};

}  // namespace cjax::cli
