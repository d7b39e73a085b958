#include "mlaspec/spec/acceptor.h"

#include <cmath>
#include <string>

namespace mlaspec::spec {
namespace {

using model::RandomStream;

std::string str(int64_t v) {
  return std::to_string(v);
}

Status check_draft(std::span<const int32_t> draft, int64_t vocab) {
  if (vocab <= 0) return invalid_argument("vocab " + str(vocab) + " is not positive");
  for (size_t i = 0; i < draft.size(); ++i) {
    if (draft[i] < 0 || draft[i] >= vocab) {
      return invalid_argument("draft token " + str(draft[i]) + " (draft " + str(i) +
                              ") is outside the vocabulary [0, " + str(vocab) + ")");
    }
  }
  return Status::Ok();
}

Status check_rows(const char* what, size_t got, size_t rows, int64_t vocab) {
  if (got != rows * static_cast<size_t>(vocab)) {
    return invalid_argument(std::string(what) + " has " + str(got) + " values, expected " +
                            str(rows) + " rows x vocab " + str(vocab));
  }
  return Status::Ok();
}

Status check_value(const char* what, size_t row, int32_t token, float v) {
  if (!std::isfinite(v) || v < 0.0f) {
    return invalid_argument(std::string(what) + " row " + str(row) + " token " + str(token) +
                            " is " + std::to_string(v) + ", not a probability");
  }
  return Status::Ok();
}

// Every verify row's logits, read or not: a NaN anywhere means a broken forward, reported whatever
// the draws.
Status check_logit_rows(std::span<const float> logits, size_t rows, int64_t vocab) {
  for (size_t i = 0; i < rows; ++i) {
    MLASPEC_RETURN_IF_ERROR(
        model::check_logits(logits.subspan(i * vocab, vocab)).with_context("target row " + str(i)));
  }
  return Status::Ok();
}

// A row a token is drawn from: every value finite and >= 0, and some mass.
Status check_full_row(const char* what, size_t row, std::span<const float> p) {
  double sum = 0.0;
  for (size_t t = 0; t < p.size(); ++t) {
    MLASPEC_RETURN_IF_ERROR(check_value(what, row, static_cast<int32_t>(t), p[t]));
    sum += p[t];
  }
  if (!(sum > 0.0)) {
    return invalid_argument(std::string(what) + " row " + str(row) + " has no probability mass");
  }
  return Status::Ok();
}

// The rejection-sampling loop over rows supplied by `target_row(i)` (a Result<span>), so that the
// logits entry point processes only the rows it reads.
template <typename TargetRow>
Result<Acceptance> rejection_loop(std::span<const int32_t> draft,
                                  std::span<const float> draft_probs, int64_t vocab, uint64_t seed,
                                  int64_t first_position, const detail::PlantedFault& fault,
                                  TargetRow&& target_row) {
  const size_t n = draft.size();
  const bool one_hot = draft_probs.empty();
  Acceptance out;
  out.tokens.reserve(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    Result<std::span<const float>> row = target_row(i);
    if (!row.ok()) return row.status();
    const std::span<const float> p = *row;
    const int64_t pos = first_position + static_cast<int64_t>(i);
    const double u_sample = model::random_uniform(seed, pos, RandomStream::kSample);
    if (i == n) {  // every draft accepted: the bonus comes from p_n
      MLASPEC_RETURN_IF_ERROR(check_full_row("target", i, p));
      out.tokens.push_back(model::sample_from(p, u_sample));
      break;
    }
    const int32_t x = draft[i];
    std::span<const float> q;
    if (!one_hot) q = draft_probs.subspan(i * vocab, vocab);
    MLASPEC_RETURN_IF_ERROR(check_value("target", i, x, p[x]));
    if (!one_hot) MLASPEC_RETURN_IF_ERROR(check_value("draft", i, x, q[x]));
    // q(x) == 0 cannot have proposed x: read the position as a one-hot draft.
    const bool row_one_hot = one_hot || q[x] == 0.0f;
    const double qx = row_one_hot ? 1.0 : static_cast<double>(q[x]);
    const double px = static_cast<double>(p[x]);
    const double u_accept = model::random_uniform(seed, pos, RandomStream::kAccept);
    if (u_accept * qx < fault.ratio_scale * px) {
      out.tokens.push_back(x);
      ++out.num_accepted;
      continue;
    }
    MLASPEC_RETURN_IF_ERROR(check_full_row("target", i, p));
    std::vector<double> residual(vocab);
    double mass = 0.0;
    if (!fault.recover_from_target) {
      if (!row_one_hot) MLASPEC_RETURN_IF_ERROR(check_full_row("draft", i, q));
      for (int64_t t = 0; t < vocab; ++t) {
        const double qt = row_one_hot ? (t == x ? 1.0 : 0.0) : static_cast<double>(q[t]);
        residual[t] = std::max(0.0, static_cast<double>(p[t]) - qt);
        mass += residual[t];
      }
    }
    if (mass > 0.0) {
      out.tokens.push_back(model::sample_from(std::span<const double>(residual), u_sample));
    } else {
      out.tokens.push_back(model::sample_from(p, u_sample));
    }
    break;
  }
  return out;
}

Result<Acceptance> rejection(const SampledVerify& v, const detail::PlantedFault& fault) {
  const size_t n = v.draft.size();
  MLASPEC_RETURN_IF_ERROR(check_draft(v.draft, v.vocab));
  MLASPEC_RETURN_IF_ERROR(check_rows("target_probs", v.target_probs.size(), n + 1, v.vocab));
  if (!v.draft_probs.empty()) {
    MLASPEC_RETURN_IF_ERROR(check_rows("draft_probs", v.draft_probs.size(), n, v.vocab));
  }
  return rejection_loop(v.draft, v.draft_probs, v.vocab, v.seed, v.first_position, fault,
                        [&](size_t i) -> Result<std::span<const float>> {
                          return v.target_probs.subspan(i * v.vocab, v.vocab);
                        });
}

}  // namespace

Result<Acceptance> accept_greedy(std::span<const int32_t> draft,
                                 std::span<const int32_t> target_argmax) {
  if (target_argmax.size() != draft.size() + 1) {
    return invalid_argument("target_argmax has " + str(target_argmax.size()) +
                            " tokens, expected num_draft + 1 = " + str(draft.size() + 1));
  }
  Acceptance out;
  size_t a = 0;
  while (a < draft.size() && draft[a] == target_argmax[a]) ++a;
  out.num_accepted = static_cast<int32_t>(a);
  out.tokens.assign(draft.begin(), draft.begin() + a);
  out.tokens.push_back(target_argmax[a]);
  return out;
}

Result<Acceptance> accept_greedy_logits(std::span<const int32_t> draft,
                                        std::span<const float> target_logits, int64_t vocab) {
  MLASPEC_RETURN_IF_ERROR(check_draft(draft, vocab));
  MLASPEC_RETURN_IF_ERROR(
      check_rows("target_logits", target_logits.size(), draft.size() + 1, vocab));
  MLASPEC_RETURN_IF_ERROR(check_logit_rows(target_logits, draft.size() + 1, vocab));
  Acceptance out;
  for (size_t i = 0; i <= draft.size(); ++i) {
    const std::span<const float> row = target_logits.subspan(i * vocab, vocab);
    const int32_t best = model::argmax(row);
    if (i == draft.size() || draft[i] != best) {
      out.tokens.push_back(best);
      break;
    }
    out.tokens.push_back(best);
    ++out.num_accepted;
  }
  return out;
}

Result<Acceptance> accept_greedy_ids(std::span<const int32_t> draft,
                                     std::span<const int32_t> target_argmax, int64_t vocab) {
  MLASPEC_RETURN_IF_ERROR(check_draft(draft, vocab));
  for (size_t i = 0; i < target_argmax.size(); ++i) {
    if (target_argmax[i] < 0 || target_argmax[i] >= vocab) {
      return invalid_argument(
          "target row " + str(i) + ": " +
          (target_argmax[i] == -1
               ? std::string("its logits hold a nan or +inf, or no finite value")
               : "argmax " + str(target_argmax[i]) + " is outside the vocab " + str(vocab)));
    }
  }
  return accept_greedy(draft, target_argmax);
}

Result<Acceptance> accept_rejection(const SampledVerify& verify) {
  return rejection(verify, detail::PlantedFault{});
}

Result<Acceptance> accept_logits(std::span<const int32_t> draft,
                                 std::span<const float> target_logits,
                                 std::span<const float> draft_probs, int64_t vocab,
                                 const model::SamplingParams& params, int64_t first_position) {
  MLASPEC_RETURN_IF_ERROR(model::validate(params));
  if (params.greedy()) return accept_greedy_logits(draft, target_logits, vocab);
  const size_t n = draft.size();
  MLASPEC_RETURN_IF_ERROR(check_draft(draft, vocab));
  MLASPEC_RETURN_IF_ERROR(check_rows("target_logits", target_logits.size(), n + 1, vocab));
  if (!draft_probs.empty()) {
    MLASPEC_RETURN_IF_ERROR(check_rows("draft_probs", draft_probs.size(), n, vocab));
  }
  MLASPEC_RETURN_IF_ERROR(check_logit_rows(target_logits, n + 1, vocab));
  std::vector<float> p(vocab);
  return rejection_loop(
      draft, draft_probs, vocab, params.seed, first_position, detail::PlantedFault{},
      [&](size_t i) -> Result<std::span<const float>> {
        MLASPEC_RETURN_IF_ERROR(
            model::process_logits(target_logits.subspan(i * vocab, vocab), params, p)
                .with_context("target row " + str(i)));
        return std::span<const float>(p);
      });
}

namespace detail {
Result<Acceptance> accept_rejection_with_fault(const SampledVerify& verify,
                                               const PlantedFault& fault) {
  return rejection(verify, fault);
}
}  // namespace detail

}  // namespace mlaspec::spec
