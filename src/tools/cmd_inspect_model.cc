// `mlaspec inspect-model DIR`: a checkpoint as mlaspec reads it — the config, parameters and bytes
// by dtype (from the safetensors headers, nothing converted), the MoE layers, the softmax scale,
// and what each part runs on here. --load also loads every weight as the forward does.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "mlaspec/attention/registry.h"
#include "mlaspec/model/config.h"
#include "mlaspec/model/model.h"
#include "mlaspec/model/safetensors.h"
#include "tools/commands.h"

namespace mlaspec::tools {
namespace {

struct InspectModelCli {
  std::string dir;
  bool load = false;
};

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char s[32];
  std::snprintf(s, sizeof s, u ? "%.2f %s" : "%.0f %s", b, units[u]);
  return s;
}

// The attention dispatcher's pick for a decode and a verify step of this model on this machine.
std::string attention_pick(const model::ModelConfig& c, int q_len, DType kv) {
  attn::DispatchSetupOptions o;
  o.log_warnings = false;
  auto setup = attn::make_dispatch(o);
  if (!setup.ok()) return setup.status().to_string();
  attn::VerifyShape s;
  s.batch = 1;
  s.q_len = q_len;
  s.num_heads = c.num_attention_heads;
  s.page_size = 64;
  s.kv_dtype = kv;
  s.max_seq_len = s.total_kv = 4096;
  s.deterministic = true;
  attn::SelectOptions so;
  so.quiet = true;
  auto d = setup.value().dispatcher->select(s, so);
  if (!d.ok()) return "none: " + d.status().message();
  return std::string(d.value().backend) + " (" + d.value().reason + ")";
}

void run_inspect_model(const InspectModelCli& cli) {
  const model::ModelConfig c = model::load_model_config(cli.dir).value();
  const model::Checkpoint ckpt = model::Checkpoint::open(cli.dir).value();

  int64_t params = 0, mtp_params = 0, scale_params = 0;
  std::map<std::string, int64_t> bytes;
  int64_t total = 0;
  for (const auto& [name, t] : ckpt.tensors()) {
    bytes[std::string(model::st_dtype_name(t->dtype))] += static_cast<int64_t>(t->bytes.size());
    total += static_cast<int64_t>(t->bytes.size());
    // model.layers.{i >= num_hidden_layers}.*: the MTP modules.
    const bool mtp =
        name.starts_with("model.layers.") && std::atoi(name.c_str() + 13) >= c.num_hidden_layers;
    if (name.ends_with("_scale_inv")) {
      scale_params += t->numel;
    } else if (mtp) {
      mtp_params += t->numel;
    } else {
      params += t->numel;
    }
  }

  std::printf("mlaspec inspect-model %s\n\n%s\n", cli.dir.c_str(), c.describe().c_str());
  std::printf("\nparameters: %lld (%.3f B)", static_cast<long long>(params), params / 1e9);
  if (mtp_params)
    std::printf(" + %lld in MTP modules (not run)", static_cast<long long>(mtp_params));
  if (scale_params) std::printf(" + %lld fp8 block scales", static_cast<long long>(scale_params));
  std::printf("\nfiles: %zu, %zu tensors, %s\n", ckpt.files().size(), ckpt.tensors().size(),
              human_bytes(static_cast<double>(total)).c_str());
  for (const auto& [dtype, b] : bytes) {
    std::printf("  %-8s %s\n", dtype.c_str(), human_bytes(static_cast<double>(b)).c_str());
  }

  std::printf("\nlayers:");
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    if (l % 16 == 0) std::printf("\n  ");
    std::printf("%d:%s ", l, c.is_moe_layer(l) ? "moe" : "mlp");
  }
  std::printf("\n\nsoftmax scale: %.9g (qk_head_dim %d", c.softmax_scale(), c.qk_head_dim());
  if (c.rope.type == model::RopeConfig::Type::kYarn && c.rope.mscale_all_dim != 0.0) {
    std::printf(", x YaRN mscale^2 %.9g",
                std::pow(model::yarn_get_mscale(c.rope.factor, c.rope.mscale_all_dim), 2));
  }
  std::printf(")\n");

  std::printf("\nruns here on:\n");
  std::printf("  weights      f32 on the CPU (converted at load%s)\n",
              c.fp8.enabled ? "; fp8 blocks dequantized" : "");
  std::printf("  projections  CPU, CBLAS sgemm (OpenBLAS)\n");
  std::printf("  MoE          CPU: router in f32, tokens grouped per expert, one GEMM each\n");
  std::printf("  attention    decode (q=1, S=4096, bf16 KV): %s\n",
              attention_pick(c, 1, DType::kBF16).c_str());
  std::printf("               verify (q=8, S=4096, fp8 KV):  %s\n",
              attention_pick(c, 8, DType::kFP8E4M3).c_str());
  const long long kv_fp8 = 576LL * c.num_hidden_layers;
  std::printf("  KV cache     %lld bytes per token (bf16), %lld (fp8), %lld (fp8tile)\n",
              2 * kv_fp8, kv_fp8, 656LL * c.num_hidden_layers);

  if (cli.load) {
    model::LoadOptions o;
    model::Model m = model::Model::load(cli.dir, o).value();
    std::printf("\nloaded: %lld parameters converted to f32, every tensor checked\n",
                static_cast<long long>(m.weights().report.parameters));
  }
}

}  // namespace

void add_inspect_model_command(CLI::App& app) {
  auto cli = std::make_shared<InspectModelCli>();
  CLI::App* cmd = app.add_subcommand(
      "inspect-model",
      "Show a DeepSeek-V3-family checkpoint as mlaspec reads it: the config, parameters and bytes "
      "by dtype, MoE layers, the softmax scale, and what each part runs on here.");
  cmd->add_option("dir", cli->dir, "model directory (config.json + safetensors)")->required();
  cmd->add_flag("--load", cli->load,
                "also load every weight as the forward does (f32; needs 4 bytes per parameter)");
  cmd->callback([cli]() { run_inspect_model(*cli); });
}

}  // namespace mlaspec::tools
