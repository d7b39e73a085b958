// The backend registry, the dispatcher (policy auto / forced) and shape-spec parsing.
#include "mlaspec/attention/registry.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cuda/traits.h"
#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/core/log.h"

namespace mlaspec::attn {

// ---- Registry -----------------------------------------------------------------------------------

std::unique_ptr<BackendRegistry> BackendRegistry::with_builtin_backends() {
  auto reg = std::make_unique<BackendRegistry>();
  // Caps are the constexpr values the kernels are built from (cpu_caps.h, cuda/traits.h).
  throw_if_error(reg->add(
      {kCpuReferenceCaps, KvReadPattern::kOncePerRequest,
       []() -> Result<std::unique_ptr<Backend>> { return make_cpu_reference_backend(); }}));
  throw_if_error(reg->add({cuda::kFoldCaps, KvReadPattern::kOncePerRequest, &make_cuda_fold_backend,
                           [](const VerifyShape& s) {
                             return std::string(
                                 cuda::kernel_name(false, s.q_len, s.num_heads, s.fp8_math));
                           }}));
  throw_if_error(reg->add({cuda::kRowwiseCaps, KvReadPattern::kOncePerQueryToken,
                           &make_cuda_rowwise_backend, [](const VerifyShape& s) {
                             return std::string(
                                 cuda::kernel_name(true, s.q_len, s.num_heads, s.fp8_math));
                           }}));
  return reg;
}

Status BackendRegistry::add(BackendEntry entry) {
  const BackendCaps& c = entry.caps;
  const std::string n(c.name);
  if (n.empty()) return invalid_argument("backend registry: a backend needs a name");
  for (const auto& s : slots_) {
    if (s->entry.caps.name == c.name) {
      return invalid_argument("backend registry: a backend named " + n + " is already registered");
    }
  }
  if (c.min_q_len < 1 || c.max_q_len < c.min_q_len || c.min_heads < 1 ||
      c.max_heads < c.min_heads || c.max_batch < 1 || c.max_seq_len < 1 || c.kv_dtypes == 0) {
    return invalid_argument("backend registry: " + n + " has inconsistent caps (" +
                            describe_caps(c) + ")");
  }
  if (!entry.factory) return invalid_argument("backend registry: " + n + " has no factory");
  auto slot = std::make_unique<Slot>();
  slot->entry = std::move(entry);
  slots_.push_back(std::move(slot));
  return Status::Ok();
}

Result<int> BackendRegistry::index_of(std::string_view name) const {
  for (int i = 0; i < size(); ++i)
    if (slots_[i]->entry.caps.name == name) return i;
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  return not_found("no attention backend named \"" + std::string(name) + "\" (known: " + known +
                   ", or auto)");
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& s : slots_) out.emplace_back(s->entry.caps.name);
  return out;
}

Result<std::unique_ptr<Backend>> BackendRegistry::create_entry(const BackendEntry& e) const {
  const std::string n(e.caps.name);
  Result<std::unique_ptr<Backend>> r = unsupported("unreachable");
  try {
    r = e.factory();
  } catch (const Error& err) {
    r = err.status();
  } catch (const std::exception& ex) {
    r = internal_error(ex.what());
  }
  if (!r.ok()) {
    const std::string& m = r.status().message();
    // Factories usually name themselves; make sure the reason always does.
    std::string msg = m.rfind(n, 0) == 0 ? m : n + " is unavailable: " + m;
    return Status(StatusCode::kUnsupported, msg);
  }
  if (!r.value()) return internal_error(n + ": factory returned no backend");
  if (r.value()->caps().name != e.caps.name) {
    return internal_error(n + ": factory made a backend named " +
                          std::string(r.value()->caps().name));
  }
  // The backend's own device check (a CUDA backend finds no device, or one it cannot run on, in
  // prepare()): preparing the smallest shape it serves allocates next to nothing.
  VerifyShape probe;
  probe.batch = 1;
  probe.q_len = e.caps.min_q_len;
  probe.num_heads = e.caps.min_heads;
  probe.page_size = e.caps.page_size_mask ? 1 << std::countr_zero(e.caps.page_size_mask) : 64;
  probe.kv_dtype = (e.caps.kv_dtypes & dtype_bit(DType::kBF16)) ? DType::kBF16 : DType::kFP8E4M3;
  probe.max_seq_len = probe.q_len;
  probe.total_kv = probe.q_len;
  Status ready = r.value()->prepare(probe);
  if (!ready.ok()) {
    const std::string& m = ready.message();
    return Status(StatusCode::kUnsupported, m.rfind(n, 0) == 0 ? m : n + " is unavailable: " + m);
  }
  return r;
}

Status BackendRegistry::availability(int index) {
  Slot& s = *slots_.at(index);
  std::call_once(s.once, [&] {
    auto r = create_entry(s.entry);
    if (r.ok()) {
      s.instance = std::move(r).value();
    } else {
      s.status = r.status();
    }
  });
  return s.status;
}

Result<Backend*> BackendRegistry::get(int index) {
  MLASPEC_RETURN_IF_ERROR(availability(index));
  return slots_[index]->instance.get();
}

Result<Backend*> BackendRegistry::get(std::string_view name) {
  auto i = index_of(name);
  if (!i.ok()) return i.status();
  return get(*i);
}

Result<std::unique_ptr<Backend>> BackendRegistry::create(std::string_view name) const {
  auto i = index_of(name);
  if (!i.ok()) return i.status();
  return create_entry(slots_[*i]->entry);
}

// ---- Decisions ----------------------------------------------------------------------------------

DispatchPolicy DispatchPolicy::parse(std::string_view text) {
  DispatchPolicy p;
  if (!text.empty() && text != "auto") p.forced = std::string(text);
  return p;
}

namespace {

std::string fmt_us(std::optional<double> us) {
  if (!us) return "no model";
  char buf[32];
  if (*us >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f s", *us / 1e6);
  } else if (*us >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.1f ms", *us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, *us < 100 ? "%.1f us" : "%.0f us", *us);
  }
  return buf;
}

uint64_t kv_bytes_read(const VerifyShape& s, KvReadPattern p) {
  const uint64_t passes = p == KvReadPattern::kOncePerQueryToken ? s.q_len : 1;
  return static_cast<uint64_t>(s.total_kv) * kv_row_bytes(s.kv_dtype) * passes;
}

}  // namespace

std::string Decision::explain() const {
  std::ostringstream os;
  size_t w = 7;
  for (const auto& v : verdicts) w = std::max(w, v.name.size());
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s  %-10s  %s\n", static_cast<int>(w), "backend", "est",
                "verdict");
  os << line;
  for (const auto& v : verdicts) {
    const std::string verdict =
        v.status.ok() ? (v.kernel.empty() ? "ok" : "ok (" + v.kernel + ")") : v.status.message();
    const std::string est = fmt_us(v.est_us) + (v.est_derived.empty() ? "" : "*");
    std::snprintf(line, sizeof line, "  %-*s  %-10s  %s%s\n", static_cast<int>(w),
                  std::string(v.name).c_str(), est.c_str(), verdict.c_str(),
                  v.index == backend_index ? "   <- pick" : "");
    os << line;
  }
  for (const auto& v : verdicts) {
    if (!v.est_derived.empty()) os << "  * " << v.name << ": " << v.est_derived << "\n";
  }
  if (backend_index >= 0) os << "pick: " << backend << " (" << reason << ")\n";
  return os.str();
}

Dispatcher::Dispatcher(BackendRegistry& registry, CostModel model, DispatchPolicy policy)
    : registry_(registry), model_(std::move(model)), policy_(std::move(policy)) {
  for (int i = 0; i < registry_.size(); ++i)
    counters_.push_back(std::make_unique<AtomicCounters>());
}

Status Dispatcher::validate_policy() const {
  if (policy_.is_auto()) return Status::Ok();
  auto i = registry_.index_of(policy_.forced);
  return i.ok() ? Status::Ok() : i.status();
}

Status Dispatcher::set_policy(DispatchPolicy policy) {
  if (!policy.is_auto()) MLASPEC_RETURN_IF_ERROR(registry_.index_of(policy.forced).status());
  policy_ = std::move(policy);
  return Status::Ok();
}

Dispatcher::Availability Dispatcher::cuda_availability() {
  Availability a;
  for (int i = 0; i < registry_.size(); ++i) {
    if (registry_.caps(i).device != Device::kCUDA) continue;
    const Status st = registry_.availability(i);
    if (st.ok()) a.cuda = true;
    if (!st.ok() && a.reason.empty()) a.reason = st.message();
  }
  return a;
}

Decision Dispatcher::evaluate(const VerifyShape& shape, const SelectOptions& options) {
  const int n = registry_.size();
  Decision d;
  d.verdicts.resize(n);
  // The data's device: given, else CUDA when a CUDA backend is available here.
  std::optional<Device> device = options.data_device;
  if (!device && policy_.is_auto()) {
    device = cuda_availability().cuda || options.assume_available ? Device::kCUDA : Device::kCPU;
  }
  d.data_device = device;
  for (int i = 0; i < n; ++i) {
    const BackendEntry& e = registry_.entry(i);
    BackendVerdict& v = d.verdicts[i];
    v.index = i;
    v.name = e.caps.name;
    // fp8 math is priced as e4m3 tensor-core math (CostModel::estimate) on a CUDA backend only;
    // elsewhere (the CPU reference's row-by-row fp8 math) as the exact call of the same shape.
    VerifyShape priced = shape;
    if (e.caps.device != Device::kCUDA) priced.fp8_math = false;
    if (std::optional<CostEstimate> est = model_.estimate(e.caps.name, e.kv_reads, priced)) {
      v.est_us = est->us;
      v.est_derived = std::move(est->derived);
    }
    const Status avail = registry_.availability(i);
    Status serve = can_serve(e.caps, shape);
    if (device && e.caps.device != *device) {
      serve = unsupported(std::string(e.caps.name) + " runs on " +
                          std::string(device_name(e.caps.device)) + "; the data is on " +
                          std::string(device_name(*device)));
    }
    v.capable = serve.ok();
    if (v.capable && e.kernel) v.kernel = e.kernel(shape);
    // Normally unavailability comes first (nothing else matters here); when deciding as if every
    // backend were available, the shape's reason comes first.
    if (options.assume_available) {
      v.status = !serve.ok() ? serve : avail;
    } else {
      v.status = !avail.ok() ? avail : serve;
    }
  }
  return d;
}

Result<Decision> Dispatcher::select(const VerifyShape& shape, const SelectOptions& options) {
  if (shape.batch < 1 || shape.q_len < 1 || shape.num_heads < 1 || shape.max_seq_len < 1 ||
      shape.total_kv < shape.max_seq_len) {
    return invalid_argument("dispatch: malformed shape " + shape.to_string() + " (total_kv " +
                            std::to_string(shape.total_kv) + ")");
  }
  const int n = registry_.size();
  Decision d = evaluate(shape, options);
  const std::optional<Device> device = d.data_device;
  auto candidate = [&](const BackendVerdict& v) {
    return v.status.ok() || (options.assume_available && v.capable);
  };

  if (!policy_.is_auto()) {
    auto idx = registry_.index_of(policy_.forced);
    if (!idx.ok()) return idx.status();
    const BackendVerdict& v = d.verdicts[*idx];
    if (!candidate(v)) {
      return Status(v.status.code(), "backend " + policy_.forced + " was requested for " +
                                         shape.to_string() +
                                         " but cannot serve it: " + v.status.message());
    }
    d.backend_index = *idx;
    d.backend = v.name;
    d.est_us = v.est_us;
    d.est_derived = v.est_derived;
    d.forced = true;
    d.reason = "requested explicitly";
    if (!options.quiet) log_first_decision(shape, d);
    return d;
  }

  // auto: cheapest capable by the cost model; backends without a model rank last, in registry
  // order (and the reason says so).
  int best = -1;
  int capable = 0;
  for (int i = 0; i < n; ++i) {
    const BackendVerdict& v = d.verdicts[i];
    if (!candidate(v)) continue;
    ++capable;
    if (best < 0) {
      best = i;
      continue;
    }
    const auto& b = d.verdicts[best].est_us;
    if (v.est_us && (!b || *v.est_us < *b)) best = i;
  }
  if (best < 0) {
    std::string why;
    for (const auto& v : d.verdicts) why += "; " + v.status.message();
    return unsupported("no attention backend can serve " + shape.to_string() + " on " +
                       std::string(device_name(device.value_or(Device::kCPU))) + ":" +
                       why.substr(1));
  }
  d.backend_index = best;
  d.backend = d.verdicts[best].name;
  d.est_us = d.verdicts[best].est_us;
  d.est_derived = d.verdicts[best].est_derived;
  std::ostringstream why;
  if (capable == 1) {
    why << "auto: the only capable backend";
  } else if (!d.est_us) {
    why << "auto: no cost model for any capable backend; first in registry order (run `mlaspec "
           "calibrate`)";
  } else {
    why << "auto: cheapest of " << capable << " capable by the cost model";
    for (const auto& v : d.verdicts) {
      if (v.index == best || !v.est_us || !candidate(v)) continue;
      why << "; " << v.name << " " << fmt_us(v.est_us) << (v.est_derived.empty() ? "" : "*");
    }
  }
  if (registry_.caps(best).device == Device::kCPU && !options.assume_available && !options.quiet &&
      !said_cpu_.load() && !cuda_availability().cuda && !said_cpu_.exchange(true)) {
    const std::string no_cuda_reason = cuda_availability().reason;
    log_info("attention dispatch: no CUDA backend is available (" +
             (no_cuda_reason.empty() ? std::string("none registered") : no_cuda_reason) +
             "); auto uses " + std::string(d.backend));
  }
  d.reason = why.str();
  if (!options.quiet) log_first_decision(shape, d);
  return d;
}

void Dispatcher::log_first_decision(const VerifyShape& s, const Decision& d) {
  const int log2s = std::bit_width(static_cast<uint64_t>(std::max<int64_t>(s.max_seq_len, 1))) - 1;
  const auto key =
      std::make_tuple(s.batch, s.q_len, s.num_heads, static_cast<int>(s.kv_dtype), s.page_size,
                      static_cast<int>(s.deterministic), log2s, d.backend_index);
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    if (!logged_buckets_.insert(key).second) return;
  }
  log_info("attention dispatch: " + s.to_string() + " -> " + std::string(d.backend) + " (est " +
           fmt_us(d.est_us) + (d.est_derived.empty() ? "" : " [" + d.est_derived + "]") + "; " +
           d.reason + ") [first time for this backend in bucket S~2^" + std::to_string(log2s) +
           "]");
}

void Dispatcher::record_call(int index, const VerifyShape& shape) {
  AtomicCounters& c = *counters_.at(index);
  c.calls.fetch_add(1, std::memory_order_relaxed);
  const uint64_t tokens = shape.ragged ? static_cast<uint64_t>(shape.total_q)
                                       : static_cast<uint64_t>(shape.batch) * shape.q_len;
  c.rows.fetch_add(tokens * static_cast<uint64_t>(shape.num_heads), std::memory_order_relaxed);
  c.kv_bytes.fetch_add(kv_bytes_read(shape, registry_.entry(index).kv_reads),
                       std::memory_order_relaxed);
}

Result<Decision> Dispatcher::run_explained(const VerifyArgs& args, const VerifyOptions& options) {
  const Device device = args.q.device();
  MLASPEC_RETURN_IF_ERROR(validate_verify_args(args, device));
  const VerifyShape shape = shape_of(args, options);
  SelectOptions so;
  so.data_device = device;
  auto d = select(shape, so);
  if (!d.ok()) return d.status();
  auto backend = registry_.get(d->backend_index);
  if (!backend.ok()) return backend.status();
  MLASPEC_RETURN_IF_ERROR((*backend)->run(args, options));
  record_call(d->backend_index, shape);
  return d;
}

Status Dispatcher::run(const VerifyArgs& args, const VerifyOptions& options) {
  auto d = run_explained(args, options);
  return d.ok() ? Status::Ok() : d.status();
}

BackendCounters Dispatcher::counters(int index) const {
  const AtomicCounters& c = *counters_.at(index);
  return {c.calls.load(), c.rows.load(), c.kv_bytes.load()};
}

std::string Dispatcher::counters_summary() const {
  std::ostringstream os;
  for (int i = 0; i < registry_.size(); ++i) {
    const BackendCounters c = counters(i);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s: %llu calls, %llu rows, %.3g GB KV", i ? "; " : "",
                  std::string(registry_.caps(i).name).c_str(),
                  static_cast<unsigned long long>(c.calls), static_cast<unsigned long long>(c.rows),
                  static_cast<double>(c.kv_bytes) / 1e9);
    os << buf;
  }
  return os.str();
}

void Dispatcher::reset_counters() {
  for (auto& c : counters_) {
    c->calls = 0;
    c->rows = 0;
    c->kv_bytes = 0;
  }
}

Result<DispatchSetup> make_dispatch(const DispatchSetupOptions& o) {
  DispatchSetup s;
  s.registry = BackendRegistry::with_builtin_backends();
  CostModelRequest req;
  req.profile_path = o.profile_path;
  req.strict = !o.profile_path.empty();
  req.machine = o.gpu_name.empty() ? detect_gpu_name() : o.gpu_name;
  auto cost = resolve_cost_model(req);
  if (!cost.ok()) return cost.status();
  s.cost = std::move(cost).value();
  if (o.log_warnings) {
    for (const auto& w : s.cost.warnings) log_warn(w);
    for (const auto& n : s.cost.notes) log_debug(n);
  }
  s.dispatcher =
      std::make_unique<Dispatcher>(*s.registry, s.cost.model, DispatchPolicy::parse(o.policy));
  MLASPEC_RETURN_IF_ERROR(s.dispatcher->validate_policy());
  return s;
}

}  // namespace mlaspec::attn
