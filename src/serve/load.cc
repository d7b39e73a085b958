#include "mlaspec/serve/load.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "mlaspec/model/dflash.h"
#include "mlaspec/model/model.h"
#include "mlaspec/spec/make_drafter.h"

namespace mlaspec::serve {

DrafterChoice default_drafter(const std::string& model_dir, const std::string& draft_model_dir) {
  namespace fs = std::filesystem;
  if (!draft_model_dir.empty()) {
    Result<model::DFlashConfig> c =
        model::load_dflash_config(fs::path(draft_model_dir) / "config.json");
    return {c.ok() && c->model_type == "dspark" ? "dspark" : "dflash", draft_model_dir};
  }
  // The shipped pair when it is the model being served.
  const fs::path shipped = fs::path(model_dir).parent_path() / "drafter";
  if (fs::exists(shipped / "config.json")) return {"dflash", shipped.string()};
  return {"ngram", ""};
}

Result<LoadedEngine> load_engine(const ServeOptions& options) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(options.model_dir)) {
    return not_found("--model " + options.model_dir + " is not a directory");
  }
  if (options.draft != "dflash" && options.draft != "dspark" && options.draft != "ngram" &&
      options.draft != "none") {
    return invalid_argument("--draft " + options.draft +
                            " is not one of dflash, dspark, ngram, none");
  }
  if ((options.draft == "dflash" || options.draft == "dspark") && options.draft_model_dir.empty()) {
    return invalid_argument("--draft " + options.draft + " needs --draft-model DIR");
  }
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(options.model_dir);
  if (!tok.ok()) return tok.status().with_context("tokenizer of --model " + options.model_dir);
  model::LoadOptions load_options;
  load_options.device = options.device;
  Result<model::Model> model = model::Model::load(options.model_dir, load_options);
  if (!model.ok()) return model.status().with_context("--model " + options.model_dir);
  const model::ModelConfig& mc = model->config();
  if (tok->vocab_size() > mc.vocab_size) {
    return invalid_argument("the tokenizer's vocabulary (" + std::to_string(tok->vocab_size()) +
                            " ids) is larger than the model's (" + std::to_string(mc.vocab_size) +
                            ")");
  }
  const int max_running = std::max(1, options.scheduler.max_running);
  spec::EngineConfig config;
  config.kv_dtype = options.kv_dtype;
  config.max_requests = max_running;
  config.num_pages = options.kv_pages;
  config.prefill_chunk_tokens = options.prefill_chunk_tokens;
  config.deterministic = options.deterministic;
  Result<spec::MadeDrafter> made =
      spec::make_drafter({.kind = options.draft,
                          .model_dir = options.draft_model_dir,
                          .verify_width = options.verify_width,
                          .num_draft = options.num_draft,
                          .num_draft_asked = options.num_draft_asked,
                          .max_requests = max_running,
                          .max_tokens_per_request = mc.max_position_embeddings,
                          .target_kv_dtype = config.kv_dtype},
                         *model);
  if (!made.ok()) return made.status();
  config.num_draft = made->num_draft;
  std::unique_ptr<spec::Drafter> drafter = std::move(made->drafter);
  Result<spec::Engine> engine = spec::Engine::create(std::move(*model), std::move(drafter), config);
  if (!engine.ok()) return engine.status();
  return LoadedEngine{std::move(*engine), std::move(*tok)};
}

}  // namespace mlaspec::serve
