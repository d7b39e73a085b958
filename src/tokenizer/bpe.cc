#include "tokenizer/bpe.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <queue>

#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {

// (left id, right id) -> (rank, merged id), open addressing; later duplicates of a pair override
// earlier ones, as tokenizers' HashMap collect does.
struct Bpe::MergeTable {
  struct Entry {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t new_id = 0;
  };
  static constexpr uint64_t kEmpty = ~0ull;
  std::vector<Entry> slots;
  uint64_t mask = 0;

  explicit MergeTable(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots.resize(cap);
    mask = cap - 1;
  }
  static uint64_t key_of(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // murmur3's finaliser: both ids must reach the low bits the mask keeps (a plain multiply
  // left the left id out of them, so pairs sharing a right id shared one probe chain).
  static uint64_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
  }
  void insert(int32_t a, int32_t b, int32_t rank, int32_t new_id) {
    const uint64_t k = key_of(a, b);
    for (uint64_t h = hash(k) & mask;; h = (h + 1) & mask) {
      if (slots[h].key == kEmpty || slots[h].key == k) {
        slots[h] = {k, rank, new_id};
        return;
      }
    }
  }
  const Entry* find(int32_t a, int32_t b) const {
    const uint64_t k = key_of(a, b);
    for (uint64_t h = hash(k) & mask;; h = (h + 1) & mask) {
      if (slots[h].key == k) return &slots[h];
      if (slots[h].key == kEmpty) return nullptr;
    }
  }
};

Result<std::unique_ptr<Bpe>> Bpe::parse(const json_util::Json& m) {
  using json_util::Json;
  const std::string what = "model BPE";
  auto bpe = std::make_unique<Bpe>();
  if (auto d = m.find("dropout"); d != m.end() && !d->is_null()) {
    if (!d->is_number() || d->get<double>() != 0.0) {
      return unsupported(what + ": dropout " + d->dump() +
                         " is not supported (only null or 0: dropout makes encode random)");
    }
  }
  auto opt_string = [&](const char* key, std::optional<std::string>& out) -> Status {
    auto it = m.find(key);
    if (it == m.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return data_loss(what + ": \"" + key + "\" must be a string or null");
    out = it->get<std::string>();
    return Status::Ok();
  };
  std::optional<std::string> prefix, suffix;
  MLASPEC_RETURN_IF_ERROR(opt_string("unk_token", bpe->unk_token_));
  MLASPEC_RETURN_IF_ERROR(opt_string("continuing_subword_prefix", prefix));
  MLASPEC_RETURN_IF_ERROR(opt_string("end_of_word_suffix", suffix));
  bpe->prefix_ = prefix.value_or("");
  bpe->suffix_ = suffix.value_or("");
  for (auto [key, flag] :
       {std::pair{"fuse_unk", &bpe->fuse_unk_}, std::pair{"byte_fallback", &bpe->byte_fallback_},
        std::pair{"ignore_merges", &bpe->ignore_merges_}}) {
    auto v = json_util::get_bool(m, key, false, what);
    if (!v.ok()) return v.status();
    *flag = *v;
  }

  auto vit = m.find("vocab");
  if (vit == m.end() || !vit->is_object()) return data_loss(what + ": \"vocab\" must be an object");
  int64_t max_id = -1;
  bpe->vocab_.reserve(vit->size());
  for (auto it = vit->begin(); it != vit->end(); ++it) {
    if (!it->is_number_integer())
      return data_loss(what + ": vocab id of \"" + it.key() + "\" is not an integer");
    const int64_t id = it->get<int64_t>();
    if (id < 0 || id >= (int64_t{1} << 30)) {
      return data_loss(what + ": vocab id " + std::to_string(id) + " of \"" + it.key() +
                       "\" is outside [0, 2^30)");
    }
    bpe->vocab_[it.key()] = static_cast<int32_t>(id);
    max_id = std::max(max_id, id);
  }
  if (max_id + 1 > static_cast<int64_t>(vit->size()) * 4 + 1024) {
    return data_loss(what + ": vocab ids are sparse (largest " + std::to_string(max_id) + " for " +
                     std::to_string(vit->size()) + " tokens)");
  }
  bpe->id_to_token_.resize(static_cast<size_t>(max_id + 1));
  bpe->has_token_.resize(static_cast<size_t>(max_id + 1));
  for (const auto& [token, id] : bpe->vocab_) {
    bpe->id_to_token_[id] = token;
    bpe->has_token_[id] = true;
  }

  auto mit = m.find("merges");
  if (mit == m.end() || !mit->is_array()) return data_loss(what + ": \"merges\" must be an array");
  auto table = std::make_shared<MergeTable>(mit->size());
  int32_t rank = 0;
  std::string merged;
  for (const Json& item : *mit) {
    std::string a, b;
    if (item.is_string()) {
      // Legacy "a b": exactly one space.
      const std::string s = item.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) {
        return data_loss(what + ": merge \"" + s + "\" is not two tokens separated by a space");
      }
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (item.is_array() && item.size() == 2 && item[0].is_string() && item[1].is_string()) {
      a = item[0].get<std::string>();
      b = item[1].get<std::string>();
    } else {
      return data_loss(what + ": merge " + std::to_string(rank) +
                       " is neither \"a b\" nor [\"a\", \"b\"]");
    }
    auto ia = bpe->vocab_.find(a), ib = bpe->vocab_.find(b);
    if (ia == bpe->vocab_.end() || ib == bpe->vocab_.end()) {
      return data_loss(what + ": merge \"" + a + " " + b + "\" names a token not in the vocab");
    }
    merged = a;
    merged.append(b, std::min(b.size(), bpe->prefix_.size()), std::string::npos);
    auto im = bpe->vocab_.find(merged);
    if (im == bpe->vocab_.end()) {
      return data_loss(what + ": merge result \"" + merged + "\" is not in the vocab");
    }
    table->insert(ia->second, ib->second, rank, im->second);
    ++rank;
  }
  bpe->merges_ = std::move(table);

  bpe->byte_fast_ = bpe->prefix_.empty() && bpe->suffix_.empty();
  const ByteTable& bt = byte_table();
  for (int b = 0; b < 256; ++b) {
    auto it = bpe->vocab_.find(bt.byte_to_utf8[b]);
    bpe->byte_ids_[b] = it == bpe->vocab_.end() ? -1 : it->second;
    if (it == bpe->vocab_.end()) bpe->byte_fast_ = false;
  }
  return Result<std::unique_ptr<Bpe>>(std::move(bpe));
}

std::optional<int32_t> Bpe::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* Bpe::id_to_token(int32_t id) const {
  if (id < 0 || id >= size() || !has_token_[id]) return nullptr;
  return &id_to_token_[id];
}

void Bpe::merge_symbols(std::vector<int32_t>& ids, std::vector<uint32_t>& lens) const {
  const MergeTable& mt = *merges_;
  const size_t n = ids.size();
  if (n < 2) return;
  if (n <= 64) {
    // Short words: ranks of adjacent pairs in an array, one scan per merge. Picks the same
    // pair as tokenizers' heap: the lowest rank, the leftmost on ties.
    std::vector<int32_t> rank(n - 1), merged(n - 1);
    auto fill = [&](size_t i) {
      const MergeTable::Entry* e = mt.find(ids[i], ids[i + 1]);
      rank[i] = e ? e->rank : INT32_MAX;
      merged[i] = e ? e->new_id : -1;
    };
    for (size_t i = 0; i + 1 < ids.size(); ++i) fill(i);
    while (ids.size() > 1) {
      size_t best = 0;
      for (size_t i = 1; i < rank.size(); ++i) {
        if (rank[i] < rank[best]) best = i;
      }
      if (rank[best] == INT32_MAX) break;
      ids[best] = merged[best];
      ids.erase(ids.begin() + static_cast<long>(best) + 1);
      rank.erase(rank.begin() + static_cast<long>(best));
      merged.erase(merged.begin() + static_cast<long>(best));
      if (best < rank.size()) fill(best);
      if (best > 0) fill(best - 1);
    }
    return;
  }
  // Long words: tokenizers' priority queue over a linked list of symbols.
  struct Sym {
    int32_t id;
    int32_t prev, next;
    uint32_t len;
  };
  std::vector<Sym> s(n);
  for (size_t i = 0; i < n; ++i) {
    s[i] = {ids[i], static_cast<int32_t>(i) - 1, i + 1 < n ? static_cast<int32_t>(i + 1) : -1,
            lens[i]};
  }
  struct Item {
    int32_t rank;
    int32_t pos;
    int32_t new_id;
    bool operator>(const Item& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  for (size_t i = 0; i + 1 < n; ++i) {
    if (const auto* e = mt.find(ids[i], ids[i + 1])) {
      queue.push({e->rank, static_cast<int32_t>(i), e->new_id});
    }
  }
  while (!queue.empty()) {
    const Item top = queue.top();
    queue.pop();
    Sym& cur = s[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;
    const int32_t next_pos = cur.next;
    const Sym right = s[next_pos];
    const auto* e = mt.find(cur.id, right.id);
    if (!e || e->new_id != top.new_id) continue;  // stale entry
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    s[next_pos].len = 0;
    if (right.next >= 0) s[right.next].prev = top.pos;
    if (cur.prev >= 0) {
      if (const auto* pe = mt.find(s[cur.prev].id, cur.id)) {
        queue.push({pe->rank, cur.prev, pe->new_id});
      }
    }
    if (cur.next >= 0) {
      if (const auto* ne = mt.find(cur.id, s[cur.next].id)) {
        queue.push({ne->rank, top.pos, ne->new_id});
      }
    }
  }
  ids.clear();
  for (const Sym& sym : s) {
    if (sym.len) ids.push_back(sym.id);
  }
}

// tokenizers' BPE::merge_word: the initial symbols of `word` (one per character, with prefix /
// suffix, byte fallback or unk), then the merges.
Status Bpe::merge_word(std::string_view w, std::vector<int32_t>& out) const {
  std::vector<int32_t> ids;
  std::vector<uint32_t> lens;
  ids.reserve(w.size());
  lens.reserve(w.size());
  std::optional<std::pair<int32_t, uint32_t>> unk;
  std::string s;
  auto unk_id = [&]() -> Result<int32_t> {
    auto it = vocab_.find(*unk_token_);
    if (it == vocab_.end()) {
      return data_loss("model BPE: unk_token \"" + *unk_token_ + "\" is not in the vocab");
    }
    return it->second;
  };
  for (size_t i = 0; i < w.size();) {
    const size_t n = utf8::char_length(static_cast<unsigned char>(w[i]));
    const bool first = i == 0, last = i + n >= w.size();
    s.assign(first ? "" : prefix_);
    s.append(w.substr(i, n));
    if (last) s += suffix_;
    i += n;
    if (auto it = vocab_.find(s); it != vocab_.end()) {
      if (unk) {
        ids.push_back(unk->first);
        lens.push_back(unk->second);
        unk.reset();
      }
      ids.push_back(it->second);
      lens.push_back(static_cast<uint32_t>(n));
      continue;
    }
    if (byte_fallback_) {
      std::vector<int32_t> bytes;
      for (const unsigned char b : s) {
        char code[8];
        std::snprintf(code, sizeof(code), "<0x%02X>", b);
        auto it = vocab_.find(std::string_view(code));
        if (it == vocab_.end()) break;
        bytes.push_back(it->second);
      }
      if (bytes.size() == s.size()) {
        // tokenizers does not flush a pending unk here: it lands after these bytes.
        for (const int32_t b : bytes) {
          ids.push_back(b);
          lens.push_back(1);
        }
        continue;
      }
    }
    if (unk_token_) {
      if (unk && fuse_unk_) {
        unk->second += static_cast<uint32_t>(n);
      } else {
        if (unk) {
          ids.push_back(unk->first);
          lens.push_back(unk->second);
        }
        auto id = unk_id();
        if (!id.ok()) return id.status();
        unk = std::pair{*id, static_cast<uint32_t>(n)};
      }
    }
  }
  if (unk) {
    ids.push_back(unk->first);
    lens.push_back(unk->second);
  }
  merge_symbols(ids, lens);
  out.insert(out.end(), ids.begin(), ids.end());
  return Status::Ok();
}

namespace {

uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: pieces are a few bytes long
  for (const unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

}  // namespace

bool Bpe::WordCache::find(std::string_view key, uint64_t hash, std::vector<int32_t>& out) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used) return false;
    if (s.hash == hash && s.key_length == key.size() &&
        std::string_view(keys_).substr(s.key_offset, s.key_length) == key) {
      out.insert(out.end(), ids_.begin() + s.ids_offset,
                 ids_.begin() + s.ids_offset + s.ids_length);
      return true;
    }
  }
}

void Bpe::WordCache::insert(std::string_view key, uint64_t hash, const std::vector<int32_t>& ids) {
  if (key.size() >= kMaxPiece || ids.size() >= kMaxPiece) return;
  if (count_ >= kCapacity) {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    keys_.clear();
    ids_.clear();
    count_ = 0;
  }
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].used) {
    if (slots_[i].hash == hash &&
        std::string_view(keys_).substr(slots_[i].key_offset, slots_[i].key_length) == key) {
      return;
    }
    i = (i + 1) & mask;
  }
  slots_[i] = {hash,
               static_cast<uint32_t>(keys_.size()),
               static_cast<uint32_t>(ids_.size()),
               static_cast<uint16_t>(key.size()),
               static_cast<uint16_t>(ids.size()),
               true};
  keys_.append(key);
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  ++count_;
}

Status Bpe::tokenize(std::string_view piece, bool byte_level, std::vector<int32_t>& out) const {
  if (piece.empty()) return Status::Ok();
  if (byte_level && byte_fast_ && !ignore_merges_ && piece.size() <= 2) {
    // One or two bytes (spaces, punctuation, short words): one merge lookup at most, cheaper
    // than the cache.
    const int32_t a = byte_ids_[static_cast<unsigned char>(piece[0])];
    if (piece.size() == 1) {
      out.push_back(a);
      return Status::Ok();
    }
    const int32_t b = byte_ids_[static_cast<unsigned char>(piece[1])];
    if (const auto* e = merges_->find(a, b)) {
      out.push_back(e->new_id);
    } else {
      out.push_back(a);
      out.push_back(b);
    }
    return Status::Ok();
  }
  const bool cacheable = piece.size() < WordCache::kMaxPiece;
  const uint64_t hash = cacheable ? hash_bytes(piece) : 0;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.find(piece, hash, out)) return Status::Ok();
  }
  std::vector<int32_t> ids;
  if (byte_level && byte_fast_ && !ignore_merges_) {
    ids.reserve(piece.size());
    for (const unsigned char b : piece) ids.push_back(byte_ids_[b]);
    std::vector<uint32_t> lens(ids.size(), 1);
    merge_symbols(ids, lens);
  } else {
    std::string mapped;
    std::string_view word = piece;
    if (byte_level) {
      const ByteTable& bt = byte_table();
      mapped.reserve(piece.size() * 2);
      for (const unsigned char b : piece) mapped += bt.byte_to_utf8[b];
      word = mapped;
    }
    bool done = false;
    if (ignore_merges_) {
      if (auto it = vocab_.find(word); it != vocab_.end()) {
        ids.push_back(it->second);
        done = true;
      }
    }
    if (!done && byte_level && byte_fast_) {
      for (const unsigned char b : piece) ids.push_back(byte_ids_[b]);
      std::vector<uint32_t> lens(ids.size(), 1);
      merge_symbols(ids, lens);
    } else if (!done) {
      MLASPEC_RETURN_IF_ERROR(merge_word(word, ids));
    }
  }
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cache_.insert(piece, hash, ids);
  }
  return Status::Ok();
}

}  // namespace mlaspec::tokenizer
