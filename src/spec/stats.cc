#include "mlaspec/spec/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mlaspec::spec {

Status SpecStats::record_step(int32_t num_draft, int32_t num_accepted, int32_t num_emitted) {
  if (num_draft < 0 || num_accepted < 0 || num_accepted > num_draft) {
    return invalid_argument("accepted " + std::to_string(num_accepted) + " is outside [0, " +
                            std::to_string(num_draft) + "] (the drafts proposed)");
  }
  if (num_emitted < 0 || num_emitted > num_accepted + 1) {
    return invalid_argument("emitted " + std::to_string(num_emitted) + " is outside [0, " +
                            std::to_string(num_accepted + 1) + "] (accepted + 1)");
  }
  ++verify_steps;
  drafted += num_draft;
  accepted += num_accepted;
  emitted += num_emitted;
  // Positions 0 .. num_accepted were reached (position num_accepted only if it was proposed);
  // positions 0 .. num_accepted - 1 were accepted.
  const size_t reached_to = static_cast<size_t>(std::min(num_accepted + 1, num_draft));
  if (reached.size() < reached_to) {
    reached.resize(reached_to, 0);
    accepted_at.resize(reached_to, 0);
  }
  for (size_t k = 0; k < reached_to; ++k) ++reached[k];
  for (size_t k = 0; k < static_cast<size_t>(num_accepted); ++k) ++accepted_at[k];
  return Status::Ok();
}

void SpecStats::add_time(Phase phase, double seconds) {
  switch (phase) {
    case Phase::kDraft:
      draft_seconds += seconds;
      break;
    case Phase::kVerify:
      verify_seconds += seconds;
      break;
    case Phase::kAcceptCommit:
      accept_commit_seconds += seconds;
      break;
  }
}

void SpecStats::merge(const SpecStats& o) {
  verify_steps += o.verify_steps;
  drafted += o.drafted;
  accepted += o.accepted;
  emitted += o.emitted;
  if (reached.size() < o.reached.size()) {
    reached.resize(o.reached.size(), 0);
    accepted_at.resize(o.reached.size(), 0);
  }
  for (size_t k = 0; k < o.reached.size(); ++k) {
    reached[k] += o.reached[k];
    accepted_at[k] += o.accepted_at[k];
  }
  draft_seconds += o.draft_seconds;
  verify_seconds += o.verify_seconds;
  accept_commit_seconds += o.accept_commit_seconds;
}

double SpecStats::accept_length() const {
  return verify_steps == 0 ? 0.0 : static_cast<double>(accepted + verify_steps) / verify_steps;
}

double SpecStats::tokens_per_verify_token() const {
  return verify_steps == 0 ? 0.0
                           : static_cast<double>(accepted + verify_steps) /
                                 static_cast<double>(drafted + verify_steps);
}

double SpecStats::acceptance_rate() const {
  return drafted == 0 ? 0.0 : static_cast<double>(accepted) / drafted;
}

double SpecStats::position_acceptance(size_t k) const {
  if (k >= reached.size() || reached[k] == 0) return NAN;
  return static_cast<double>(accepted_at[k]) / reached[k];
}

std::string format_summary(const SpecStats& s, std::string_view drafter) {
  char buf[256];
  std::string out(drafter);
  std::snprintf(buf, sizeof(buf),
                ": %lld steps, %lld drafted, %lld accepted (%.1f%%), tau %.2f, per-position",
                static_cast<long long>(s.verify_steps), static_cast<long long>(s.drafted),
                static_cast<long long>(s.accepted), 100.0 * s.acceptance_rate(), s.accept_length());
  out += buf;
  if (s.reached.empty()) out += " -";
  for (size_t k = 0; k < s.reached.size(); ++k) {
    const double a = s.position_acceptance(k);
    if (std::isnan(a)) {
      out += " -";
      continue;
    }
    std::snprintf(buf, sizeof(buf), " %.2f", a);
    out += buf;
  }
  const double steps = s.verify_steps > 0 ? static_cast<double>(s.verify_steps) : 1.0;
  std::snprintf(buf, sizeof(buf),
                ", %lld emitted; ms/step draft %.2f verify %.2f accept+commit %.2f",
                static_cast<long long>(s.emitted), 1e3 * s.draft_seconds / steps,
                1e3 * s.verify_seconds / steps, 1e3 * s.accept_commit_seconds / steps);
  out += buf;
  return out;
}

}  // namespace mlaspec::spec
