// mlaspec: the command line. Each subcommand lives in cmd_<name>.cc.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "mlaspec/core/status.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "mlaspec: speculative decoding on MLA models (DeepSeek-V2/V3, Kimi-K2).\n"
      "Verify-attention backends, their benchmarks and their dispatch.",
      "mlaspec"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "mlaspec 0.1.0");
  mlaspec::tools::add_bench_command(app);
  mlaspec::tools::add_inspect_command(app);
  mlaspec::tools::add_calibrate_command(app);
  mlaspec::tools::add_dcp_command(app);
  mlaspec::tools::add_inspect_model_command(app);
  mlaspec::tools::add_tokenize_command(app);
  mlaspec::tools::add_generate_command(app);
  mlaspec::tools::add_eval_command(app);
  mlaspec::tools::add_serve_command(app);
  mlaspec::tools::add_bench_serve_command(app);
  mlaspec::tools::add_model_commands(app);
  // CLI11 reports an unknown first word only as a missing subcommand: name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      found |= sub->check_name(argv[1]);
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::fprintf(stderr, "mlaspec: error: unknown subcommand \"%s\" (subcommands: %s)\n", argv[1],
                   known.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every refused command line exits 2, like mlaspec's own input
    // errors (CLI11's own codes, 105-115, would tell a script nothing more).
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const mlaspec::tools::InputError& e) {
    std::fprintf(stderr, "mlaspec: error: %s\n", e.what());
    return 2;
  } catch (const mlaspec::Error& e) {
    std::fprintf(stderr, "mlaspec: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlaspec: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
