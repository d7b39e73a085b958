// PageTables: the host-side page allocator and per-request page tables of one pool.
//
// Each request owns a *slot* (a row of a [max_requests, max_pages_per_request] int32 table) whose
// first num_pages entries are the request's page ids in token order (entry j holds tokens
// [j*page_size, (j+1)*page_size)); the rest of the row is -1. seq_lens[slot] is the request's
// length. These two arrays are the memory the attention backends' block_table / seq_lens views
// point into (kvcache/batch_view.h), so keeping them current costs nothing per step.
//
// Speculative step (docs/architecture.md, "The speculative step"):
//   append(req, n)  reserves slots for n new tokens after the request's current length, taking
//                   pages from the free list as needed. Appends accumulate until the next commit:
//                   "pending" = tokens appended since the last commit.
//                   On exhaustion: kResourceExhausted and the request (and every other) is
//                   exactly as before.
//   commit(req, k)  keeps the first k pending tokens and rolls back the rest; pages no longer
//                   covering any kept token return to the free list. k <= pending.
//   rollback(req)   = commit(req, 0).
//   free(req)       returns all of the request's pages and its slot.
// Errors name the value and the limit ("request 7: commit 9 exceeds the 8 tokens appended").
// Pages are never shared between requests (no prefix sharing yet). Not thread-safe: one
// scheduler thread owns a PageTables.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::kv {

using RequestId = int64_t;

struct PageTablesSpec {
  std::string name = "kv";        // the pool's name, for messages
  int num_pages = 1;              // pages in the pool
  int page_size = 64;             // tokens per page
  int max_requests = 1;           // slots (rows of the block table)
  int max_pages_per_request = 1;  // row width: a request holds at most this many pages
};

// A page-aligned window over a request's most recent tokens (sliding-window drafters).
struct WindowView {
  std::span<const int32_t> pages;  // the request's pages from first_page on (no copy)
  int32_t first_page = 0;          // index into the request's page list
  int64_t first_token = 0;         // = first_page * page_size: the window's first position
  int32_t seq_len = 0;             // tokens in the window: length - first_token
};

class PageTables {
 public:
  static Result<PageTables> create(const PageTablesSpec& spec);

  const PageTablesSpec& spec() const { return spec_; }
  int page_size() const { return spec_.page_size; }
  int num_pages() const { return spec_.num_pages; }
  int free_pages() const { return static_cast<int>(free_list_.size()); }
  int used_pages() const { return spec_.num_pages - free_pages(); }
  int num_requests() const { return static_cast<int>(slot_of_.size()); }
  int64_t max_tokens_per_request() const {
    return int64_t{spec_.max_pages_per_request} * spec_.page_size;
  }
  // Pages needed to hold `tokens` tokens.
  int pages_for(int64_t tokens) const {
    return static_cast<int>((tokens + spec_.page_size - 1) / spec_.page_size);
  }

  // Registers a request with length 0. `slot` < 0 takes the lowest free slot; a given slot must be
  // free (schedulers place batchmates in consecutive slots so batch views need no copy).
  // Errors: duplicate id (kInvalidArgument), no free slot (kResourceExhausted), bad slot.
  Status add_request(RequestId req, int slot = -1);
  Status append(RequestId req, int64_t n);
  Status commit(RequestId req, int64_t k);
  Status rollback(RequestId req) { return commit(req, 0); }
  Status free(RequestId req);

  // True if a pending append of n tokens would succeed right now (no state change).
  bool can_append(RequestId req, int64_t n) const;

  bool contains(RequestId req) const { return slot_of_.count(req) != 0; }
  Result<int> slot_of(RequestId req) const;
  // Length = committed + pending (what the attention's seq_len counts). 0 for unknown requests.
  int64_t length(RequestId req) const;
  int64_t committed(RequestId req) const;
  int64_t pending(RequestId req) const;
  // The request's page ids in token order (a view of its table row; empty if unknown). Valid
  // until the next append/commit/free of that request.
  std::span<const int32_t> pages(RequestId req) const;

  // Flat slot ids (page * page_size + offset) of tokens [first, first + count) of the request,
  // written to out[0..count). kOutOfRange if the range passes the request's length.
  Status token_slots(RequestId req, int64_t first, int64_t count, int32_t* out) const;
  // Slot ids of the pending tokens (the rows a verify step writes), appended to *out after
  // clearing it.
  Status pending_slots(RequestId req, std::vector<int32_t>* out) const;

  // The last `window` tokens, start rounded down to a page boundary: covers
  // min(window, length) .. window + page_size - 1 tokens. window >= 1.
  Result<WindowView> window(RequestId req, int64_t window) const;

  // Raw tables the batch views point into: [max_requests, max_pages_per_request] and
  // [max_requests]. Rows of free slots are all -1 with seq_len 0.
  const int32_t* table_data() const { return table_.data(); }
  const int32_t* seq_lens_data() const { return seq_lens_.data(); }
  const int32_t* table_row(int slot) const {
    return table_.data() + static_cast<size_t>(slot) * spec_.max_pages_per_request;
  }
  RequestId request_at(int slot) const { return slots_.at(static_cast<size_t>(slot)).req; }
  bool slot_used(int slot) const { return slots_.at(static_cast<size_t>(slot)).used; }

  // Full consistency check (tests, debug builds): every page is free or owned by exactly one
  // request, none leaked, each request holds exactly pages_for(length) pages, rows padded
  // with -1, seq_lens match. Returns kInternal naming the first violation.
  Status check_invariants() const;

 private:
  struct Slot {
    bool used = false;
    RequestId req = -1;
    int64_t committed = 0;
    int64_t pending = 0;
    int32_t num_pages = 0;
  };
  explicit PageTables(const PageTablesSpec& spec);
  Result<int> find(RequestId req) const;
  int32_t* row(int slot) {
    return table_.data() + static_cast<size_t>(slot) * spec_.max_pages_per_request;
  }
  void release_pages_after(int slot, int32_t keep);
  std::string req_name(RequestId req) const;

  PageTablesSpec spec_;
  std::vector<int32_t> table_;     // [max_requests, max_pages_per_request]
  std::vector<int32_t> seq_lens_;  // [max_requests]
  std::vector<Slot> slots_;
  std::vector<int32_t> free_list_;  // a stack; the top is handed out first
  std::unordered_map<RequestId, int> slot_of_;
};

}  // namespace mlaspec::kv
