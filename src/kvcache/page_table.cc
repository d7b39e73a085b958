#include "mlaspec/kvcache/page_table.h"

#include <algorithm>
#include <limits>

namespace mlaspec::kv {
namespace {
std::string str(int64_t v) {
  return std::to_string(v);
}
}  // namespace

Result<PageTables> PageTables::create(const PageTablesSpec& s) {
  const std::string& n = s.name;
  if (s.num_pages < 1)
    return invalid_argument(n + ": num_pages " + str(s.num_pages) + " is below the minimum 1");
  if (s.page_size < 1)
    return invalid_argument(n + ": page_size " + str(s.page_size) + " is below the minimum 1");
  if (s.max_requests < 1)
    return invalid_argument(n + ": max_requests " + str(s.max_requests) +
                            " is below the minimum 1");
  if (s.max_pages_per_request < 1) {
    return invalid_argument(n + ": max_pages_per_request " + str(s.max_pages_per_request) +
                            " is below the minimum 1");
  }
  // seq_lens are int32 (the attention API's type).
  const int64_t max_tokens = int64_t{s.max_pages_per_request} * s.page_size;
  if (max_tokens > std::numeric_limits<int32_t>::max()) {
    return invalid_argument(n + ": max_pages_per_request * page_size = " + str(max_tokens) +
                            " tokens exceeds the int32 limit");
  }
  if (int64_t{s.max_requests} * s.max_pages_per_request > (int64_t{1} << 31)) {
    return invalid_argument(n + ": table of " + str(s.max_requests) + " x " +
                            str(s.max_pages_per_request) + " entries is too large");
  }
  return PageTables(s);
}

PageTables::PageTables(const PageTablesSpec& spec)
    : spec_(spec),
      table_(static_cast<size_t>(spec.max_requests) * spec.max_pages_per_request, -1),
      seq_lens_(static_cast<size_t>(spec.max_requests), 0),
      slots_(static_cast<size_t>(spec.max_requests)) {
  // Stack with page 0 on top: pages are handed out in increasing order on a fresh pool.
  free_list_.resize(static_cast<size_t>(spec.num_pages));
  for (int i = 0; i < spec.num_pages; ++i)
    free_list_[static_cast<size_t>(i)] = spec.num_pages - 1 - i;
  slot_of_.reserve(static_cast<size_t>(spec.max_requests));
}

std::string PageTables::req_name(RequestId req) const {
  return spec_.name + ": request " + str(req);
}

Result<int> PageTables::find(RequestId req) const {
  auto it = slot_of_.find(req);
  if (it == slot_of_.end()) return not_found(req_name(req) + " unknown");
  return it->second;
}

Result<int> PageTables::slot_of(RequestId req) const {
  return find(req);
}

Status PageTables::add_request(RequestId req, int slot) {
  if (contains(req)) {
    return invalid_argument(req_name(req) + " already exists (slot " + str(slot_of_.at(req)) + ")");
  }
  if (slot >= spec_.max_requests) {
    return out_of_range(req_name(req) + ": slot " + str(slot) + " is outside [0, " +
                        str(spec_.max_requests) + ")");
  }
  if (slot >= 0) {
    if (slots_[static_cast<size_t>(slot)].used) {
      return invalid_argument(req_name(req) + ": slot " + str(slot) + " is held by request " +
                              str(slots_[static_cast<size_t>(slot)].req));
    }
  } else {
    for (int s = 0; s < spec_.max_requests; ++s) {
      if (!slots_[static_cast<size_t>(s)].used) {
        slot = s;
        break;
      }
    }
    if (slot < 0) {
      return resource_exhausted(req_name(req) + ": all " + str(spec_.max_requests) +
                                " request slots are in use");
    }
  }
  Slot& st = slots_[static_cast<size_t>(slot)];
  st = Slot{};
  st.used = true;
  st.req = req;
  slot_of_.emplace(req, slot);
  return Status::Ok();
}

bool PageTables::can_append(RequestId req, int64_t n) const {
  auto it = slot_of_.find(req);
  if (it == slot_of_.end() || n < 0) return false;
  const Slot& st = slots_[static_cast<size_t>(it->second)];
  const int64_t new_len = st.committed + st.pending + n;
  if (new_len > max_tokens_per_request()) return false;
  return pages_for(new_len) - st.num_pages <= free_pages();
}

Status PageTables::append(RequestId req, int64_t n) {
  Result<int> slot = find(req);
  if (!slot.ok()) return slot.status();
  if (n < 0) return invalid_argument(req_name(req) + ": append " + str(n) + " is negative");
  Slot& st = slots_[static_cast<size_t>(*slot)];
  const int64_t len = st.committed + st.pending;
  const int64_t new_len = len + n;
  if (new_len > max_tokens_per_request()) {
    return out_of_range(req_name(req) + ": append " + str(n) + " to length " + str(len) +
                        " gives " + str(new_len) + " tokens, over the per-request limit " +
                        str(max_tokens_per_request()) + " (" + str(spec_.max_pages_per_request) +
                        " pages of " + str(spec_.page_size) + ")");
  }
  const int need = pages_for(new_len) - st.num_pages;
  if (need > free_pages()) {
    // Nothing has changed yet: the request and the free list are exactly as before.
    return resource_exhausted(req_name(req) + ": append " + str(n) + " needs " + str(need) +
                              " more pages, " + str(free_pages()) + " of " + str(spec_.num_pages) +
                              " free");
  }
  int32_t* r = row(*slot);
  for (int i = 0; i < need; ++i) {
    r[st.num_pages++] = free_list_.back();
    free_list_.pop_back();
  }
  st.pending += n;
  seq_lens_[static_cast<size_t>(*slot)] = static_cast<int32_t>(new_len);
  return Status::Ok();
}

void PageTables::release_pages_after(int slot, int32_t keep) {
  Slot& st = slots_[static_cast<size_t>(slot)];
  int32_t* r = row(slot);
  // Return the last page first so that, with the stack's LIFO order, a rolled-back request that
  // appends again gets its pages back in the same order (good for locality, easy to reason about).
  while (st.num_pages > keep) {
    --st.num_pages;
    free_list_.push_back(r[st.num_pages]);
    r[st.num_pages] = -1;
  }
}

Status PageTables::commit(RequestId req, int64_t k) {
  Result<int> slot = find(req);
  if (!slot.ok()) return slot.status();
  Slot& st = slots_[static_cast<size_t>(*slot)];
  if (k < 0) return invalid_argument(req_name(req) + ": commit " + str(k) + " is negative");
  if (k > st.pending) {
    return invalid_argument(req_name(req) + ": commit " + str(k) + " exceeds the " +
                            str(st.pending) + " tokens appended");
  }
  st.committed += k;
  st.pending = 0;
  release_pages_after(*slot, pages_for(st.committed));
  seq_lens_[static_cast<size_t>(*slot)] = static_cast<int32_t>(st.committed);
  return Status::Ok();
}

Status PageTables::free(RequestId req) {
  Result<int> slot = find(req);
  if (!slot.ok()) return slot.status();
  release_pages_after(*slot, 0);
  slots_[static_cast<size_t>(*slot)] = Slot{};
  seq_lens_[static_cast<size_t>(*slot)] = 0;
  slot_of_.erase(req);
  return Status::Ok();
}

int64_t PageTables::length(RequestId req) const {
  auto it = slot_of_.find(req);
  if (it == slot_of_.end()) return 0;
  const Slot& st = slots_[static_cast<size_t>(it->second)];
  return st.committed + st.pending;
}

int64_t PageTables::committed(RequestId req) const {
  auto it = slot_of_.find(req);
  return it == slot_of_.end() ? 0 : slots_[static_cast<size_t>(it->second)].committed;
}

int64_t PageTables::pending(RequestId req) const {
  auto it = slot_of_.find(req);
  return it == slot_of_.end() ? 0 : slots_[static_cast<size_t>(it->second)].pending;
}

std::span<const int32_t> PageTables::pages(RequestId req) const {
  auto it = slot_of_.find(req);
  if (it == slot_of_.end()) return {};
  return {table_row(it->second),
          static_cast<size_t>(slots_[static_cast<size_t>(it->second)].num_pages)};
}

Status PageTables::token_slots(RequestId req, int64_t first, int64_t count, int32_t* out) const {
  Result<int> slot = find(req);
  if (!slot.ok()) return slot.status();
  const int64_t len = length(req);
  if (first < 0 || count < 0 || first + count > len) {
    return out_of_range(req_name(req) + ": tokens [" + str(first) + ", " + str(first + count) +
                        ") pass its length " + str(len));
  }
  const int32_t* r = table_row(*slot);
  const int64_t ps = spec_.page_size;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t t = first + i;
    out[i] = static_cast<int32_t>(r[t / ps] * ps + t % ps);
  }
  return Status::Ok();
}

Status PageTables::pending_slots(RequestId req, std::vector<int32_t>* out) const {
  Result<int> slot = find(req);
  if (!slot.ok()) return slot.status();
  const Slot& st = slots_[static_cast<size_t>(*slot)];
  out->resize(static_cast<size_t>(st.pending));
  return token_slots(req, st.committed, st.pending, out->data());
}

Result<WindowView> PageTables::window(RequestId req, int64_t window) const {
  Result<int> slot = find(req);
  if (!slot.ok()) return slot.status();
  if (window < 1)
    return invalid_argument(req_name(req) + ": window " + str(window) + " is below the minimum 1");
  const Slot& st = slots_[static_cast<size_t>(*slot)];
  const int64_t len = st.committed + st.pending;
  WindowView w;
  w.first_page = static_cast<int32_t>(std::max<int64_t>(0, len - window) / spec_.page_size);
  w.first_token = int64_t{w.first_page} * spec_.page_size;
  w.seq_len = static_cast<int32_t>(len - w.first_token);
  w.pages = std::span<const int32_t>(table_row(*slot) + w.first_page,
                                     static_cast<size_t>(st.num_pages - w.first_page));
  return w;
}

Status PageTables::check_invariants() const {
  std::vector<int> owner(static_cast<size_t>(spec_.num_pages), -1);  // slot, or -2 for free
  for (int32_t p : free_list_) {
    if (p < 0 || p >= spec_.num_pages)
      return internal_error(spec_.name + ": free list holds page " + str(p) + ", outside the pool");
    if (owner[static_cast<size_t>(p)] != -1)
      return internal_error(spec_.name + ": page " + str(p) + " is on the free list twice");
    owner[static_cast<size_t>(p)] = -2;
  }
  int live = 0;
  for (int s = 0; s < spec_.max_requests; ++s) {
    const Slot& st = slots_[static_cast<size_t>(s)];
    const int32_t* r = table_row(s);
    if (!st.used) {
      if (st.num_pages != 0 || seq_lens_[static_cast<size_t>(s)] != 0) {
        return internal_error(spec_.name + ": free slot " + str(s) + " has pages or a length");
      }
    } else {
      ++live;
      auto it = slot_of_.find(st.req);
      if (it == slot_of_.end() || it->second != s) {
        return internal_error(spec_.name + ": slot " + str(s) + " and the id map disagree");
      }
      const int64_t len = st.committed + st.pending;
      if (seq_lens_[static_cast<size_t>(s)] != len)
        return internal_error(req_name(st.req) + ": seq_len out of date");
      if (st.num_pages != pages_for(len)) {
        return internal_error(req_name(st.req) + " holds " + str(st.num_pages) + " pages for " +
                              str(len) + " tokens (needs " + str(pages_for(len)) + ")");
      }
    }
    for (int j = 0; j < spec_.max_pages_per_request; ++j) {
      const int32_t p = r[j];
      if (j >= st.num_pages) {
        if (p != -1)
          return internal_error(spec_.name + ": slot " + str(s) + " entry " + str(j) +
                                " past its pages is " + str(p) + ", not -1");
        continue;
      }
      if (p < 0 || p >= spec_.num_pages)
        return internal_error(req_name(st.req) + " holds page " + str(p) + ", outside the pool");
      if (owner[static_cast<size_t>(p)] == -2)
        return internal_error(req_name(st.req) + " holds free page " + str(p));
      if (owner[static_cast<size_t>(p)] >= 0) {
        return internal_error("page " + str(p) + " owned twice (slots " +
                              str(owner[static_cast<size_t>(p)]) + " and " + str(s) + ")");
      }
      owner[static_cast<size_t>(p)] = s;
    }
  }
  if (live != num_requests())
    return internal_error(spec_.name + ": id map size differs from used slots");
  for (int p = 0; p < spec_.num_pages; ++p) {
    if (owner[static_cast<size_t>(p)] == -1)
      return internal_error(spec_.name + ": page " + str(p) + " leaked (neither free nor owned)");
  }
  return Status::Ok();
}

}  // namespace mlaspec::kv
