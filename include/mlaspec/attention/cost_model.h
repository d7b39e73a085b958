// The cost model behind dispatch policy `auto`: estimated µs of one verify-attention call per
// backend, from constants that `mlaspec calibrate` measures on the machine at hand.
//
// Per (backend, KV dtype, math, H, q_len, mode) an entry holds the B=1 curve calibrate measured,
// (S, µs) points, and a model linear in three terms:
//
//   t_us = fixed_us + us_per_mb * (KV MB the backend reads) + us_per_gflop * (GFLOPs)
//
// A B=1 shape whose S lies inside the curve's range is estimated by interpolating log(µs) against
// log(S) between the neighbouring measured points (exact at them). An entry may also hold a batch
// grid, median µs at every (B, S) of a few B > 1 and S (uniform requests); a B > 1 shape inside
// the grid's box is estimated by interpolating log(µs) bilinearly in log(B) and log(mean S).
// Elsewhere the linear terms are used (the batch's total KV in the features).
//
// where a backend that folds all rows of a request into one pass reads the KV once per request
// and a rowwise backend reads it once per query token (q_len times). FLOPs are PERF.md's
// 2*q_len*H*(576+512) per KV token. The constants are fitted by non-negative least squares on
// relative error (fit_cost_terms), so a profile is a few numbers a person can read: fixed cost,
// effective bandwidth (1/us_per_mb TB/s) and effective matrix rate.
//
// Profiles are JSON, keyed by GPU name (docs/dispatch.md has the format and the search order):
//   {"format": "mlaspec-profile", "version": 3,
//    "machines": {"NVIDIA H200": {"source": "...", "models": [
//        {"backend": "cuda_fold", "kv": "bf16", "heads": 16, "q_len": 8,
//         "fixed_us": 6.0, "us_per_mb": 0.27, "us_per_gflop": 1.6,
//         "curve": [[1024, 28.9], [2048, 29.1], ...],
//         "batch": [[4, 4096, 31.0], [4, 32768, 120.5], [16, 4096, 70.2], ...]},
//        {"backend": "cuda_fold", "kv": "bf16", "heads": 16, "q_len": 8, "det": true, ...}, ...]}}}
// (version 3 added "det": an entry measured in deterministic mode, and "batch"; version 2 files,
// without them, and version 1 files, without q_len and curve, still load: default-mode entries,
// q_len 0, no curve, no batch grid). An entry measured in fp8 math carries "fp8_math": true
// (fp8 KV only); absent means exact math, so files without the key load unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/status.h"

namespace mlaspec::attn {

// How a backend's main pass reads the KV cache; decides the KV-bytes term.
enum class KvReadPattern : uint8_t {
  kOncePerRequest,     // fold: one pass serves all q_len*H rows of a request (the CUDA fold
                       // kernel shares a pass across at most 128 rows; beyond, the extra passes
                       // are a constant factor per (H, q_len) entry, absorbed by its us_per_mb)
  kOncePerQueryToken,  // rowwise: one pass per query token, q_len passes per request
};
std::string_view kv_read_pattern_name(KvReadPattern p);

// The model's inputs for one call.
struct CostFeatures {
  double kv_mb = 0;   // KV bytes read / 1e6
  double gflops = 0;  // 2 * q_len * H * (576 + 512) * total_kv / 1e9
};
CostFeatures cost_features(const VerifyShape& shape, KvReadPattern pattern);

// The fitted constants (all >= 0).
struct CostTerms {
  double fixed_us = 0;
  double us_per_mb = 0;
  double us_per_gflop = 0;
  double estimate_us(const CostFeatures& f) const {
    return fixed_us + us_per_mb * f.kv_mb + us_per_gflop * f.gflops;
  }
};

// One measured point of a curve: B=1, context length S, median µs.
struct CurvePoint {
  int64_t seq_len = 0;
  double us = 0;
};

// Piecewise-linear interpolation of log(µs) against log(S) between the neighbouring points of a
// curve (sorted, strictly increasing S, µs > 0); nullopt when S lies outside [first S, last S].
// Exact at the measured points, monotone between neighbours.
std::optional<double> interpolate_curve(std::span<const CurvePoint> curve, int64_t seq_len);

// One measured point of a batch grid: B requests of S tokens each, median µs.
struct BatchPoint {
  int batch = 0;
  int64_t seq_len = 0;
  double us = 0;
};

// A batch grid's distinct B and S values, ascending, and whether it holds every (B, S) pair of
// them exactly once (`complete`; false for an empty grid, a hole or a repeated pair).
struct BatchGridAxes {
  std::vector<int> batches;
  std::vector<int64_t> seq_lens;
  bool complete = false;
};
BatchGridAxes batch_grid_axes(std::span<const BatchPoint> grid);

// Bilinear interpolation of log(µs) in log(B) and log(S) over a batch grid that holds every
// (B, S) of its B values and S values (any order, µs > 0); exact at the grid's points, between
// the four surrounding points' µs inside. nullopt when the grid is empty or not such a rectangle,
// or (batch, seq_len) lies outside [min B, max B] x [min S, max S].
std::optional<double> interpolate_batch_grid(std::span<const BatchPoint> grid, int batch,
                                             double seq_len);

// One model of a profile: constants for one backend and KV dtype, measured at `heads` query
// heads (0 = fitted over all H) and `q_len` query tokens (0 = fitted over all q_len), in the
// default or the deterministic mode, with the B=1 curve they were fitted to (may be empty). Fit
// statistics are informative only.
struct CostEntry {
  std::string backend;
  DType kv_dtype = DType::kBF16;
  int heads = 0;
  int q_len = 0;
  // Measured in deterministic mode (VerifyOptions::deterministic: fixed split chunks, another
  // plan and merge tree, so other costs than the default mode's at the same shape).
  bool deterministic = false;
  // Measured in fp8 math (VerifyOptions::fp8_math: e4m3 Q and P on fp8_e4m3 KV, other kernels
  // than exact math's). Prices fp8-math calls only; exact calls never use it.
  bool fp8_math = false;
  CostTerms terms;
  std::vector<CurvePoint> curve;  // B=1 measurements, strictly increasing seq_len
  std::vector<BatchPoint> batch;  // B > 1 measurements: a full (B, S) rectangle, or empty
  int points = 0;                 // measurements the fit used (0 = not measured)
  double rms_rel_err = 0;         // of the fit on those measurements
  double max_rel_err = 0;
};

// The KV column of a table of entries or shapes: the dtype's label, or "fp8math" for fp8 math.
std::string kv_math_label(DType kv_dtype, bool fp8_math);

// ---- Fitting (pure; unit-tested on synthetic data) ---------------------------------------------

struct CostSample {
  CostFeatures features;
  double time_us = 0;
};
struct CostFit {
  CostTerms terms;
  int points = 0;
  double rms_rel_err = 0;
  double max_rel_err = 0;
};
// Non-negative least squares on relative error, min sum ((est - t) / t)^2 over the samples, by
// trying every subset of the three terms (exact for three terms). Needs >= 3 samples with
// time_us > 0 and finite features.
Result<CostFit> fit_cost_terms(std::span<const CostSample> samples);

// ---- A machine's model --------------------------------------------------------------------------

// One call's estimate and, when it is not from an entry of the call's own KV dtype, how it was
// derived (shown beside it by `inspect --explain` and the dispatch log).
struct CostEstimate {
  double us = 0;
  std::string derived;  // empty: from the backend's own entry for this dtype
};

class CostModel {
 public:
  CostModel() = default;
  CostModel(std::string machine, std::string source, std::vector<CostEntry> entries)
      : machine_(std::move(machine)), source_(std::move(source)), entries_(std::move(entries)) {}

  const std::string& machine() const { return machine_; }  // "NVIDIA H200", "cpu"
  const std::string& source() const { return source_; }    // where the constants came from
  std::span<const CostEntry> entries() const { return entries_; }
  void add(CostEntry e) { entries_.push_back(std::move(e)); }
  // Constants not measured on this machine (estimates written down by hand): using them warns.
  bool provisional() const { return provisional_; }
  void set_provisional(bool p) { provisional_ = p; }
  void set_source(std::string s) { source_ = std::move(s); }

  // The entry for `backend` at this dtype, math and mode: only entries of the asked math
  // (`fp8_math`: measured in fp8 math or exact, never the other), and of those only entries of the
  // asked mode (`deterministic`) when the model has any for this backend, dtype and math, else the
  // other mode's (a profile calibrated before version 3 prices deterministic calls like default
  // ones). Among
  // those, first the H nearest to `num_heads` in log2 (ties: the smaller H; heads = 0 entries only
  // when there is no measured H), then among that H's entries the q_len nearest to `q_len`
  // (|difference|; ties: the larger q_len; q_len = 0 entries only when that H has no measured
  // q_len; `q_len` 0 asks for q_len-0 entries first, else the smallest). nullptr if none.
  const CostEntry* find(std::string_view backend, DType kv_dtype, int num_heads, int q_len = 0,
                        bool deterministic = false, bool fp8_math = false) const;

  // Estimated µs, or nullopt when the model has no entry for this backend and dtype. The entry is
  // find()'s for the shape's mode (shape.deterministic). B = 1 with S inside the entry's curve:
  // the curve, log-log interpolated; B > 1 with B and the mean S (total_kv / B) inside the
  // entry's batch grid: the grid, interpolated; otherwise the linear terms. When the entry's H or
  // q_len differs from the shape's, that estimate (made at the entry's own H and q_len) is scaled
  // beyond its fixed part by the ratio of the shapes' work at the roofline (the larger of KV bytes
  // and FLOPs at the H200's balance).
  //
  // fp8 math (shape.fp8_math): the backend's fp8-math entries (`mlaspec calibrate` measures the
  // mode), chosen by find() as above, when the model has any for the backend; exact calls never
  // use them. Without them (a profile calibrated before calibrate measured the mode, or with
  // --no-fp8-math) it is derived from the backend's exact fp8_e4m3 estimate of the same shape, its
  // time beyond the fixed part scaled by the roofline work with the FLOPs at e4m3's rate (twice
  // f16's): the MMA time halved where tensor-bound. The H100 measured the mode at about bf16's
  // time where tensor-bound, so the derivation underprices it; it is always marked derived.
  //
  // fp8_tile until calibrated: a backend without fp8_tile entries (of either mode) but with
  // fp8_e4m3 ones is priced from them: the fp8_e4m3 estimate of the same shape, beyond its entry's
  // fixed part scaled by the ratio of the shapes' roofline work, i.e. by 656 / 576 (the KV bytes
  // per token) where memory-bound, 1 where compute-bound (its kernels are the fp8_e4m3 kernels'
  // structure with bf16 MMAs). Calibrated fp8_tile entries, when the profile has any for the
  // backend, always take precedence.
  std::optional<double> estimate_us(std::string_view backend, KvReadPattern pattern,
                                    const VerifyShape& shape) const;
  // The entry estimate_us prices `shape` from: find()'s for the shape's dtype, math, mode, H and
  // q_len; for an fp8-math shape without fp8-math entries, the exact entry its price is derived
  // from (entry->fp8_math says which); for fp8_tile without entries of its own, fp8_e4m3's.
  // nullptr if none.
  const CostEntry* entry_for(std::string_view backend, const VerifyShape& shape) const;
  // The same, saying whether the estimate was derived (CostEstimate::derived).
  std::optional<CostEstimate> estimate(std::string_view backend, KvReadPattern pattern,
                                       const VerifyShape& shape) const;

 private:
  std::string machine_;
  std::string source_;
  std::vector<CostEntry> entries_;
  bool provisional_ = false;
};

// Where the cheaper of backends A and B changes as S grows, at the other dimensions of `shape`
// (B requests, each with seq_len S, S in [q_len, max_seq_len]; shape.deterministic and
// shape.fp8_math pick the mode's and the math's entries). With curves the costs are not
// linear in S, so the estimates are scanned: at both ends, every measured S of both entries'
// curves (and the S right past each curve's end, where the estimate switches to the linear tail),
// and a geometric grid of 16 points per octave; between neighbouring scan points whose winner
// differs the first S of the change is found by bisection. Curves are monotone between their
// points and the tails linear, so changes between scan points closer than that are not expected.
struct Crossover {
  bool has_model = false;    // both backends have an entry for this dtype
  int64_t seq_len = 0;       // first S where long_winner is estimated cheaper; 0 = no change
  std::string short_winner;  // cheaper (or equal) for S < seq_len, or everywhere if seq_len == 0
  std::string long_winner;   // cheaper from seq_len on (up to the next change, if any)
  std::vector<int64_t> changes;  // every S where the cheaper backend changes (changes[0] = seq_len)
  std::string to_string() const;  // "cuda_rowwise below S=5120, cuda_fold from there"
};
Crossover find_crossover(const CostModel& model, std::string_view backend_a, KvReadPattern pat_a,
                         std::string_view backend_b, KvReadPattern pat_b, VerifyShape shape,
                         int64_t max_seq_len = int64_t{1} << 24);

// ---- Profiles (JSON) ----------------------------------------------------------------------------

// A parsed profile file: one CostModel per machine name.
struct Profile {
  std::vector<CostModel> machines;
  const CostModel* find(std::string_view machine) const;
};

// Parses profile JSON. Errors (kDataLoss) name the problem and where: "profile.json: machines.
// \"NVIDIA H200\".models[2].us_per_mb: expected a number >= 0, got \"fast\"". `origin` prefixes
// messages (a path, or "built-in defaults").
Result<Profile> parse_profile(std::string_view json_text, std::string_view origin);
Result<Profile> load_profile_file(const std::string& path);  // kNotFound if missing
// Serialises one machine into `existing` JSON text ("" = new file). Other machines are kept, and
// so are this machine's entries for (backend, kv, math, heads, q_len, mode) the new model does not
// have, with their "crossovers" and "sweep_check" records (matched by kv, math, heads, q_len and
// mode, and by config) when `extra_json_for_machine` has those arrays; the worst regrets are then
// recomputed over what is kept. The machine's other fields are replaced by
// `extra_json_for_machine` (a JSON object) and the model's.
Result<std::string> merge_profile_json(std::string_view existing, const CostModel& model,
                                       std::string_view extra_json_for_machine = {});

// The built-in profiles: data/profiles/*.json, embedded at build time, and the CPU section of
// src/attention/default_profiles.h; parsing them cannot fail (tested).
const Profile& builtin_profile();

// The default profile path: $MLASPEC_PROFILE, else $XDG_CACHE_HOME/mlaspec/profile.json, else
// $HOME/.cache/mlaspec/profile.json.
std::string default_profile_path();

// GPU 0's name as the CUDA driver reports it ("NVIDIA H200"), or "" without a usable driver/GPU.
// $MLASPEC_GPU_NAME overrides (for tests and for using another machine's profile).
std::string detect_gpu_name();

struct CostModelRequest {
  std::string profile_path;  // explicit path (--profile); "" = default_profile_path()
  std::string machine;       // GPU name; "" = CPU only (built-in "cpu" model)
  // An explicitly requested profile that cannot be used is an error. Otherwise (default path
  // or $MLASPEC_PROFILE) a missing file means built-in defaults and a malformed one means
  // built-in defaults with a warning.
  bool strict = false;
};
struct ResolvedCostModel {
  CostModel model;
  std::vector<std::string> warnings;  // the caller logs them (log_warn) or prints them
  std::vector<std::string> notes;     // informational (where the constants came from)
};
// The model for `machine`: its section of the profile file, else the built-in defaults for it,
// else (with a warning: uncalibrated GPU) the built-in defaults of the closest known machine.
// CPU backends' entries always come along from the "cpu" section.
Result<ResolvedCostModel> resolve_cost_model(const CostModelRequest& request);

}  // namespace mlaspec::attn
