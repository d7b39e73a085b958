// Cost-model profiles: JSON parsing with errors that say where, the built-in defaults, the
// search path, GPU naming and the resolution order (docs/dispatch.md).
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "default_profiles.h"
#include "mlaspec/attention/cost_model.h"

namespace mlaspec::attn {

namespace {

using nlohmann::json;

// Version 2 added "q_len" and "curve" to a model, version 3 "det" (an entry measured in
// deterministic mode) and "batch" (a B > 1 grid); version 1 and 2 files still load (default-mode
// entries without a batch grid). "fp8_math" (an entry measured in fp8 math) came later without a
// new version: absent means exact math, so every version-3 file still reads the same.
constexpr int kProfileVersion = 3;
constexpr int kOldestProfileVersion = 1;

std::string kv_key(DType t) {
  return std::string(kv_dtype_label(t));
}

std::string short_dump(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

Status bad(std::string_view origin, const std::string& where, const std::string& what) {
  return data_loss(std::string(origin) + ": " + where + ": " + what);
}

Result<double> number_field(std::string_view origin, const json& obj, const std::string& where,
                            const char* key, bool required, double dflt) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return bad(origin, where, std::string("missing \"") + key + "\"");
    return dflt;
  }
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
    return bad(origin, where + "." + key, "expected a finite number >= 0, got " + short_dump(*it));
  }
  return it->get<double>();
}

// The most measurements a fitted entry can name (a calibration grid has a few hundred).
constexpr int64_t kMaxPoints = 1 << 24;

Result<CostEntry> parse_entry(std::string_view origin, const json& m, const std::string& where) {
  if (!m.is_object()) return bad(origin, where, "expected an object, got " + short_dump(m));
  static const std::set<std::string> kKeys = {
      "backend",   "kv",           "heads",  "q_len",       "det",         "fp8_math", "fixed_us",
      "us_per_mb", "us_per_gflop", "points", "rms_rel_err", "max_rel_err", "curve",    "batch"};
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!kKeys.count(it.key())) {
      return bad(origin, where,
                 "unknown key \"" + it.key() +
                     "\" (expected backend, kv, heads, q_len, det, fp8_math, fixed_us, us_per_mb, "
                     "us_per_gflop, points, rms_rel_err, max_rel_err, curve, batch)");
    }
  }
  CostEntry e;
  auto b = m.find("backend");
  if (b == m.end() || !b->is_string() || b->get<std::string>().empty()) {
    return bad(origin, where + ".backend",
               "expected a backend name, got " + (b == m.end() ? "nothing" : short_dump(*b)));
  }
  e.backend = b->get<std::string>();
  auto kv = m.find("kv");
  if (kv == m.end() || !kv->is_string() || !parse_dtype(kv->get<std::string>(), &e.kv_dtype) ||
      (e.kv_dtype != DType::kBF16 && e.kv_dtype != DType::kFP8E4M3 &&
       e.kv_dtype != DType::kFP8Tile)) {
    return bad(origin, where + ".kv",
               "expected \"bf16\", \"fp8\" or \"fp8tile\", got " +
                   (kv == m.end() ? "nothing" : short_dump(*kv)));
  }
  auto h = m.find("heads");
  if (h != m.end()) {
    if (!h->is_number_integer() || h->get<int64_t>() < 0 || h->get<int64_t>() > 65536) {
      return bad(origin, where + ".heads",
                 "expected an integer >= 0 (0 = any H), got " + short_dump(*h));
    }
    e.heads = h->get<int>();
  }
  auto q = m.find("q_len");
  if (q != m.end()) {
    if (!q->is_number_integer() || q->get<int64_t>() < 0 || q->get<int64_t>() > 65536) {
      return bad(origin, where + ".q_len",
                 "expected an integer >= 0 (0 = any q_len), got " + short_dump(*q));
    }
    e.q_len = q->get<int>();
  }
  if (auto d = m.find("det"); d != m.end()) {
    if (!d->is_boolean()) {
      return bad(origin, where + ".det",
                 "expected true (measured in deterministic mode) or false, got " + short_dump(*d));
    }
    e.deterministic = d->get<bool>();
  }
  if (auto f8 = m.find("fp8_math"); f8 != m.end()) {
    if (!f8->is_boolean()) {
      return bad(origin, where + ".fp8_math",
                 "expected true (measured in fp8 math) or false, got " + short_dump(*f8));
    }
    e.fp8_math = f8->get<bool>();
    // fp8 math exists for fp8_e4m3 KV only (the guard refuses it elsewhere): such an entry would
    // price nothing, and says the file was not written by calibrate.
    if (e.fp8_math && e.kv_dtype != DType::kFP8E4M3) {
      return bad(origin, where + ".fp8_math",
                 "the " + e.backend + " entry (kv " + kv_key(e.kv_dtype) + ", heads " +
                     std::to_string(e.heads) + ", q_len " + std::to_string(e.q_len) +
                     ") is marked fp8 math, which exists for kv \"fp8\" only");
    }
  }
  if (auto c = m.find("curve"); c != m.end()) {
    const std::string cw = where + ".curve";
    if (!c->is_array()) {
      return bad(origin, cw, "expected an array of [seq_len, us] pairs, got " + short_dump(*c));
    }
    for (size_t i = 0; i < c->size(); ++i) {
      const json& pt = (*c)[i];
      const std::string pw = cw + "[" + std::to_string(i) + "]";
      if (!pt.is_array() || pt.size() != 2) {
        return bad(origin, pw, "expected a [seq_len, us] pair, got " + short_dump(pt));
      }
      if (!pt[0].is_number_integer() || pt[0].get<int64_t>() < 1) {
        return bad(origin, pw, "seq_len: expected an integer >= 1, got " + short_dump(pt[0]));
      }
      if (!pt[1].is_number() || !std::isfinite(pt[1].get<double>()) || !(pt[1].get<double>() > 0)) {
        return bad(origin, pw, "us: expected a finite number > 0, got " + short_dump(pt[1]));
      }
      const CurvePoint p{pt[0].get<int64_t>(), pt[1].get<double>()};
      if (!e.curve.empty() && p.seq_len <= e.curve.back().seq_len) {
        return bad(origin, pw,
                   "seq_len " + std::to_string(p.seq_len) +
                       " is not greater than the previous point's " +
                       std::to_string(e.curve.back().seq_len) +
                       " (a curve is sorted by strictly increasing seq_len)");
      }
      e.curve.push_back(p);
    }
  }
  if (auto g = m.find("batch"); g != m.end()) {
    const std::string gw = where + ".batch";
    if (!g->is_array()) {
      return bad(origin, gw,
                 "expected an array of [batch, seq_len, us] triples, got " + short_dump(*g));
    }
    std::set<std::pair<int, int64_t>> cells;
    for (size_t i = 0; i < g->size(); ++i) {
      const json& pt = (*g)[i];
      const std::string pw = gw + "[" + std::to_string(i) + "]";
      if (!pt.is_array() || pt.size() != 3) {
        return bad(origin, pw, "expected a [batch, seq_len, us] triple, got " + short_dump(pt));
      }
      if (!pt[0].is_number_integer() || pt[0].get<int64_t>() < 2 || pt[0].get<int64_t>() > 65536) {
        return bad(origin, pw, "batch: expected an integer 2..65536, got " + short_dump(pt[0]));
      }
      if (!pt[1].is_number_integer() || pt[1].get<int64_t>() < 1) {
        return bad(origin, pw, "seq_len: expected an integer >= 1, got " + short_dump(pt[1]));
      }
      if (!pt[2].is_number() || !std::isfinite(pt[2].get<double>()) || !(pt[2].get<double>() > 0)) {
        return bad(origin, pw, "us: expected a finite number > 0, got " + short_dump(pt[2]));
      }
      const BatchPoint p{pt[0].get<int>(), pt[1].get<int64_t>(), pt[2].get<double>()};
      if (!cells.emplace(p.batch, p.seq_len).second) {
        return bad(origin, pw,
                   "batch " + std::to_string(p.batch) + ", seq_len " + std::to_string(p.seq_len) +
                       " is measured twice");
      }
      e.batch.push_back(p);
    }
    if (const BatchGridAxes axes = batch_grid_axes(e.batch); !e.batch.empty() && !axes.complete) {
      const size_t pairs = axes.batches.size() * axes.seq_lens.size();
      return bad(origin, gw,
                 "holds " + std::to_string(cells.size()) + " points where its " +
                     std::to_string(axes.batches.size()) + " batch sizes x " +
                     std::to_string(axes.seq_lens.size()) + " seq_lens make " +
                     std::to_string(pairs) + " (a batch grid measures every pair)");
    }
  }
  auto f = number_field(origin, m, where, "fixed_us", true, 0);
  if (!f.ok()) return f.status();
  auto mb = number_field(origin, m, where, "us_per_mb", true, 0);
  if (!mb.ok()) return mb.status();
  auto gf = number_field(origin, m, where, "us_per_gflop", true, 0);
  if (!gf.ok()) return gf.status();
  e.terms = CostTerms{*f, *mb, *gf};
  // points: how many measurements the fit used, a count (an int: a larger or fractional value is
  // refused here, never converted).
  if (auto p = m.find("points"); p != m.end()) {
    if (!p->is_number_integer() || p->get<int64_t>() < 0 || p->get<int64_t>() > kMaxPoints) {
      return bad(
          origin, where + ".points",
          "expected an integer 0.." + std::to_string(kMaxPoints) + ", got " + short_dump(*p));
    }
    e.points = p->get<int>();
  }
  auto rms = number_field(origin, m, where, "rms_rel_err", false, 0);
  if (!rms.ok()) return rms.status();
  e.rms_rel_err = *rms;
  auto mx = number_field(origin, m, where, "max_rel_err", false, 0);
  if (!mx.ok()) return mx.status();
  e.max_rel_err = *mx;
  return e;
}

json entry_json(const CostEntry& e) {
  json j;
  j["backend"] = e.backend;
  j["kv"] = kv_key(e.kv_dtype);
  j["heads"] = e.heads;
  j["q_len"] = e.q_len;
  if (e.deterministic) j["det"] = true;
  if (e.fp8_math) j["fp8_math"] = true;
  j["fixed_us"] = e.terms.fixed_us;
  j["us_per_mb"] = e.terms.us_per_mb;
  j["us_per_gflop"] = e.terms.us_per_gflop;
  if (e.points > 0) {
    j["points"] = e.points;
    j["rms_rel_err"] = e.rms_rel_err;
    j["max_rel_err"] = e.max_rel_err;
  }
  if (!e.curve.empty()) {
    json c = json::array();
    for (const CurvePoint& p : e.curve) c.push_back(json::array({p.seq_len, p.us}));
    j["curve"] = std::move(c);
  }
  if (!e.batch.empty()) {
    json g = json::array();
    for (const BatchPoint& p : e.batch) g.push_back(json::array({p.batch, p.seq_len, p.us}));
    j["batch"] = std::move(g);
  }
  return j;
}

// dump(2) with every innermost array of scalars on one line: a curve reads as one [S, us] pair
// per line.
std::string readable_dump(const json& j) {
  const std::string in = j.dump(2);
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] == '"') {  // copy a string literal through unchanged
      size_t k = i + 1;
      while (k < in.size() && in[k] != '"') k += in[k] == '\\' ? 2 : 1;
      out.append(in, i, k + 1 - i);
      i = k + 1;
      continue;
    }
    if (in[i] == '[') {
      // Innermost array of scalars (no nested [ or { before the closing ])?
      const size_t close = in.find_first_of("[]{}\"", i + 1);
      if (close != std::string::npos && in[close] == ']') {
        std::string inner;
        bool space = false;
        for (size_t k = i + 1; k < close; ++k) {
          const char c = in[k];
          if (c == ' ' || c == '\n') {
            space = true;
            continue;
          }
          if (space && !inner.empty()) inner += ' ';
          space = false;
          inner += c;
        }
        out += '[' + inner + ']';
        i = close + 1;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

}  // namespace

const CostModel* Profile::find(std::string_view machine) const {
  for (const CostModel& m : machines)
    if (m.machine() == machine) return &m;
  return nullptr;
}

Result<Profile> parse_profile(std::string_view json_text, std::string_view origin) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    // Syntax errors, and numbers JSON allows but a double cannot hold (1e400: out_of_range).
    return data_loss(std::string(origin) + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) return bad(origin, "top level", "expected an object");
  auto fmt = root.find("format");
  if (fmt != root.end() && (!fmt->is_string() || fmt->get<std::string>() != "mlaspec-profile")) {
    return bad(origin, "format", "expected \"mlaspec-profile\", got " + short_dump(*fmt));
  }
  auto ver = root.find("version");
  if (ver == root.end() || !ver->is_number_integer()) {
    return bad(origin, "version",
               "missing or not an integer (this build reads version " +
                   std::to_string(kProfileVersion) + ")");
  }
  if (ver->get<int64_t>() < kOldestProfileVersion || ver->get<int64_t>() > kProfileVersion) {
    return bad(origin, "version",
               "unsupported version " + ver->dump() + " (this build reads versions " +
                   std::to_string(kOldestProfileVersion) + " to " +
                   std::to_string(kProfileVersion) + "; rerun `mlaspec calibrate`)");
  }
  auto machines = root.find("machines");
  if (machines == root.end() || !machines->is_object()) {
    return bad(origin, "machines", "missing or not an object keyed by GPU name");
  }
  Profile prof;
  for (auto it = machines->begin(); it != machines->end(); ++it) {
    const std::string where = "machines.\"" + it.key() + "\"";
    const json& mj = it.value();
    if (!mj.is_object()) return bad(origin, where, "expected an object");
    auto models = mj.find("models");
    if (models == mj.end() || !models->is_array()) {
      return bad(origin, where + ".models", "missing or not an array");
    }
    std::string source = std::string(origin);
    if (auto s = mj.find("source"); s != mj.end()) {
      if (!s->is_string()) return bad(origin, where + ".source", "expected a string");
      source += " (" + s->get<std::string>() + ")";
    }
    CostModel model(it.key(), source, {});
    if (auto p = mj.find("provisional"); p != mj.end()) {
      if (!p->is_boolean()) return bad(origin, where + ".provisional", "expected true or false");
      model.set_provisional(p->get<bool>());
    }
    std::set<std::tuple<std::string, int, int, int, bool, bool>> seen;
    for (size_t i = 0; i < models->size(); ++i) {
      const std::string ew = where + ".models[" + std::to_string(i) + "]";
      auto e = parse_entry(origin, (*models)[i], ew);
      if (!e.ok()) return e.status();
      if (!seen.emplace(e->backend, static_cast<int>(e->kv_dtype), e->heads, e->q_len,
                        e->deterministic, e->fp8_math)
               .second) {
        return bad(origin, ew,
                   "duplicate model for backend " + e->backend + ", kv " + kv_key(e->kv_dtype) +
                       ", heads " + std::to_string(e->heads) + ", q_len " +
                       std::to_string(e->q_len) + (e->deterministic ? ", deterministic" : "") +
                       (e->fp8_math ? ", fp8 math" : ""));
      }
      model.add(std::move(e).value());
    }
    prof.machines.push_back(std::move(model));
  }
  return prof;
}

Result<Profile> load_profile_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("profile " + path + " does not exist or cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return data_loss("profile " + path + ": read error");
  return parse_profile(ss.str(), "profile " + path);
}

Result<std::string> merge_profile_json(std::string_view existing, const CostModel& model,
                                       std::string_view extra_json_for_machine) {
  json root = {
      {"format", "mlaspec-profile"}, {"version", kProfileVersion}, {"machines", json::object()}};
  if (!existing.empty()) {
    // Validate first so a bad file is reported the same way as on load.
    auto parsed = parse_profile(existing, "existing profile");
    if (!parsed.ok()) return parsed.status();
    root = json::parse(existing.begin(), existing.end());
    root["version"] = kProfileVersion;  // entries written below carry q_len, curves and det
  }
  json m = json::object();
  if (!extra_json_for_machine.empty()) {
    try {
      m = json::parse(extra_json_for_machine.begin(), extra_json_for_machine.end());
    } catch (const json::exception& e) {
      return internal_error(std::string("merge_profile_json: extra JSON: ") + e.what());
    }
    if (!m.is_object()) return internal_error("merge_profile_json: extra JSON is not an object");
  }
  m["source"] = model.source();
  m["provisional"] = model.provisional();
  json models = json::array();
  for (const CostEntry& e : model.entries()) models.push_back(entry_json(e));
  // Keep this machine's earlier entries that the new model does not replace (a calibration run
  // of one dtype, one H or without fp8 math must not drop the others).
  if (auto& machines = root["machines"]; machines.contains(model.machine())) {
    const json& old = machines[model.machine()];
    for (const json& e : old.value("models", json::array())) {
      bool replaced = false;
      for (const json& n : models) {
        replaced |= n["backend"] == e["backend"] && n["kv"] == e["kv"] &&
                    n.value("heads", 0) == e.value("heads", 0) &&
                    n.value("q_len", 0) == e.value("q_len", 0) &&
                    n.value("det", false) == e.value("det", false) &&
                    n.value("fp8_math", false) == e.value("fp8_math", false);
      }
      if (!replaced) models.push_back(e);
    }
    // ... nor the records that go with them: the crossovers of the curves this run did not
    // measure and the S-sweep checks of the configs it did not measure again (a run of one mode,
    // or with --no-verify, keeps the others'). The worst regrets then also cover what is kept.
    // The records are free-form JSON to the loader, so a field that is missing or of another
    // type compares as its default here rather than throwing.
    auto field = [](const json& r, const char* k, const json& dflt) {
      return r.is_object() && r.contains(k) ? r[k] : dflt;
    };
    // Appends old[key]'s records that no record of this run matches on `ids`; returns them.
    auto keep_old = [&](const char* key, const std::vector<std::pair<const char*, json>>& ids) {
      json kept = json::array();
      if (!m.contains(key) || !m[key].is_array() || !old.contains(key) || !old[key].is_array()) {
        return kept;
      }
      auto same = [&](const json& n, const json& e) {
        return std::all_of(ids.begin(), ids.end(), [&](const auto& id) {
          return field(n, id.first, id.second) == field(e, id.first, id.second);
        });
      };
      for (const json& e : old[key]) {
        if (std::none_of(m[key].begin(), m[key].end(), [&](const json& n) { return same(n, e); })) {
          m[key].push_back(e);
          kept.push_back(e);
        }
      }
      return kept;
    };
    // This run's worst `total` raised to the worst `k` among the kept records.
    auto raise_worst = [&](const json& kept, const char* total, const char* k) {
      if (kept.empty()) return;
      double worst = field(m, total, json(0.0)).is_number() ? m[total].get<double>() : 0.0;
      for (const json& e : kept) {
        if (const json f = field(e, k, json()); f.is_number()) {
          worst = std::max(worst, f.get<double>());
        }
      }
      m[total] = worst;
    };
    const json crossovers =
        keep_old("crossovers",
                 {{"kv", json()}, {"fp8_math", false}, {"heads", 0}, {"q_len", 0}, {"det", false}});
    raise_worst(crossovers, "grid_regret_max", "grid_regret_max");
    raise_worst(crossovers, "grid_loo_regret_max", "grid_loo_regret_max");
    raise_worst(keep_old("sweep_check", {{"config", json()}}), "sweep_regret_max", "regret");
  }
  m["models"] = std::move(models);
  root["machines"][model.machine()] = std::move(m);
  return readable_dump(root) + "\n";
}

const Profile& builtin_profile() {
  static const Profile prof = [] {
    // The embedded data/profiles files, then the CPU section; each machine defined once.
    std::vector<std::pair<std::string, std::string_view>> docs;
    for (const detail::EmbeddedProfile& f : detail::embedded_gpu_profiles()) {
      docs.emplace_back("data/profiles/" + std::string(f.name), f.json);
    }
    docs.emplace_back("the built-in CPU section", detail::kBuiltinCpuProfileJson);
    Profile out;
    for (const auto& [where, text] : docs) {
      // The origin stays "built-in defaults": it is what inspect and the logs show as the source.
      auto p = parse_profile(text, "built-in defaults");
      // A bad data file is a build defect (a test parses every one), not a user error.
      throw_if_error(p.status().with_context(where));
      for (CostModel& m : p.value().machines) {
        if (out.find(m.machine())) {
          throw_if_error(internal_error(where + " defines machine \"" + m.machine() +
                                        "\" again (one file per machine)"));
        }
        out.machines.push_back(std::move(m));
      }
    }
    return out;
  }();
  return prof;
}

std::string default_profile_path() {
  if (const char* p = std::getenv("MLASPEC_PROFILE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return std::string(x) + "/mlaspec/profile.json";
  }
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/mlaspec/profile.json";
  return "mlaspec-profile.json";
}

std::string detect_gpu_name() {
  if (const char* n = std::getenv("MLASPEC_GPU_NAME"); n) return n;
  if (!built_with_cuda()) return "";
  // The driver API through dlopen: no CUDA headers or link dependency in this file, and a host
  // without a driver just has no GPU name.
  static const std::string name = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) return std::string();
    using InitFn = int (*)(unsigned);
    using GetFn = int (*)(int*, int);
    using NameFn = int (*)(char*, int, int);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
    auto get = reinterpret_cast<GetFn>(dlsym(lib, "cuDeviceGet"));
    auto get_name = reinterpret_cast<NameFn>(dlsym(lib, "cuDeviceGetName"));
    char buf[256] = {0};
    int dev = 0;
    if (!init || !get || !get_name || init(0) != 0 || get(&dev, 0) != 0 ||
        get_name(buf, sizeof buf - 1, dev) != 0) {
      return std::string();  // the library stays loaded: the runtime uses it anyway
    }
    return std::string(buf);
  }();
  return name;
}

Result<ResolvedCostModel> resolve_cost_model(const CostModelRequest& req) {
  ResolvedCostModel out;
  const bool explicit_path = !req.profile_path.empty();
  const std::string path = explicit_path ? req.profile_path : default_profile_path();
  const std::string machine = req.machine.empty() ? "cpu" : req.machine;

  std::optional<Profile> file;
  auto loaded = load_profile_file(path);
  if (loaded.ok()) {
    file = std::move(loaded).value();
  } else if (req.strict) {
    return loaded.status();
  } else if (loaded.status().code() == StatusCode::kNotFound) {
    out.notes.push_back("no profile file at " + path);
  } else {
    out.warnings.push_back("ignoring the profile: " + loaded.status().message() +
                           "; using built-in defaults (fix or delete the file, or rerun "
                           "`mlaspec calibrate`)");
  }

  const Profile& builtin = builtin_profile();
  const CostModel* chosen = file ? file->find(machine) : nullptr;
  if (chosen) {
    out.notes.push_back("cost model for " + machine + " from " + chosen->source());
  } else {
    if (file) out.notes.push_back("profile " + path + " has no entry for \"" + machine + "\"");
    chosen = builtin.find(machine);
    if (chosen) {
      out.notes.push_back("cost model for " + machine + " from " + chosen->source());
    } else {
      chosen = builtin.find(detail::kFallbackGpu);
      out.warnings.push_back("no cost model for GPU \"" + machine + "\" (neither in " + path +
                             " nor built in); using the built-in " +
                             std::string(detail::kFallbackGpu) +
                             " constants: run `mlaspec calibrate` on this machine");
    }
  }
  if (chosen->provisional()) {
    out.warnings.push_back("the cost model for " + chosen->machine() +
                           " is provisional (not measured): `auto` may pick the slower backend "
                           "near the crossover; run `mlaspec calibrate`");
  }
  out.model = CostModel(machine, chosen->source(),
                        std::vector<CostEntry>(chosen->entries().begin(), chosen->entries().end()));
  out.model.set_provisional(chosen->provisional());
  if (machine != "cpu") {
    // CPU backends are modelled by the "cpu" section (file first, then built-in).
    const CostModel* cpu = file ? file->find("cpu") : nullptr;
    if (!cpu) cpu = builtin.find("cpu");
    if (cpu) {
      for (const CostEntry& e : cpu->entries()) {
        if (!out.model.find(e.backend, e.kv_dtype, e.heads ? e.heads : 1)) out.model.add(e);
      }
    }
  }
  return out;
}

}  // namespace mlaspec::attn
