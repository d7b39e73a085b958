// What `serve` runs: the target, its tokenizer and the drafter of ServeOptions, built into one
// spec::Engine sized for the scheduler (request slots = max_running, each up to the full context).
#pragma once

#include <optional>

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

}  // namespace mlaspec::serve
