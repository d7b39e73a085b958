// The DFlash block drafter: config.json, weights, and its CPU forward over the drafter's KV pool
// (include/mlaspec/model/dflash.h; the reference is python/dflash/model.py).
#include "mlaspec/model/dflash.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cuda/dflash_runtime.h"
#include "layers.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/core/parallel.h"
#include "mlaspec/kvcache/writer.h"
#include "mlaspec/model/model.h"
#include "row_invariant_gemm.h"
#include "tensor_loader.h"

namespace mlaspec::model {
namespace {

using nlohmann::json;

std::string str(int64_t v) {
  return std::to_string(v);
}

// ---- config.json ----------------------------------------------------------------------------

Status read_int(const json& root, const std::string& src, const char* key, int64_t lo, int64_t hi,
                int64_t* out, bool required = true) {
  if (!root.contains(key) || root.at(key).is_null()) {
    if (required) return invalid_argument(src + ": key \"" + key + "\" is missing");
    return Status::Ok();
  }
  const json& v = root.at(key);
  if (!v.is_number_integer()) {
    return invalid_argument(src + ": key \"" + key + "\" = " + v.dump() + " is not an integer");
  }
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    return invalid_argument(src + ": key \"" + key + "\" = " + str(x) + " is out of range [" +
                            str(lo) + ", " + str(hi) + "]");
  }
  *out = x;
  return Status::Ok();
}

Status read_int(const json& root, const std::string& src, const char* key, int64_t lo, int64_t hi,
                int* out) {
  int64_t v = 0;
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, key, lo, hi, &v));
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status read_positive_double(const json& root, const std::string& src, const char* key,
                            double* out) {
  if (!root.contains(key) || root.at(key).is_null()) return Status::Ok();
  const json& v = root.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
    return invalid_argument(src + ": key \"" + key + "\" = " + v.dump() +
                            " is not a finite number > 0");
  }
  *out = v.get<double>();
  return Status::Ok();
}

// RoPE's scratch in cpu::Rope::apply holds 256 values.
constexpr int kMaxHeadDim = 256;
constexpr int64_t kMaxDim = 1 << 20;

}  // namespace

std::string DFlashConfig::describe() const {
  std::ostringstream o;
  o << "dflash: " << num_hidden_layers << " layers, hidden " << hidden_size << ", heads "
    << num_attention_heads << " (kv " << num_key_value_heads << ") x " << head_dim
    << ", intermediate " << intermediate_size << ", block_size " << block_size << " (num_draft "
    << num_draft() << "), target layers [";
  for (size_t i = 0; i < target_layer_ids.size(); ++i) o << (i ? ", " : "") << target_layer_ids[i];
  o << "], mask token " << mask_token_id << ", rope_theta " << rope_theta << ", sliding_window "
    << (sliding_window > 0 ? str(sliding_window) : std::string("none"));
  return o.str();
}

Result<DFlashConfig> parse_dflash_config(std::string_view json_text, std::string_view source) {
  const std::string src(source);
  const json root = json::parse(json_text.begin(), json_text.end(), nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return data_loss(src + ": not valid JSON");
  if (!root.is_object()) return data_loss(src + ": the top level is not a JSON object");
  DFlashConfig c;
  if (root.contains("model_type")) {
    const json& t = root.at("model_type");
    // A DSpark drafter (model/dspark.h) is a DFlash backbone plus heads.
    if (!t.is_string() || (t.get<std::string>() != "dflash" && t.get<std::string>() != "dspark")) {
      return invalid_argument(src + ": key \"model_type\" = " + t.dump() +
                              " is not a DFlash drafter (expected \"dflash\" or \"dspark\")");
    }
    c.model_type = t.get<std::string>();
  }
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, "hidden_size", 1, kMaxDim, &c.hidden_size));
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, "num_hidden_layers", 1, 1024, &c.num_hidden_layers));
  MLASPEC_RETURN_IF_ERROR(
      read_int(root, src, "num_attention_heads", 1, 4096, &c.num_attention_heads));
  MLASPEC_RETURN_IF_ERROR(
      read_int(root, src, "num_key_value_heads", 1, 4096, &c.num_key_value_heads));
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, "head_dim", 2, kMaxHeadDim, &c.head_dim));
  MLASPEC_RETURN_IF_ERROR(
      read_int(root, src, "intermediate_size", 1, kMaxDim, &c.intermediate_size));
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, "vocab_size", 1, int64_t{1} << 30, &c.vocab_size));
  MLASPEC_RETURN_IF_ERROR(
      read_int(root, src, "target_hidden_size", 1, kMaxDim, &c.target_hidden_size));
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, "block_size", 2, 1024, &c.block_size));
  MLASPEC_RETURN_IF_ERROR(
      read_int(root, src, "mask_token_id", 0, int64_t{c.vocab_size} - 1, &c.mask_token_id));
  MLASPEC_RETURN_IF_ERROR(read_positive_double(root, src, "rms_norm_eps", &c.rms_norm_eps));
  MLASPEC_RETURN_IF_ERROR(read_positive_double(root, src, "rope_theta", &c.rope_theta));
  MLASPEC_RETURN_IF_ERROR(read_int(root, src, "sliding_window", 1,
                                   std::numeric_limits<int32_t>::max(), &c.sliding_window,
                                   /*required=*/false));
  if (!root.contains("target_layer_ids") || !root.at("target_layer_ids").is_array() ||
      root.at("target_layer_ids").empty()) {
    return invalid_argument(src + ": key \"target_layer_ids\" must be a non-empty list of layers");
  }
  for (const json& v : root.at("target_layer_ids")) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 4096) {
      return invalid_argument(src + ": key \"target_layer_ids\" holds " + v.dump() +
                              ", not a layer index >= 0");
    }
    c.target_layer_ids.push_back(v.get<int>());
  }
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    return invalid_argument(src + ": num_attention_heads " + str(c.num_attention_heads) +
                            " is not a multiple of num_key_value_heads " +
                            str(c.num_key_value_heads));
  }
  if (c.head_dim % 2 != 0) {
    return invalid_argument(src + ": head_dim " + str(c.head_dim) + " must be even (RoPE pairs)");
  }
  if (c.hidden_size != c.target_hidden_size) {
    return invalid_argument(src + ": hidden_size " + str(c.hidden_size) +
                            " != target_hidden_size " + str(c.target_hidden_size) +
                            ": the drafter shares the target's embedding and lm_head, so they "
                            "must be equal");
  }
  return c;
}

Result<DFlashConfig> load_dflash_config(const std::filesystem::path& path) {
  std::string text, file;
  MLASPEC_RETURN_IF_ERROR(read_config_file(path, &text, &file));
  return parse_dflash_config(text, file);
}

// ---- weights ------------------------------------------------------------------------------------

Result<DFlashWeights> load_dflash_weights(const DFlashConfig& c, const Checkpoint& ckpt) {
  TensorLoader ld(ckpt);
  DFlashWeights w;
  const int64_t hidden = c.hidden_size, hd = c.head_dim, inter = c.intermediate_size;
  w.layers.resize(static_cast<size_t>(c.num_hidden_layers));
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    DFlashLayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = "layers." + str(i) + ".";
    const std::string a = p + "self_attn.";
    MLASPEC_RETURN_IF_ERROR(ld.vector(p + "input_layernorm.weight", hidden, &l.input_layernorm));
    MLASPEC_RETURN_IF_ERROR(
        ld.vector(p + "post_attention_layernorm.weight", hidden, &l.post_attention_layernorm));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(a + "q_proj.weight", c.q_width(), hidden, &l.q_proj));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(a + "k_proj.weight", c.kv_width(), hidden, &l.k_proj));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(a + "v_proj.weight", c.kv_width(), hidden, &l.v_proj));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(a + "o_proj.weight", hidden, c.q_width(), &l.o_proj));
    MLASPEC_RETURN_IF_ERROR(ld.vector(a + "q_norm.weight", hd, &l.q_norm));
    MLASPEC_RETURN_IF_ERROR(ld.vector(a + "k_norm.weight", hd, &l.k_norm));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(p + "mlp.gate_proj.weight", inter, hidden, &l.mlp.gate_proj));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(p + "mlp.up_proj.weight", inter, hidden, &l.mlp.up_proj));
    MLASPEC_RETURN_IF_ERROR(ld.matrix(p + "mlp.down_proj.weight", hidden, inter, &l.mlp.down_proj));
  }
  MLASPEC_RETURN_IF_ERROR(ld.matrix("fc.weight", hidden, c.context_width(), &w.fc));
  MLASPEC_RETURN_IF_ERROR(ld.vector("hidden_norm.weight", hidden, &w.hidden_norm));
  MLASPEC_RETURN_IF_ERROR(ld.vector("norm.weight", hidden, &w.norm));
  // A DSpark checkpoint's heads (model/dspark.h) are its loader's.
  if (c.model_type == "dspark") {
    MLASPEC_RETURN_IF_ERROR(ld.check_leftovers("a DSpark drafter", {"markov.", "confidence."}));
  } else {
    MLASPEC_RETURN_IF_ERROR(ld.check_leftovers("a DFlash drafter"));
  }
  w.parameters = ld.parameters;
  return w;
}

// ---- the network --------------------------------------------------------------------------------

struct DFlashNetwork::Impl {
  DFlashConfig config;
  DFlashWeights weights;
  const Matrix* embed_tokens = nullptr;
  const Matrix* lm_head = nullptr;
  cpu::Rope rope;
  int64_t window = 0;
  Device device = Device::kCPU;
  std::unique_ptr<gpu::DFlashCudaRuntime> cuda;  // device kCUDA

  Impl(DFlashConfig c, DFlashWeights w, const Matrix& embed, const Matrix& head, int64_t win)
      : config(std::move(c)),
        weights(std::move(w)),
        embed_tokens(&embed),
        lm_head(&head),
        rope(rope_config(config), config.head_dim),
        window(win) {}

  // For the CPU runtime: its deterministic GEMMs read column panels (the lm_head's come with a
  // CPU target's weights; a CUDA target's are not packed and its lm_head is read unpacked).
  void pack() {
    pack_for_cpu(weights.fc);
    for (DFlashLayerWeights& l : weights.layers) {
      for (Matrix* m : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.mlp.gate_proj,
                        &l.mlp.up_proj, &l.mlp.down_proj})
        pack_for_cpu(*m);
    }
  }

  static RopeConfig rope_config(const DFlashConfig& c) {
    RopeConfig r;
    r.type = RopeConfig::Type::kDefault;
    r.theta = c.rope_theta;
    r.interleave = false;
    r.attention_factor = 1.0;
    return r;
  }

  // Per-head RMSNorm (q_norm / k_norm) and RoPE at `first_position + t` over x [T, heads * d].
  void norm_rope(float* x, int64_t T, int heads, const std::vector<float>& w,
                 int64_t first_position) const {
    const int d = config.head_dim;
    cpu::rms_norm(x, T * heads, d, w, config.rms_norm_eps, x);
    parallel_for(0, T * heads, T * heads * d * 4,
                 [&](int64_t r) { rope.apply(x + r * d, first_position + r / heads); });
  }

  Status check_pool(const kv::KvPool& pool) const;
  Status check_pages(std::span<const int32_t> pages, int64_t tokens, const kv::KvPool& pool,
                     const std::string& who) const;
  void append_one(const DFlashContextRows& r, kv::KvPool& pool) const;
  void propose_one(DFlashBlock& b, const kv::KvPool& pool) const;
};

DFlashNetwork::DFlashNetwork(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DFlashNetwork::DFlashNetwork(DFlashNetwork&&) noexcept = default;
DFlashNetwork& DFlashNetwork::operator=(DFlashNetwork&&) noexcept = default;
DFlashNetwork::~DFlashNetwork() = default;

const DFlashConfig& DFlashNetwork::config() const {
  return impl_->config;
}
const DFlashWeights& DFlashNetwork::weights() const {
  return impl_->weights;
}
int64_t DFlashNetwork::draft_window() const {
  return impl_->window;
}

Result<DFlashNetwork> DFlashNetwork::load(const std::filesystem::path& dir,
                                          const ModelConfig& target, const Matrix& embed_tokens,
                                          const Matrix& lm_head, const DFlashOptions& options) {
  Result<DFlashConfig> config = load_dflash_config(dir);
  if (!config.ok()) return config.status();
  const DFlashConfig& c = *config;
  const std::string src = (dir / "config.json").string();
  if (c.target_hidden_size != target.hidden_size) {
    return invalid_argument(src + ": the drafter's target_hidden_size " +
                            str(c.target_hidden_size) +
                            " does not match the target's hidden_size " + str(target.hidden_size));
  }
  if (c.vocab_size != target.vocab_size) {
    return invalid_argument(src + ": the drafter's vocab_size " + str(c.vocab_size) +
                            " does not match the target's vocab_size " + str(target.vocab_size));
  }
  for (int id : c.target_layer_ids) {
    if (id >= target.num_hidden_layers) {
      return invalid_argument(src + ": target_layer_ids holds layer " + str(id) +
                              " but the target has " + str(target.num_hidden_layers) +
                              " layers (0 .. " + str(target.num_hidden_layers - 1) + ")");
    }
  }
  for (const Matrix* m : {&embed_tokens, &lm_head}) {
    if (m->rows != target.vocab_size || m->cols != target.hidden_size) {
      return invalid_argument("DFlash: the target's embedding / lm_head is [" + str(m->rows) +
                              ", " + str(m->cols) + "], expected [vocab " + str(target.vocab_size) +
                              ", hidden " + str(target.hidden_size) + "]");
    }
  }
  if (options.draft_window < -1) {
    return invalid_argument("DFlash: draft_window " + str(options.draft_window) +
                            " must be -1 (the config's), 0 (none) or > 0");
  }
  const int64_t window = options.draft_window == -1 ? c.sliding_window : options.draft_window;
  Result<Checkpoint> ckpt = Checkpoint::open(dir);
  if (!ckpt.ok()) return ckpt.status();
  Result<DFlashWeights> weights = load_dflash_weights(c, *ckpt);
  if (!weights.ok()) return weights.status();
  auto impl = std::make_unique<Impl>(std::move(*config), std::move(*weights), embed_tokens, lm_head,
                                     window);
  if (options.device == Device::kCUDA) {
    Result<std::unique_ptr<gpu::DFlashCudaRuntime>> rt = gpu::DFlashCudaRuntime::create(
        impl->config, impl->weights, embed_tokens, lm_head, impl->rope, options.cuda_graphs);
    if (!rt.ok()) return rt.status().with_context(dir.string());
    impl->cuda = std::move(*rt);
  } else {
    impl->pack();
  }
  impl->device = options.device;
  return DFlashNetwork(std::move(impl));
}

Result<DFlashNetwork> DFlashNetwork::load(const std::filesystem::path& dir, const Model& target,
                                          const DFlashOptions& options) {
  return load(dir, target.config(), target.weights().embed_tokens, target.weights().head(),
              options);
}

kv::KvPoolSpec DFlashNetwork::kv_pool_spec(int num_pages, int page_size, DType dtype) const {
  kv::KvPoolSpec spec;
  spec.name = "draft";
  spec.layout = kv::KvLayout::gqa(impl_->config.num_key_value_heads, impl_->config.head_dim);
  spec.num_layers = impl_->config.num_hidden_layers;
  spec.num_pages = num_pages;
  spec.page_size = page_size;
  spec.dtype = dtype;
  spec.device = impl_->device;
  return spec;
}

const attn::BackendCaps& DFlashNetwork::attention_caps() {
  static const attn::BackendCaps caps = [] {
    attn::BackendCaps c;
    c.name = "dflash_cpu";
    c.device = Device::kCPU;
    c.min_q_len = 1;
    c.max_q_len = 1024;
    c.min_heads = 1;
    c.max_heads = 4096;
    c.max_batch = std::numeric_limits<int>::max();
    c.max_seq_len = std::numeric_limits<int32_t>::max();
    // The context K/V are read as bf16: the drafter computes in bf16-or-better and its keys are
    // not scaled for fp8 (no per-layer calibration exists for them).
    c.kv_dtypes = attn::dtype_bit(DType::kBF16);
    return c;
  }();
  return caps;
}

Status DFlashNetwork::Impl::check_pool(const kv::KvPool& pool) const {
  const kv::KvLayout want = kv::KvLayout::gqa(config.num_key_value_heads, config.head_dim);
  const kv::KvLayout& got = pool.spec().layout;
  if (got.kind != want.kind || got.kv_heads != want.kv_heads || got.head_dim != want.head_dim) {
    return invalid_argument("DFlash: pool " + pool.name() + " has layout " + got.to_string() +
                            ", the drafter needs " + want.to_string());
  }
  if (pool.num_layers() != config.num_hidden_layers) {
    return invalid_argument("DFlash: pool " + pool.name() + " has " + str(pool.num_layers()) +
                            " layers, the drafter has " + str(config.num_hidden_layers));
  }
  if (pool.dtype() != DType::kBF16) {
    return unsupported("DFlash: pool " + pool.name() + " is " +
                       std::string(dtype_name(pool.dtype())) +
                       "; the drafter's attention reads bf16 pools only (the draft pool's dtype "
                       "rule gives bf16 for an fp8 target)");
  }
  if (pool.device() != device) {
    return unsupported("DFlash: pool " + pool.name() + " is on " +
                       std::string(device_name(pool.device())) + ", the network runs on " +
                       std::string(device_name(device)) + " (kv_pool_spec gives the right pool)");
  }
  return Status::Ok();
}

Status DFlashNetwork::Impl::check_pages(std::span<const int32_t> pages, int64_t tokens,
                                        const kv::KvPool& pool, const std::string& who) const {
  const int64_t need = (tokens + pool.page_size() - 1) / pool.page_size();
  if (static_cast<int64_t>(pages.size()) < need) {
    return invalid_argument(who + ": " + str(tokens) + " tokens need " + str(need) +
                            " pages, the page table has " + str(pages.size()));
  }
  for (int64_t j = 0; j < need; ++j) {
    const int32_t p = pages[static_cast<size_t>(j)];
    if (p < 0 || p >= pool.num_pages()) {
      return out_of_range(who + ": page " + str(p) + " at index " + str(j) + " is outside [0, " +
                          str(pool.num_pages()) + ")");
    }
  }
  return Status::Ok();
}

Status DFlashNetwork::append_context(std::span<const DFlashContextRows> batch,
                                     kv::KvPool& pool) const {
  const Impl& m = *impl_;
  MLASPEC_RETURN_IF_ERROR(m.check_pool(pool));
  for (size_t i = 0; i < batch.size(); ++i) {
    const DFlashContextRows& r = batch[i];
    const std::string who = "DFlash append_context request " + str(static_cast<int64_t>(i));
    if (r.layers.size() != m.config.target_layer_ids.size()) {
      return invalid_argument(who + ": " + str(r.layers.size()) +
                              " hidden-state matrices given, the drafter reads " +
                              str(m.config.target_layer_ids.size()) + " (target_layer_ids)");
    }
    for (const float* p : r.layers) {
      if (p == nullptr && r.rows > 0)
        return invalid_argument(who + ": a hidden-state matrix is null");
    }
    if (r.rows < 0 || r.first_position < 0) {
      return invalid_argument(who + ": rows " + str(r.rows) + " and first_position " +
                              str(r.first_position) + " must be >= 0");
    }
    MLASPEC_RETURN_IF_ERROR(m.check_pages(r.pages, r.first_position + r.rows, pool, who));
  }
  if (m.cuda != nullptr) return m.cuda->append_context(batch, pool);
  // A step appends ~τ rows: as in propose, OpenBLAS would pack fc, k_proj and v_proj whole per
  // call (sgemm_incopy ~3% of a speculative step); the panel kernels read them as packed.
  const cpu::RowInvariantScope small_gemms(true);
  for (const DFlashContextRows& r : batch) m.append_one(r, pool);
  return Status::Ok();
}

void DFlashNetwork::Impl::append_one(const DFlashContextRows& r, kv::KvPool& pool) const {
  const int64_t T = r.rows;
  if (T == 0) return;
  const int64_t Ht = config.target_hidden_size, H = config.hidden_size;
  const int64_t K = static_cast<int64_t>(r.layers.size());
  // concat_k hidden[k] -> fc -> hidden_norm.
  std::vector<float> feat(static_cast<size_t>(T * K * Ht));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) {
      std::copy_n(r.layers[static_cast<size_t>(k)] + t * Ht, Ht, feat.data() + (t * K + k) * Ht);
    }
  }
  std::vector<float> ctx(static_cast<size_t>(T * H));
  cpu::linear(feat.data(), T, weights.fc, ctx.data());
  cpu::rms_norm(ctx.data(), T, H, weights.hidden_norm, config.rms_norm_eps, ctx.data());

  const int64_t kvw = config.kv_width();
  std::vector<int32_t> slots(static_cast<size_t>(T));
  const int64_t ps = pool.page_size();
  for (int64_t t = 0; t < T; ++t) {
    const int64_t pos = r.first_position + t;
    slots[static_cast<size_t>(t)] =
        static_cast<int32_t>(r.pages[static_cast<size_t>(pos / ps)] * ps + pos % ps);
  }
  std::vector<float> k(static_cast<size_t>(T * kvw)), v(k.size());
  std::vector<bf16> rows(static_cast<size_t>(T * 2 * kvw));
  for (int l = 0; l < config.num_hidden_layers; ++l) {
    const DFlashLayerWeights& w = weights.layers[static_cast<size_t>(l)];
    cpu::linear(ctx.data(), T, w.k_proj, k.data());
    cpu::linear(ctx.data(), T, w.v_proj, v.data());
    norm_rope(k.data(), T, config.num_key_value_heads, w.k_norm, r.first_position);
    for (int64_t t = 0; t < T; ++t) {
      bf16* row = rows.data() + t * 2 * kvw;
      for (int64_t i = 0; i < kvw; ++i) {
        row[i] = bf16::from_float(k[static_cast<size_t>(t * kvw + i)]);
        row[kvw + i] = bf16::from_float(v[static_cast<size_t>(t * kvw + i)]);
      }
    }
    // Validated above (layout, dtype, pages in range): the write cannot fail.
    throw_if_error(kv::write_rows(pool, l, TensorView(slots.data(), DType::kI32, {T}),
                                  TensorView(rows.data(), DType::kBF16, {T, 2 * kvw})));
  }
}

Status DFlashNetwork::propose(std::span<DFlashBlock> batch, const kv::KvPool& pool) const {
  const Impl& m = *impl_;
  MLASPEC_RETURN_IF_ERROR(m.check_pool(pool));
  // A block is 8 rows: at that size OpenBLAS packs the whole weight matrix on every call, which
  // costs more than the products (perf: sgemm_incopy ~9% of a speculative run on the CPU), so the
  // drafter's GEMMs take the fixed-order panel kernels (row_invariant_gemm.h), which read each
  // packed weight once per 4-row tile and never copy it.
  const cpu::RowInvariantScope small_gemms(true);
  for (size_t i = 0; i < batch.size(); ++i) {
    const DFlashBlock& b = batch[i];
    const std::string who = "DFlash propose request " + str(static_cast<int64_t>(i));
    if (b.anchor < 0 || b.anchor >= m.config.vocab_size) {
      return invalid_argument(who + ": anchor token " + str(b.anchor) + " is outside [0, " +
                              str(m.config.vocab_size) + ")");
    }
    if (b.context_len < 0) {
      return invalid_argument(who + ": context_len " + str(b.context_len) + " is negative");
    }
    MLASPEC_RETURN_IF_ERROR(m.check_pages(b.pages, b.context_len, pool, who));
  }
  if (m.cuda != nullptr) return m.cuda->propose(batch, pool, m.window);
  for (DFlashBlock& b : batch) m.propose_one(b, pool);
  return Status::Ok();
}

void DFlashNetwork::Impl::propose_one(DFlashBlock& b, const kv::KvPool& pool) const {
  const DFlashConfig& c = config;
  const int64_t Q = c.block_size, H = c.hidden_size, d = c.head_dim;
  const int64_t nh = c.num_attention_heads, nkv = c.num_key_value_heads, kvw = c.kv_width();
  const int64_t group = nh / nkv;
  const int64_t L = b.context_len;
  const int64_t first = window > 0 ? std::max<int64_t>(0, L - window) : 0;
  const int64_t C = L - first;  // context rows seen
  const int64_t S = C + Q;      // keys per query
  const int64_t ps = pool.page_size();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));

  // The block's input: the target's embedding of [anchor, MASK x num_draft].
  std::vector<float> h(static_cast<size_t>(Q * H));
  for (int64_t i = 0; i < Q; ++i) {
    const int32_t tok = i == 0 ? b.anchor : c.mask_token_id;
    std::copy_n(embed_tokens->row(tok), H, h.data() + i * H);
  }
  std::vector<const uint16_t*> ctx_rows(static_cast<size_t>(C));
  std::vector<float> x(static_cast<size_t>(Q * H)), q(static_cast<size_t>(Q * nh * d));
  std::vector<float> keys(static_cast<size_t>(S * kvw)), vals(keys.size());
  std::vector<float> attn(static_cast<size_t>(Q * nh * d)), o(static_cast<size_t>(Q * H));
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const DFlashLayerWeights& w = weights.layers[static_cast<size_t>(l)];
    // Keys and values [S, kv_heads * d]: the pool's context rows (bf16), then the block's own.
    const auto* base = static_cast<const uint16_t*>(pool.layer_tensor(l).data());
    parallel_for(0, C, C * kvw * 2, [&](int64_t j) {
      const int64_t pos = first + j;
      const int64_t slot = int64_t{b.pages[static_cast<size_t>(pos / ps)]} * ps + pos % ps;
      const uint16_t* row = base + slot * 2 * kvw;
      for (int64_t i = 0; i < kvw; ++i) {
        keys[static_cast<size_t>(j * kvw + i)] = bf16_bits_to_float(row[i]);
        vals[static_cast<size_t>(j * kvw + i)] = bf16_bits_to_float(row[kvw + i]);
      }
    });
    cpu::rms_norm(h.data(), Q, H, w.input_layernorm, c.rms_norm_eps, x.data());
    cpu::linear(x.data(), Q, w.q_proj, q.data());
    norm_rope(q.data(), Q, static_cast<int>(nh), w.q_norm, L);
    cpu::linear(x.data(), Q, w.k_proj, keys.data() + C * kvw);
    cpu::linear(x.data(), Q, w.v_proj, vals.data() + C * kvw);
    norm_rope(keys.data() + C * kvw, Q, static_cast<int>(nkv), w.k_norm, L);

    // Non-causal attention: every block query sees all S keys.
    parallel_for(0, Q * nh, Q * nh * S * d * 2, [&](int64_t r) {
      const int64_t i = r / nh, head = r % nh, g = head / group;
      const float* qr = q.data() + (i * nh + head) * d;
      std::vector<float> p(static_cast<size_t>(S));
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        const float* kr = keys.data() + j * kvw + g * d;
        // 8 partial sums (e mod 8) added as a fixed tree: one running sum over d was a chain of
        // 64 dependent adds per key (~6% of a speculative step in the drafter's attention).
        float part[8] = {};
        int64_t e = 0;
        for (; e + 8 <= d; e += 8)
          for (int u = 0; u < 8; ++u) part[u] += qr[e + u] * kr[e + u];
        float s = ((part[0] + part[1]) + (part[2] + part[3])) +
                  ((part[4] + part[5]) + (part[6] + part[7]));
        for (; e < d; ++e) s += qr[e] * kr[e];
        p[static_cast<size_t>(j)] = s * scale;
        mx = std::max(mx, p[static_cast<size_t>(j)]);
      }
      double sum = 0.0;
      for (float& e : p) {
        e = std::exp(e - mx);
        sum += e;
      }
      float* out = attn.data() + (i * nh + head) * d;
      std::fill_n(out, d, 0.0f);
      for (int64_t j = 0; j < S; ++j) {
        const float pj = p[static_cast<size_t>(j)];
        const float* vr = vals.data() + j * kvw + g * d;
        for (int64_t e = 0; e < d; ++e) out[e] += pj * vr[e];
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t e = 0; e < d; ++e) out[e] *= inv;
    });
    cpu::linear(attn.data(), Q, w.o_proj, o.data());
    for (size_t e = 0; e < h.size(); ++e) h[e] += o[e];
    cpu::rms_norm(h.data(), Q, H, w.post_attention_layernorm, c.rms_norm_eps, x.data());
    cpu::mlp_forward(w.mlp, x.data(), Q, o.data());
    for (size_t e = 0; e < h.size(); ++e) h[e] += o[e];
  }
  // Slots 1 .. num_draft: norm, then the target's lm_head.
  cpu::rms_norm(h.data() + H, Q - 1, H, weights.norm, c.rms_norm_eps, x.data());
  b.logits.assign(static_cast<size_t>((Q - 1) * c.vocab_size), 0.0f);
  cpu::linear(x.data(), Q - 1, *lm_head, b.logits.data());
  b.hidden.assign(x.begin(), x.begin() + (Q - 1) * H);
}

}  // namespace mlaspec::model
