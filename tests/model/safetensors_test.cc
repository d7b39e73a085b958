// The safetensors reader: valid files, every malformed header it must refuse (with the file and
// tensor named), sharded checkpoints, and dtype conversion.
#include <gtest/gtest.h>

#include <cstring>

#include "common/test_helpers.h"
#include "model/model_test_util.h"

namespace mlaspec::model::testing {
namespace {

std::vector<uint8_t> f32_bytes(std::initializer_list<float> v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), std::data(v), b.size());
  return b;
}

std::vector<uint8_t> with_header(const std::string& header, size_t data_bytes = 0) {
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(header.size() >> (8 * i));
  }
  std::copy(header.begin(), header.end(), out.begin() + 8);
  return out;
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  Result<SafetensorsFile> f = SafetensorsFile::parse(bytes, "bad.safetensors");
  EXPECT_FALSE(f.ok());
  return f.ok() ? "" : f.status().to_string();
}

TEST(Safetensors, ParsesTensorsAndMetadata) {
  StTensors t;
  t["a"] = {"F32", {2}, f32_bytes({1.5f, -2.0f})};
  t["b"] = {"BF16", {1, 2}, {0x80, 0x3f, 0x00, 0xc0}};          // 1.0, -2.0
  t["c"] = {"F16", {3}, {0x00, 0x3c, 0x01, 0x00, 0x00, 0x7c}};  // 1, 2^-24, inf
  t["d"] = {"F8_E4M3", {2}, {0x38, 0xfe}};                      // 1.0, -448
  t["e"] = {"I64", {1}, std::vector<uint8_t>(8, 0)};
  t["z"] = {"F32", {0, 3}, {}};
  const std::vector<uint8_t> bytes = safetensors_bytes(t);
  SafetensorsFile f = SafetensorsFile::parse(bytes, "ok.safetensors").value();
  ASSERT_EQ(f.tensors().size(), 6u);
  std::map<std::string, const TensorInfo*> by_name;
  for (const TensorInfo& info : f.tensors()) by_name[info.name] = &info;
  std::vector<float> v(2);
  ASSERT_TRUE(convert_to_f32(*by_name["a"], v).ok());
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f}));
  ASSERT_TRUE(convert_to_f32(*by_name["b"], v).ok());
  EXPECT_EQ(v, (std::vector<float>{1.0f, -2.0f}));
  ASSERT_TRUE(convert_to_f32(*by_name["d"], v).ok());
  EXPECT_EQ(v, (std::vector<float>{1.0f, -448.0f}));
  std::vector<float> h(3);
  ASSERT_TRUE(convert_to_f32(*by_name["c"], h).ok());
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(h[2]));
  std::vector<float> one(1);
  EXPECT_CONTAINS(convert_to_f32(*by_name["e"], one).to_string(),
                  "e [1] I64 in ok.safetensors: dtype I64 is not a weight dtype");
  EXPECT_EQ(by_name["z"]->numel, 0);
  std::vector<float> none;
  EXPECT_TRUE(convert_to_f32(*by_name["z"], none).ok());  // found by the fuzzer (memcpy of null)
  EXPECT_EQ(by_name["b"]->describe(), "b [1, 2] BF16 in ok.safetensors");
}

TEST(Safetensors, MetadataStrings) {
  const std::vector<uint8_t> ok = with_header(R"({"__metadata__":{"format":"pt"}})");
  EXPECT_EQ(SafetensorsFile::parse(ok, "m").value().metadata().at("format"), "pt");
  EXPECT_CONTAINS(parse_error(with_header(R"({"__metadata__":{"format":1}})")),
                  "__metadata__ value of \"format\" is not a string");
}

struct BadHeader {
  const char* name;
  std::string header;
  size_t data_bytes;
  const char* message;
};

class SafetensorsRefusals : public ::testing::TestWithParam<BadHeader> {};

TEST_P(SafetensorsRefusals, NameFileAndTensor) {
  const std::string e = parse_error(with_header(GetParam().header, GetParam().data_bytes));
  EXPECT_CONTAINS(e, "data_loss: bad.safetensors: ");
  EXPECT_CONTAINS(e, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    All, SafetensorsRefusals,
    ::testing::Values(
        BadHeader{"not_json", "{\"a\": ", 0, "header is not valid JSON"},
        BadHeader{"not_object", "[1]", 0, "header is not a JSON object"},
        BadHeader{"entry_not_object", R"({"w": 3})", 0, "tensor \"w\": entry is not an object"},
        BadHeader{"no_dtype", R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4,
                  "tensor \"w\": dtype missing or not a string"},
        BadHeader{"unknown_dtype",
                  R"({"w": {"dtype": "F4", "shape": [1], "data_offsets": [0, 1]}})", 1,
                  "tensor \"w\": unknown dtype \"F4\""},
        BadHeader{"negative_dim",
                  R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4,
                  "tensor \"w\": shape entry -1 is not a non-negative integer"},
        BadHeader{"float_dim", R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})",
                  4, "shape entry 1.5 is not a non-negative integer"},
        BadHeader{
            "overflow",
            R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})",
            4, "tensor \"w\": shape [4294967296,4294967296] overflows"},
        BadHeader{
            "rank",
            R"({"w": {"dtype": "F32", "shape": [1,1,1,1,1,1,1,1,1], "data_offsets": [0, 4]}})", 4,
            "tensor \"w\": rank 9 exceeds the maximum 8"},
        BadHeader{"offsets_shape", R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})",
                  4, "tensor \"w\": data_offsets missing or not [begin, end]"},
        BadHeader{"offsets_negative",
                  R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4,
                  "data_offsets [-4,0] are not non-negative integers"},
        BadHeader{"offsets_reversed",
                  R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4,
                  "tensor \"w\": data_offsets [4, 0] do not lie within the 4-byte data section"},
        BadHeader{"offsets_past_end",
                  R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8,
                  "tensor \"w\": data_offsets [0, 16] do not lie within the 8-byte data section"},
        BadHeader{"size_mismatch",
                  R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8,
                  "tensor \"w\": data_offsets span 8 bytes but shape [3] of F32 needs 12"},
        BadHeader{"overlap",
                  R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                  12, "tensor \"b\" overlaps tensor \"a\" in the data section"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Safetensors, TooShortForTheLength) {
  EXPECT_CONTAINS(parse_error({1, 2, 3}),
                  "file of 3 bytes is too short for the 8-byte header length");
}

TEST(Safetensors, HeaderLengthLies) {
  std::vector<uint8_t> b = with_header("{}");
  b[0] = 200;  // claims 200 header bytes, 2 follow
  EXPECT_CONTAINS(parse_error(b),
                  "header length 200 exceeds the 2 bytes after it (truncated file?)");
}

TEST(Safetensors, TruncatedFile) {
  StTensors t;
  t["model.norm.weight"] = {"F32", {4}, f32_bytes({1, 2, 3, 4})};
  std::vector<uint8_t> b = safetensors_bytes(t);
  b.erase(b.end() - 3, b.end());
  EXPECT_CONTAINS(parse_error(b),
                  "tensor \"model.norm.weight\": data_offsets [0, 16] do not lie "
                  "within the 13-byte data section");
}

TEST(Safetensors, OpenMissingFile) {
  Result<SafetensorsFile> f = SafetensorsFile::open("/nonexistent/x.safetensors");
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.status().to_string(), "not_found: /nonexistent/x.safetensors: cannot open");
}

TEST(Checkpoint, ShardedIndexIsFollowed) {
  Checkpoint c = Checkpoint::open(models_dir() / "v3_plain_q_tied").value();
  EXPECT_EQ(c.files().size(), 2u);
  ASSERT_NE(c.find("model.norm.weight"), nullptr);
  EXPECT_EQ(c.find("lm_head.weight"), nullptr);  // tied
}

class CheckpointErrors : public ::testing::Test {
 protected:
  TempDir dir;
  void write_index(const nlohmann::json& weight_map) {
    std::ofstream(dir.path() / "model.safetensors.index.json")
        << nlohmann::json{{"metadata", {}}, {"weight_map", weight_map}}.dump();
  }
  void write_shard(const std::string& file, const StTensors& t) {
    write_file(dir.path() / file, safetensors_bytes(t));
  }
  std::string error() {
    Result<Checkpoint> c = Checkpoint::open(dir.path());
    EXPECT_FALSE(c.ok());
    return c.ok() ? "" : c.status().to_string();
  }
  StTensors one(const std::string& name) {
    StTensors t;
    t[name] = {"F32", {1}, f32_bytes({1})};
    return t;
  }
};

TEST_F(CheckpointErrors, NoWeights) {
  EXPECT_CONTAINS(error(), "neither model.safetensors nor model.safetensors.index.json found");
}

TEST_F(CheckpointErrors, ShardMissing) {
  write_index({{"a", "model-1.safetensors"}});
  EXPECT_CONTAINS(error(), "model-1.safetensors: cannot open");
}

TEST_F(CheckpointErrors, TensorMissingFromItsShard) {
  write_index({{"a", "s1.safetensors"}, {"b", "s1.safetensors"}});
  write_shard("s1.safetensors", one("a"));
  EXPECT_CONTAINS(error(),
                  "s1.safetensors: tensor \"b\" listed in model.safetensors.index.json "
                  "is missing from it");
}

TEST_F(CheckpointErrors, TensorInTheWrongShard) {
  write_index({{"a", "s1.safetensors"}, {"b", "s1.safetensors"}});
  write_shard("s1.safetensors", one("a"));
  write_shard("s2.safetensors", one("b"));
  std::ofstream(dir.path() / "model.safetensors.index.json")
      << R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors", "c": "s1.safetensors"}})";
  write_shard("s2.safetensors", [&] {
    StTensors t = one("b");
    t["a"] = t["b"];
    return t;
  }());
  EXPECT_CONTAINS(error(),
                  "s2.safetensors: tensor \"a\" is not listed for this shard in "
                  "model.safetensors.index.json (listed in s1.safetensors)");
}

TEST_F(CheckpointErrors, IndexNamesAPath) {
  write_index({{"a", "../elsewhere.safetensors"}});
  EXPECT_CONTAINS(error(),
                  "weight_map entry of \"a\" names \"../elsewhere.safetensors\", not a "
                  "file in the checkpoint directory");
}

TEST_F(CheckpointErrors, IndexNotJson) {
  std::ofstream(dir.path() / "model.safetensors.index.json") << "{";
  EXPECT_CONTAINS(error(), "model.safetensors.index.json: not a JSON object");
}

TEST_F(CheckpointErrors, BadShardNamesTheFile) {
  write_index({{"a", "s1.safetensors"}});
  write_file(dir.path() / "s1.safetensors", {9, 0, 0, 0, 0, 0, 0, 0, '{'});
  EXPECT_CONTAINS(error(), "s1.safetensors: header length 9 exceeds the 1 bytes after it");
}

}  // namespace
}  // namespace mlaspec::model::testing
