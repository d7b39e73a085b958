#include "mlaspec/spec/ngram_drafter.h"

#include <limits>
#include <string>

namespace mlaspec::spec {
namespace {

constexpr int64_t kMaxHistory = std::numeric_limits<int32_t>::max();
constexpr size_t kInitialSlots = 64;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: spreads every input bit over the word
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

Status validate(const NgramConfig& c) {
  if (c.min_ngram < 1) {
    return invalid_argument("min_ngram " + std::to_string(c.min_ngram) + " is below 1");
  }
  if (c.max_ngram < c.min_ngram) {
    return invalid_argument("max_ngram " + std::to_string(c.max_ngram) + " is below min_ngram " +
                            std::to_string(c.min_ngram));
  }
  if (c.max_ngram > kMaxNgram) {
    return invalid_argument("max_ngram " + std::to_string(c.max_ngram) + " exceeds " +
                            std::to_string(kMaxNgram));
  }
  return Status::Ok();
}

NgramIndex::NgramIndex(const NgramConfig& config) : config_(config) {
  tables_.resize(config.max_ngram - config.min_ngram + 1);
  for (Table& t : tables_) t.slots.assign(kInitialSlots, -1);
}

Result<NgramIndex> NgramIndex::create(const NgramConfig& config) {
  MLASPEC_RETURN_IF_ERROR(validate(config));
  return NgramIndex(config);
}

uint64_t NgramIndex::hash(int32_t n, int64_t end) const {
  uint64_t h = static_cast<uint64_t>(n);
  for (int64_t i = end - n; i < end; ++i) {
    h = mix(h ^ static_cast<uint32_t>(history_[i]));
  }
  return h;
}

bool NgramIndex::same(int32_t n, int64_t a, int64_t b) const {
  for (int32_t i = 1; i <= n; ++i) {
    if (history_[a - i] != history_[b - i]) return false;
  }
  return true;
}

void NgramIndex::insert(int32_t n, int64_t end) {
  Table& t = tables_[n - config_.min_ngram];
  if (2 * (t.used + 1) > t.slots.size()) {
    // Keep the load at most one half: rehash every stored end into a table twice as large.
    std::vector<int32_t> old = std::move(t.slots);
    t.slots.assign(old.size() * 2, -1);
    const size_t mask = t.slots.size() - 1;
    for (int32_t e : old) {
      if (e < 0) continue;
      size_t s = hash(n, e) & mask;
      while (t.slots[s] >= 0) s = (s + 1) & mask;
      t.slots[s] = e;
    }
  }
  const size_t mask = t.slots.size() - 1;
  size_t s = hash(n, end) & mask;
  while (t.slots[s] >= 0) {
    if (same(n, t.slots[s], end)) {
      t.slots[s] = static_cast<int32_t>(end);  // a more recent occurrence replaces the old one
      return;
    }
    s = (s + 1) & mask;
  }
  t.slots[s] = static_cast<int32_t>(end);
  ++t.used;
}

int64_t NgramIndex::lookup(int32_t n, int64_t end) const {
  const Table& t = tables_[n - config_.min_ngram];
  const size_t mask = t.slots.size() - 1;
  size_t s = hash(n, end) & mask;
  while (t.slots[s] >= 0) {
    if (same(n, t.slots[s], end)) return t.slots[s];
    s = (s + 1) & mask;
  }
  return -1;
}

Status NgramIndex::append(std::span<const int32_t> tokens) {
  if (static_cast<int64_t>(history_.size() + tokens.size()) > kMaxHistory) {
    return out_of_range("history of " + std::to_string(history_.size()) + " + " +
                        std::to_string(tokens.size()) + " tokens exceeds " +
                        std::to_string(kMaxHistory));
  }
  for (int32_t token : tokens) {
    // The n-grams ending here gain a continuation (the token appended now): index them. The new
    // suffix itself is indexed only at the next append, so lookups see earlier occurrences only.
    const int64_t len = static_cast<int64_t>(history_.size());
    for (int32_t n = config_.min_ngram; n <= config_.max_ngram && n <= len; ++n) insert(n, len);
    history_.push_back(token);
  }
  return Status::Ok();
}

NgramIndex::Match NgramIndex::find() const {
  const int64_t len = static_cast<int64_t>(history_.size());
  for (int32_t n = config_.max_ngram; n >= config_.min_ngram; --n) {
    if (n >= len) continue;  // an earlier occurrence needs n tokens before some e < len
    const int64_t e = lookup(n, len);
    if (e >= 0) return {n, e};
  }
  return {};
}

std::vector<int32_t> NgramIndex::propose(int32_t num_draft) const {
  if (num_draft <= 0) return {};
  const Match m = find();
  if (m.n == 0) return {};
  const int64_t len = static_cast<int64_t>(history_.size());
  const int64_t stop = std::min<int64_t>(m.end + num_draft, len);
  std::vector<int32_t> out(history_.begin() + m.end, history_.begin() + stop);
  if (config_.repeat_cycle) {
    // (h ++ out)[e + j] with e + j >= len is out[e + j - len], already written since e < len.
    for (int64_t j = static_cast<int64_t>(out.size()); j < num_draft; ++j) {
      out.push_back(out[m.end + j - len]);
    }
  }
  return out;
}

Result<NgramDrafter> NgramDrafter::create(const NgramConfig& config) {
  MLASPEC_RETURN_IF_ERROR(validate(config));
  return NgramDrafter(config);
}

Status NgramDrafter::add_request(RequestId id, std::span<const int32_t> prompt,
                                 const model::SamplingParams& /*params: drafts are one-hot*/) {
  if (requests_.contains(id)) {
    return invalid_argument("request " + std::to_string(id) + " is already registered");
  }
  NgramIndex index = NgramIndex::create(config_).value();
  MLASPEC_RETURN_IF_ERROR(index.append(prompt));
  requests_.emplace(id, std::move(index));
  return Status::Ok();
}

Status NgramDrafter::propose(std::span<DraftSlot> batch) {
  for (DraftSlot& slot : batch) {
    auto it = requests_.find(slot.request);
    if (it == requests_.end()) {
      return not_found("request " + std::to_string(slot.request) + " is not registered");
    }
    if (slot.max_draft < 0) {
      return invalid_argument("request " + std::to_string(slot.request) + ": max_draft " +
                              std::to_string(slot.max_draft) + " is negative");
    }
    slot.tokens = it->second.propose(slot.max_draft);
    slot.probs.clear();
  }
  return Status::Ok();
}

Status NgramDrafter::commit(RequestId id, std::span<const int32_t> tokens) {
  auto it = requests_.find(id);
  if (it == requests_.end()) {
    return not_found("request " + std::to_string(id) + " is not registered");
  }
  return it->second.append(tokens);
}

Status NgramDrafter::remove_request(RequestId id) {
  if (requests_.erase(id) == 0) {
    return not_found("request " + std::to_string(id) + " is not registered");
  }
  return Status::Ok();
}

const NgramIndex* NgramDrafter::index(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

}  // namespace mlaspec::spec
