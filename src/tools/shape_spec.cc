#include "tools/shape_spec.h"

#include <charconv>
#include <cstdint>
#include <set>
#include <string>

namespace mlaspec::tools {
namespace {

constexpr const char* kKeys = "B, H, q, S, kv, page, det, fp8math, dev";

Result<int64_t> parse_count(std::string_view key, std::string_view text, bool allow_suffix) {
  std::optional<int64_t> v;
  if (allow_suffix) {
    v = parse_token_count(text);
  } else {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (!text.empty() && ec == std::errc() && p == text.data() + text.size()) v = n;
  }
  if (!v || *v < 1) {
    return invalid_argument(
        std::string(key) + "=" + std::string(text) + ": expected a positive " +
        (allow_suffix ? "integer up to 2^40 (k = 1024, m = 1048576 suffix allowed)" : "integer"));
  }
  return *v;
}

}  // namespace

std::optional<int64_t> parse_token_count(std::string_view text) {
  int64_t mult = 1;
  std::string_view digits = text;
  if (!digits.empty()) {
    const char c = digits.back();
    if (c == 'k' || c == 'K') mult = 1024;
    if (c == 'm' || c == 'M') mult = int64_t{1024} * 1024;
    if (mult != 1) digits.remove_suffix(1);
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || v < 0 ||
      v > (int64_t{1} << 40) / mult) {
    return std::nullopt;
  }
  return v * mult;
}

Result<attn::VerifyShape> parse_shape_spec(std::string_view spec, std::optional<Device>* device) {
  const std::string quoted = "shape \"" + std::string(spec) + "\": ";
  attn::VerifyShape s;
  s.batch = 1;
  s.num_heads = 16;
  s.q_len = 1;
  s.page_size = 64;
  s.kv_dtype = DType::kBF16;
  int64_t seq = -1;
  std::set<std::string> seen;
  if (spec.find_first_not_of(' ') == std::string_view::npos) {
    return invalid_argument(quoted + "empty; expected keys " + kKeys +
                            " (e.g. B=1,H=16,q=8,S=128k,kv=fp8)");
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view item = spec.substr(pos, end - pos);
    pos = end + 1;
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) {
      if (end == spec.size()) break;
      return invalid_argument(quoted + "empty item between commas");
    }
    const size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    const bool has_value = eq != std::string_view::npos;
    const std::string_view val = has_value ? item.substr(eq + 1) : std::string_view();
    static const std::set<std::string> kKnown = {"B",    "H",   "q",       "S",  "kv",
                                                 "page", "det", "fp8math", "dev"};
    if (!kKnown.count(key)) {
      return invalid_argument(quoted + "unknown key \"" + key +
                              "\" (keys are case-sensitive: " + kKeys + ")");
    }
    if (!seen.insert(key).second) return invalid_argument(quoted + key + " given twice");
    auto need_value = [&]() -> Status {
      if (!has_value || val.empty()) {
        return invalid_argument(quoted + key + " needs a value (" + key + "=...)");
      }
      return Status::Ok();
    };
    if (key == "B" || key == "H" || key == "q" || key == "page" || key == "S") {
      MLASPEC_RETURN_IF_ERROR(need_value());
      auto v = parse_count(key, val, key == "S");
      if (!v.ok()) return v.status();
      if (key != "S" && *v > (int64_t{1} << 30)) {
        return invalid_argument(key + "=" + std::string(val) + " is out of range (at most 2^30)");
      }
      if (key == "B") s.batch = static_cast<int>(*v);
      if (key == "H") s.num_heads = static_cast<int>(*v);
      if (key == "q") s.q_len = static_cast<int>(*v);
      if (key == "page") s.page_size = static_cast<int>(*v);
      if (key == "S") seq = *v;
    } else if (key == "kv") {
      MLASPEC_RETURN_IF_ERROR(need_value());
      if (val == "bf16") {
        s.kv_dtype = DType::kBF16;
      } else if (val == "fp8") {
        s.kv_dtype = DType::kFP8E4M3;
      } else if (val == "fp8tile") {
        s.kv_dtype = DType::kFP8Tile;
      } else {
        return invalid_argument("kv=" + std::string(val) + ": expected bf16, fp8 or fp8tile");
      }
    } else if (key == "det" || key == "fp8math") {
      // A flag: present means on. One spelling keeps specs greppable and comparable.
      if (has_value) {
        return invalid_argument(quoted + key + " is a flag and takes no value (write " + key +
                                ", or leave it out)");
      }
      (key == "det" ? s.deterministic : s.fp8_math) = true;
    } else {  // dev
      MLASPEC_RETURN_IF_ERROR(need_value());
      if (val == "cuda") {
        if (device) *device = Device::kCUDA;
      } else if (val == "cpu") {
        if (device) *device = Device::kCPU;
      } else {
        return invalid_argument("dev=" + std::string(val) + ": expected cuda or cpu");
      }
    }
  }
  if (seq < 0) {
    return invalid_argument(quoted +
                            "missing S=<context length in tokens> (e.g. S=131072 or S=128k)");
  }
  if (seq < s.q_len) {
    return invalid_argument(quoted + "S=" + std::to_string(seq) + " is shorter than q=" +
                            std::to_string(s.q_len) + " (S counts the new tokens too, so S >= q)");
  }
  s.max_seq_len = seq;
  s.total_kv = seq * s.batch;
  return s;
}

}  // namespace mlaspec::tools
