// Lossless greedy over hundreds of prompts: 64 per golden checkpoint (384 in all), 32 new tokens
// each, with the oracle, always-wrong, random and n-gram drafters (label long).
#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace mlaspec::spec {
namespace {

TEST(EngineLosslessLong, HundredsOfPrompts) {
  for (const std::string& name : testing::kModels)
    testing::check_lossless_greedy(name, 64, 32, 1001);
}

}  // namespace
}  // namespace mlaspec::spec
