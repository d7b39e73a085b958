// The BPE model of tokenizer.json: vocab, merges (ranked by order; "a b" strings or [a, b]
// pairs), ignore_merges, byte_fallback (<0xXX> tokens), unk_token with fuse_unk,
// continuing_subword_prefix and end_of_word_suffix. dropout other than null / 0 is refused (it
// makes encode random).
//
// Merging follows tokenizers' Word::merge_all exactly: always the lowest-ranked adjacent pair,
// the leftmost on ties. Results of pieces under 256 bytes are cached.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"
#include "tokenizer/json_util.h"
#include "tokenizer/vocab.h"

namespace mlaspec::tokenizer {

class Bpe {
 public:
  static Result<std::unique_ptr<Bpe>> parse(const json_util::Json& model);

  // Appends the ids of one pre-tokenized piece. With `byte_level`, `piece` holds raw bytes that
  // the model reads as GPT-2 byte characters.
  Status tokenize(std::string_view piece, bool byte_level, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // nullptr for an id without a token.
  const std::string* id_to_token(int32_t id) const;
  // One past the largest id.
  int32_t size() const { return static_cast<int32_t>(id_to_token_.size()); }
  // Number of vocab entries (tokenizers' get_vocab_size, where added-token ids start).
  size_t entry_count() const { return vocab_.size(); }
  bool byte_fallback() const { return byte_fallback_; }

 private:
  struct MergeTable;
  Status merge_word(std::string_view word, std::vector<int32_t>& out) const;
  void merge_symbols(std::vector<int32_t>& ids, std::vector<uint32_t>& lens) const;

  TokenMap vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> has_token_;
  std::shared_ptr<const MergeTable> merges_;
  std::optional<std::string> unk_token_;
  std::string prefix_, suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  // Byte -> id of its GPT-2 character token; the fast path when all 256 exist and no
  // prefix/suffix applies.
  std::array<int32_t, 256> byte_ids_{};
  bool byte_fast_ = false;

  // Ids of recent pieces, in one open-addressing table over two arenas (a node-based map spent
  // a fifth of encode time on pointer chasing). Emptied when full.
  class WordCache {
   public:
    static constexpr size_t kMaxPiece = 256;
    static constexpr size_t kCapacity = size_t{1} << 16;
    bool find(std::string_view key, uint64_t hash, std::vector<int32_t>& out) const;
    void insert(std::string_view key, uint64_t hash, const std::vector<int32_t>& ids);

   private:
    struct Slot {
      uint64_t hash = 0;
      uint32_t key_offset = 0, ids_offset = 0;
      uint16_t key_length = 0, ids_length = 0;
      bool used = false;
    };
    std::vector<Slot> slots_ = std::vector<Slot>(kCapacity * 2);
    std::string keys_;
    std::vector<int32_t> ids_;
    size_t count_ = 0;
  };
  mutable std::mutex cache_mutex_;
  mutable WordCache cache_;
};

}  // namespace mlaspec::tokenizer
