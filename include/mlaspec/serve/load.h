// What `serve` runs: the target, its tokenizer and the drafter of ServeOptions, built into one
// spec::Engine sized for the scheduler (request slots = max_running, each up to the full context).
#pragma once

#include <optional>
#include <string>

#include "mlaspec/core/status.h"
#include "mlaspec/serve/server.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/tokenizer/tokenizer.h"

namespace mlaspec::serve {

struct LoadedEngine {
  spec::Engine engine;
  tokenizer::Tokenizer tokenizer;
};

// Errors name the option at fault (--model, --draft-model) and the reason.
Result<LoadedEngine> load_engine(const ServeOptions& options);

// The drafter serve runs when --draft is not given, as {kind, draft model directory}: with a draft
// model directory, the kind its config.json names ("dspark" for a DSpark checkpoint, whose heads
// plain DFlash would drop; else "dflash", whose load then reports what is wrong with the
// directory); without one, "dflash" with the drafter/ beside the model when it holds a
// config.json (the shipped pair), else "ngram".
struct DrafterChoice {
  std::string kind;
  std::string model_dir;
};
DrafterChoice default_drafter(const std::string& model_dir, const std::string& draft_model_dir);

}  // namespace mlaspec::serve
