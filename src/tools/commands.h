// Each `mlaspec` subcommand lives in its own cmd_<name>.cc and registers itself on the app.
#pragma once

#include <string>
#include <vector>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/spec/verify_width.h"

namespace CLI {
class App;
}

namespace mlaspec::tools {

// Each adds its subcommand (with --help text and a callback) to `app`. A callback reports
// failure by throwing mlaspec::Error; main() prints it and exits non-zero.
void add_bench_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_dcp_command(CLI::App& app);
void add_inspect_model_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_bench_serve_command(CLI::App& app);
// model-logits and bench-model (cmd_model.cc).
void add_model_commands(CLI::App& app);

// Bad user input (a missing model directory, an empty prompt, a limit exceeded): main() prints it
// and exits with code 2 (other errors: 1).
class InputError : public Error {
 public:
  using Error::Error;
};

// The KV dtypes of a `--kv bf16|fp8|both` option; anything else throws mlaspec::Error naming the
// value.
std::vector<DType> kv_dtypes_option(const std::string& kv);

// `--verify-width fixed|adaptive` on `cmd` (generate, eval, serve: DSpark's width policy, into
// `value`, default fixed), and the mode it names.
void add_verify_width_option(CLI::App& cmd, std::string* value);
spec::VerifyWidthPolicy::Mode verify_width_mode(const std::string& value);

}  // namespace mlaspec::tools
