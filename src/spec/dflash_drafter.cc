// DFlashDrafter: per-request history and context bookkeeping around model::DFlashNetwork.
#include "mlaspec/spec/dflash_drafter.h"

#include <algorithm>
#include <cstdint>

#include "mlaspec/core/log.h"
#include "mlaspec/spec/draft_pool_rule.h"

namespace mlaspec::spec {
namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}
std::string req_name(RequestId id) {
  return "dflash: request " + str(id);
}

}  // namespace

DFlashDrafter::DFlashDrafter(model::DFlashNetwork network, kv::KvPool pool, kv::PageTables tables,
                             std::string pool_reason)
    : network_(std::move(network)),
      pool_(std::move(pool)),
      tables_(std::move(tables)),
      pool_reason_(std::move(pool_reason)) {}

Result<std::unique_ptr<DFlashDrafter>> DFlashDrafter::create(model::DFlashNetwork network,
                                                             const DFlashDrafterConfig& config) {
  if (config.page_size < 1 || config.max_requests < 1 || config.max_tokens_per_request < 1 ||
      config.num_pages < 0) {
    return invalid_argument("dflash: page_size " + str(config.page_size) + ", max_requests " +
                            str(config.max_requests) + ", max_tokens_per_request " +
                            str(config.max_tokens_per_request) + " must be >= 1 and num_pages " +
                            str(config.num_pages) + " >= 0");
  }
  Result<DTypeDecision> dtype = choose_draft_kv_dtype(
      config.target_kv_dtype, model::DFlashNetwork::attention_caps(), config.pool_dtype);
  if (!dtype.ok()) return dtype.status();
  const int64_t pages_per_request =
      (config.max_tokens_per_request + config.page_size - 1) / config.page_size;
  const int64_t num_pages =
      config.num_pages > 0 ? config.num_pages : pages_per_request * config.max_requests;
  if (pages_per_request > INT32_MAX || num_pages > INT32_MAX) {
    return invalid_argument("dflash: " + str(num_pages) + " pages exceed the page tables' limit");
  }
  Result<kv::KvPool> pool = kv::KvPool::create(
      network.kv_pool_spec(static_cast<int>(num_pages), config.page_size, dtype->dtype));
  if (!pool.ok()) return pool.status();
  Result<kv::PageTables> tables =
      kv::PageTables::create({"draft", static_cast<int>(num_pages), config.page_size,
                              config.max_requests, static_cast<int>(pages_per_request)});
  if (!tables.ok()) return tables.status();
  log_info(network.config().describe() + "; draft window " +
           (network.draft_window() > 0 ? str(network.draft_window()) : std::string("none")) +
           "; pool " + pool->describe() + " (" + dtype->reason + ")");
  return std::unique_ptr<DFlashDrafter>(new DFlashDrafter(
      std::move(network), std::move(*pool), std::move(*tables), std::move(dtype->reason)));
}

Result<DFlashDrafter::Request*> DFlashDrafter::find(RequestId id, const char* what) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return not_found(req_name(id) + " is unknown (" + what + ")");
  return &it->second;
}

std::span<const int32_t> DFlashDrafter::history(RequestId id) const {
  auto it = requests_.find(id);
  if (it == requests_.end()) return {};
  return it->second.history;
}

std::vector<int> DFlashDrafter::capture_layers() const {
  return network_.config().target_layer_ids;
}

Status DFlashDrafter::add_request(RequestId id, std::span<const int32_t> prompt,
                                  const model::SamplingParams& params) {
  if (requests_.count(id) != 0) return invalid_argument(req_name(id) + " is already registered");
  MLASPEC_RETURN_IF_ERROR(model::validate(params));
  const int vocab = network_.config().vocab_size;
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (prompt[i] < 0 || prompt[i] >= vocab) {
      return invalid_argument(req_name(id) + ": prompt token " + str(static_cast<int64_t>(i)) +
                              " = " + str(prompt[i]) + " is outside [0, " + str(vocab) + ")");
    }
  }
  MLASPEC_RETURN_IF_ERROR(tables_.add_request(id));
  requests_[id] = Request{std::vector<int32_t>(prompt.begin(), prompt.end()), params};
  return Status::Ok();
}

Status DFlashDrafter::commit(RequestId id, std::span<const int32_t> tokens) {
  Result<Request*> r = find(id, "commit");
  if (!r.ok()) return r.status();
  (*r)->history.insert((*r)->history.end(), tokens.begin(), tokens.end());
  return Status::Ok();
}

Status DFlashDrafter::remove_request(RequestId id) {
  Result<Request*> r = find(id, "remove_request");
  if (!r.ok()) return r.status();
  // Its waiting rows go too: their pages are freed now and may be another request's next.
  std::erase_if(pending_, [id](const PendingContext& p) { return p.id == id; });
  MLASPEC_RETURN_IF_ERROR(tables_.free(id));
  requests_.erase(id);
  return Status::Ok();
}

Status DFlashDrafter::append_context(RequestId id, const ContextRows& rows) {
  Result<Request*> r = find(id, "append_context");
  if (!r.ok()) return r.status();
  const model::DFlashConfig& c = network_.config();
  const int64_t L = tables_.length(id);
  if (rows.first_position != L) {
    return invalid_argument(req_name(id) + ": context rows start at position " +
                            str(rows.first_position) + " but the drafter holds positions [0, " +
                            str(L) + "): rows must continue the context without a gap");
  }
  if (rows.rows < 0 || rows.first_row < 0) {
    return invalid_argument(req_name(id) + ": rows " + str(rows.rows) + " and first_row " +
                            str(rows.first_row) + " must be >= 0");
  }
  if (rows.hidden.size() != c.target_layer_ids.size()) {
    return invalid_argument(req_name(id) + ": " + str(static_cast<int64_t>(rows.hidden.size())) +
                            " hidden-state matrices given, the drafter captures " +
                            str(static_cast<int64_t>(c.target_layer_ids.size())) +
                            " target layers");
  }
  const int64_t need = (rows.first_row + rows.rows) * c.target_hidden_size;
  for (size_t k = 0; k < rows.hidden.size(); ++k) {
    if (static_cast<int64_t>(rows.hidden[k].size()) < need) {
      return invalid_argument(req_name(id) + ": capture layer " + str(c.target_layer_ids[k]) +
                              " holds " + str(static_cast<int64_t>(rows.hidden[k].size())) +
                              " values, rows [" + str(rows.first_row) + ", " +
                              str(rows.first_row + rows.rows) + ") of width " +
                              str(c.target_hidden_size) + " need " + str(need));
    }
  }
  if (rows.rows == 0) return Status::Ok();
  MLASPEC_RETURN_IF_ERROR(tables_.append(id, rows.rows));
  MLASPEC_RETURN_IF_ERROR(tables_.commit(id, rows.rows));
  PendingContext p;
  p.id = id;
  p.rows = rows.rows;
  p.first_position = rows.first_position;
  const int64_t width = c.target_hidden_size;
  for (const std::vector<float>& h : rows.hidden) {
    p.layers.emplace_back(h.begin() + rows.first_row * width,
                          h.begin() + (rows.first_row + rows.rows) * width);
  }
  pending_.push_back(std::move(p));
  return Status::Ok();
}

Status DFlashDrafter::flush_context() {
  if (pending_.empty()) return Status::Ok();
  std::vector<model::DFlashContextRows> batch(pending_.size());
  for (size_t i = 0; i < pending_.size(); ++i) {
    const PendingContext& p = pending_[i];
    model::DFlashContextRows& ctx = batch[i];
    for (const std::vector<float>& h : p.layers) ctx.layers.push_back(h.data());
    ctx.rows = p.rows;
    ctx.first_position = p.first_position;
    ctx.pages = tables_.pages(p.id);
  }
  const Status s = network_.append_context(batch, pool_);
  pending_.clear();
  return s.ok() ? s : s.with_context("dflash: writing the appended context rows");
}

Status DFlashDrafter::run_blocks(std::span<DraftSlot> batch,
                                 std::vector<model::DFlashBlock>* blocks,
                                 std::vector<size_t>* slot_of_block) {
  blocks->clear();
  slot_of_block->clear();
  MLASPEC_RETURN_IF_ERROR(flush_context());
  for (size_t i = 0; i < batch.size(); ++i) {
    DraftSlot& slot = batch[i];
    slot.tokens.clear();
    slot.probs.clear();
    Result<Request*> r = find(slot.request, "propose");
    if (!r.ok()) return r.status();
    if (slot.max_draft <= 0) continue;
    const std::vector<int32_t>& h = (*r)->history;
    const int64_t L = tables_.length(slot.request);
    if (h.empty() || static_cast<int64_t>(h.size()) != L + 1) {
      return invalid_argument(
          req_name(slot.request) + ": the anchor (its last committed token) sits at position " +
          str(static_cast<int64_t>(h.size()) - 1) +
          " but the drafter holds context for positions [0, " + str(L) +
          "); append_context the target hidden states of every committed token but the " +
          "last before propose");
    }
    model::DFlashBlock b;
    b.anchor = h.back();
    b.context_len = L;
    b.pages = tables_.pages(slot.request);
    blocks->push_back(std::move(b));
    slot_of_block->push_back(i);
  }
  return network_.propose(*blocks, pool_);
}

const model::SamplingParams* DFlashDrafter::sampling(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second.params;
}

Status DFlashDrafter::choose_token(std::span<const float> logits,
                                   const model::SamplingParams& params, int64_t position,
                                   std::span<float> q, int32_t* token) {
  if (params.greedy()) {
    MLASPEC_RETURN_IF_ERROR(model::check_logits(logits));
    *token = model::argmax(logits);
    return Status::Ok();
  }
  MLASPEC_RETURN_IF_ERROR(model::process_logits(logits, params, q));
  *token = model::sample_from(
      q, model::random_uniform(params.seed, position, model::RandomStream::kDraft));
  return Status::Ok();
}

Status DFlashDrafter::propose(std::span<DraftSlot> batch) {
  const int nd = network_.num_draft();
  const int vocab = network_.config().vocab_size;
  std::vector<model::DFlashBlock> blocks;
  std::vector<size_t> slot_of_block;
  MLASPEC_RETURN_IF_ERROR(run_blocks(batch, &blocks, &slot_of_block));
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    DraftSlot& slot = batch[slot_of_block[bi]];
    const model::DFlashBlock& b = blocks[bi];
    const model::SamplingParams& params = requests_.at(slot.request).params;
    const int n = std::min(nd, slot.max_draft);
    if (!params.greedy()) slot.probs.resize(static_cast<size_t>(n) * vocab);
    for (int k = 0; k < n; ++k) {
      std::span<const float> row(b.logits.data() + static_cast<size_t>(k) * vocab,
                                 static_cast<size_t>(vocab));
      std::span<float> q;
      if (!params.greedy())
        q = {slot.probs.data() + static_cast<size_t>(k) * vocab, static_cast<size_t>(vocab)};
      // Slot k + 1 drafts position L + k + 1: the draw its proposal for that position uses.
      int32_t token = 0;
      MLASPEC_RETURN_IF_ERROR(choose_token(row, params, b.context_len + k + 1, q, &token));
      slot.tokens.push_back(token);
    }
  }
  return Status::Ok();
}

}  // namespace mlaspec::spec
