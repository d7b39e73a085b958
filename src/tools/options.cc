// Option parsing shared by several subcommands.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <sstream>

#include "mlaspec/core/status.h"
#include "tools/commands.h"

namespace mlaspec::tools {

namespace {

// kv_dtypes_option's parse: the dtypes, or the reason the value is refused.
Result<std::vector<DType>> parse_kv_dtypes(const std::string& kv) {
  if (kv == "both") return std::vector<DType>{DType::kBF16, DType::kFP8E4M3};
  if (kv == "all") return std::vector<DType>{DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile};
  std::vector<DType> out;
  std::stringstream items(kv);
  for (std::string item; std::getline(items, item, ',');) {
    DType t;
    if (item == "bf16") {
      t = DType::kBF16;
    } else if (item == "fp8") {
      t = DType::kFP8E4M3;
    } else if (item == "fp8tile" || item == "fp8_tile") {
      t = DType::kFP8Tile;
    } else {
      const std::string in = item == kv ? "" : " in \"" + kv + "\"";
      return invalid_argument("\"" + item + "\" is not a KV dtype" + in +
                              " (expected bf16, fp8, fp8tile, a comma-separated list of them, "
                              "both = bf16,fp8, or all = bf16,fp8,fp8tile)");
    }
    if (std::find(out.begin(), out.end(), t) != out.end()) {
      return invalid_argument("\"" + kv + "\" names " + item + " twice");
    }
    out.push_back(t);
  }
  if (out.empty() || kv.back() == ',') {
    return invalid_argument("\"" + kv +
                            "\" has an empty item (expected bf16, fp8, fp8tile, a "
                            "comma-separated list of them, both or all)");
  }
  return out;
}

}  // namespace

std::vector<DType> kv_dtypes_option(const std::string& kv) {
  Result<std::vector<DType>> r = parse_kv_dtypes(kv);
  if (!r.ok()) throw Error(r.status().with_context("--kv"));
  return r.value();
}

void add_kv_dtypes_option(CLI::App& cmd, std::string* value, const std::string& help) {
  cmd.add_option("--kv", *value, help)
      ->check(
          [](const std::string& v) {
            Result<std::vector<DType>> r = parse_kv_dtypes(v);
            return r.ok() ? std::string() : r.status().message();
          },
          "KV dtypes")
      ->capture_default_str();
}

void add_verify_width_option(CLI::App& cmd, std::string* value) {
  cmd.add_option("--verify-width", *value,
                 "With --draft dspark: fixed (verify every draft) or adaptive (per request and "
                 "step, the widths with the most expected tokens per verify cost from the "
                 "confidences and the batch; docs/dspark.md)")
      ->check(CLI::IsMember({"fixed", "adaptive"}))
      ->capture_default_str();
}

spec::VerifyWidthPolicy::Mode verify_width_mode(const std::string& value) {
  return value == "adaptive" ? spec::VerifyWidthPolicy::Mode::kAdaptive
                             : spec::VerifyWidthPolicy::Mode::kFixed;
}

CLI::Option* add_num_draft_option(CLI::App& cmd, int* value) {
  return cmd
      .add_option("--num-draft", *value,
                  "Drafts per verify step (verify q_len - 1); dflash / dspark: at most the "
                  "checkpoint's block (the default is lowered to it, a larger value given is an "
                  "error)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
}

Status check_drafter_options(const std::string& draft, bool draft_model_given,
                             const std::string& verify_width, int num_draft) {
  if (verify_width == "adaptive" && draft != "dspark") {
    return invalid_argument(
        "--verify-width adaptive needs --draft dspark (its confidence head "
        "chooses the widths); --draft " +
        draft + " verifies every draft");
  }
  if (draft_model_given && (draft == "ngram" || draft == "none")) {
    return invalid_argument("--draft-model is for --draft dflash or dspark; --draft " + draft +
                            " reads no drafter checkpoint");
  }
  if (num_draft < 1 && draft != "none") {
    return invalid_argument("--num-draft " + std::to_string(num_draft) +
                            " drafts nothing, so --draft " + draft +
                            " would go unused: use --draft none for plain decoding");
  }
  return Status::Ok();
}

}  // namespace mlaspec::tools
