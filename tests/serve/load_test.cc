// serve::default_drafter: the drafter `mlaspec serve` runs when --draft is not given.
#include <gtest/gtest.h>

#include <string>

#include "mlaspec/serve/load.h"

namespace mlaspec::serve {
namespace {

const std::string kData = MLASPEC_TEST_DATA_DIR;
const std::string kModels = kData + "/../../models";

TEST(DefaultDrafter, ADraftModelNamesItsKind) {
  // A DSpark checkpoint runs as DSpark (plain DFlash would drop its heads), a DFlash one as DFlash.
  const std::string dspark = kData + "/models/v3_qlora_moe_yarn-dspark";
  const std::string dflash = kData + "/models/v3_qlora_moe_yarn-dflash";
  DrafterChoice d = default_drafter(kData + "/models/v3_qlora_moe_yarn", dspark);
  EXPECT_EQ(d.kind, "dspark");
  EXPECT_EQ(d.model_dir, dspark);
  d = default_drafter(kData + "/models/v3_qlora_moe_yarn", dflash);
  EXPECT_EQ(d.kind, "dflash");
  EXPECT_EQ(d.model_dir, dflash);
  // A directory without a readable config: dflash, whose load then says what is wrong.
  d = default_drafter(kModels + "/target", "/nonexistent");
  EXPECT_EQ(d.kind, "dflash");
  EXPECT_EQ(d.model_dir, "/nonexistent");
}

TEST(DefaultDrafter, WithoutOneTheShippedPairElseNgram) {
  DrafterChoice d = default_drafter(kModels + "/target", "");
  EXPECT_EQ(d.kind, "dflash");
  EXPECT_EQ(d.model_dir, kModels + "/drafter");
  d = default_drafter(kData + "/models/v3_plain_q_tied", "");  // no drafter/ beside it
  EXPECT_EQ(d.kind, "ngram");
  EXPECT_EQ(d.model_dir, "");
}

}  // namespace
}  // namespace mlaspec::serve
