// The DSpark drafter's heads over the DFlash backbone (include/mlaspec/model/dspark.h; the
// reference is python/dspark/model.py).
#include "mlaspec/model/dspark.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "layers.h"
#include "tensor_loader.h"

namespace mlaspec::model {
namespace {

using nlohmann::json;

std::string str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

std::string DSparkConfig::describe() const {
  std::string d = backbone.describe();
  d.replace(0, 6, "dspark");  // "dflash: ..." -> "dspark: ..."
  return d + ", gamma " + str(gamma()) + ", markov_rank " + str(markov_rank) +
         ", confidence_head " + (confidence_head ? "yes" : "no");
}

Result<DSparkConfig> parse_dspark_config(std::string_view json_text, std::string_view source) {
  const std::string src(source);
  Result<DFlashConfig> backbone = parse_dflash_config(json_text, source);
  if (!backbone.ok()) return backbone.status();
  DSparkConfig c;
  c.backbone = std::move(*backbone);
  if (c.backbone.model_type != "dspark") {
    return invalid_argument(src + ": key \"model_type\" = \"" + c.backbone.model_type +
                            "\" is not a DSpark drafter (expected \"dspark\")");
  }
  const json root = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (!root.contains("markov_rank") || !root.at("markov_rank").is_number_integer()) {
    return invalid_argument(src + ": key \"markov_rank\" must be an integer (0: no Markov head)" +
                            (root.contains("markov_rank") ? ", got " + root.at("markov_rank").dump()
                                                          : std::string(", it is missing")));
  }
  const int64_t rank = root.at("markov_rank").get<int64_t>();
  if (rank < 0 || rank > c.backbone.vocab_size) {
    return invalid_argument(src + ": key \"markov_rank\" = " + str(rank) +
                            " is out of range [0, vocab_size " + str(c.backbone.vocab_size) + "]");
  }
  c.markov_rank = static_cast<int>(rank);
  if (!root.contains("confidence_head") || !root.at("confidence_head").is_boolean()) {
    return invalid_argument(src + ": key \"confidence_head\" must be true or false" +
                            (root.contains("confidence_head")
                                 ? ", got " + root.at("confidence_head").dump()
                                 : std::string(", it is missing")));
  }
  c.confidence_head = root.at("confidence_head").get<bool>();
  if (root.contains("gamma") && !root.at("gamma").is_null()) {
    const json& g = root.at("gamma");
    if (!g.is_number_integer() || g.get<int64_t>() != c.gamma()) {
      return invalid_argument(src + ": key \"gamma\" = " + g.dump() + " must equal block_size " +
                              str(c.backbone.block_size) + " - 1 = " + str(c.gamma()) +
                              " (gamma counts the drafts, block_size the anchor too)");
    }
  }
  return c;
}

Result<DSparkConfig> load_dspark_config(const std::filesystem::path& path) {
  std::string text, file;
  MLASPEC_RETURN_IF_ERROR(read_config_file(path, &text, &file));
  return parse_dspark_config(text, file);
}

Result<DSparkHeads> load_dspark_heads(const DSparkConfig& c, const Checkpoint& ckpt) {
  TensorLoader ld(ckpt);
  DSparkHeads h;
  const int64_t vocab = c.backbone.vocab_size;
  if (c.markov_rank > 0) {
    MLASPEC_RETURN_IF_ERROR(ld.matrix("markov.w1", vocab, c.markov_rank, &h.markov_w1));
    MLASPEC_RETURN_IF_ERROR(ld.matrix("markov.w2", vocab, c.markov_rank, &h.markov_w2));
  }
  if (c.confidence_head) {
    Matrix w;
    MLASPEC_RETURN_IF_ERROR(ld.matrix("confidence.weight", 1, c.backbone.hidden_size, &w));
    h.confidence_weight = std::move(w.data);
    std::vector<float> b;
    MLASPEC_RETURN_IF_ERROR(ld.vector("confidence.bias", 1, &b));
    h.confidence_bias = b[0];
  }
  // The backbone's tensors are DFlash's loader's; any other markov.* / confidence.* is left over.
  for (const auto& [name, t] : ckpt.tensors()) {
    const bool head = name.starts_with("markov.") || name.starts_with("confidence.");
    const bool taken =
        (c.markov_rank > 0 && (name == "markov.w1" || name == "markov.w2")) ||
        (c.confidence_head && (name == "confidence.weight" || name == "confidence.bias"));
    if (head && !taken) {
      return data_loss(t->describe() + ": unexpected tensor (config.json has markov_rank " +
                       str(c.markov_rank) + ", confidence_head " +
                       (c.confidence_head ? "true" : "false") + ")");
    }
  }
  return h;
}

Result<DSparkNetwork> DSparkNetwork::load(const std::filesystem::path& dir, const Model& target,
                                          const DFlashOptions& options) {
  Result<DSparkConfig> config = load_dspark_config(dir);
  if (!config.ok()) return config.status();
  Result<DFlashNetwork> backbone = DFlashNetwork::load(dir, target, options);
  if (!backbone.ok()) return backbone.status();
  Result<Checkpoint> ckpt = Checkpoint::open(dir);
  if (!ckpt.ok()) return ckpt.status();
  Result<DSparkHeads> heads = load_dspark_heads(*config, *ckpt);
  if (!heads.ok()) return heads.status();
  return DSparkNetwork{std::move(*config), std::move(*heads), std::move(*backbone)};
}

void DSparkHeads::add_markov_bias(int32_t prev, std::span<float> logits) const {
  if (markov_w1.empty()) return;
  std::vector<float> bias(logits.size());
  cpu::linear(markov_w1.row(prev), 1, markov_w2, bias.data());
  for (size_t v = 0; v < logits.size(); ++v) logits[v] += bias[v];
}

std::vector<float> DSparkHeads::confidences(std::span<const float> hidden,
                                            int64_t hidden_size) const {
  const size_t slots = hidden.size() / static_cast<size_t>(hidden_size);
  std::vector<float> c(slots, 1.0f);
  if (confidence_weight.empty()) return c;
  for (size_t k = 0; k < slots; ++k) {
    const float* h = hidden.data() + k * hidden_size;
    double s = confidence_bias;
    for (int64_t e = 0; e < hidden_size; ++e) s += double{confidence_weight[e]} * h[e];
    c[k] = static_cast<float>(1.0 / (1.0 + std::exp(-s)));
  }
  return c;
}

std::vector<float> DSparkNetwork::confidences(const DFlashBlock& block) const {
  return heads.confidences(block.hidden, config.backbone.hidden_size);
}

std::vector<float> DSparkNetwork::slot_logits(const DFlashBlock& block,
                                              std::span<const int32_t> chosen) const {
  const size_t vocab = static_cast<size_t>(config.backbone.vocab_size);
  std::vector<float> out = block.logits;
  for (int k = 0; k < gamma(); ++k) {
    const int32_t prev = k == 0 ? block.anchor : chosen[static_cast<size_t>(k - 1)];
    heads.add_markov_bias(prev, std::span<float>(out.data() + k * vocab, vocab));
  }
  return out;
}

}  // namespace mlaspec::model
