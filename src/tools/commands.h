// Each `mlaspec` subcommand lives in its own cmd_<name>.cc and registers itself on the app.
#pragma once

#include <string>
#include <vector>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/spec/verify_width.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

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

// The KV dtypes of a `--kv` option, in the order given: one of bf16, fp8, fp8tile (or fp8_tile),
// a comma-separated list of them (bf16,fp8tile), both (bf16,fp8) or all (bf16,fp8,fp8tile).
// Anything else, or a dtype named twice, throws mlaspec::Error (invalid_argument) naming the value.
// Commands that take one dtype restrict the option to single names before this is called.
std::vector<DType> kv_dtypes_option(const std::string& kv);
// `--kv DTYPES` (the list syntax above) on `cmd`, into `value`, checked by the option parser so a
// bad value is refused before anything runs ("--kv: ...").
void add_kv_dtypes_option(CLI::App& cmd, std::string* value, const std::string& help);

// `--verify-width fixed|adaptive` on `cmd` (generate, eval, serve: DSpark's width policy, into
// `value`, default fixed), and the mode it names.
void add_verify_width_option(CLI::App& cmd, std::string* value);
spec::VerifyWidthPolicy::Mode verify_width_mode(const std::string& value);

// generate, eval and serve: the drafter options checked together, before anything loads. An
// option the chosen drafter would not read is refused by name rather than ignored:
// --verify-width adaptive without dspark, --draft-model (given) with ngram or none, and
// --num-draft 0 with a drafter (it would draft nothing).
// `--num-draft N` (generate, eval, serve: drafts per verify step, 0..64, into `value`).
CLI::Option* add_num_draft_option(CLI::App& cmd, int* value);
Status check_drafter_options(const std::string& draft, bool draft_model_given,
                             const std::string& verify_width, int num_draft);

}  // namespace mlaspec::tools
