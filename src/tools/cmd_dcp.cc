// `mlaspec dcp`: decode-context-parallel verify attention across GPUs, one process per GPU,
// started by this one command. The parent makes an NCCL unique id and starts `--world` copies of
// itself (`--rank r`), each on GPU r; every rank builds only its shard of the KV (chunk c of each
// request on rank c % world), runs DCP verify steps (rank partials, NCCL all-gather, merge) and
// rank 0 reports the time per step. `--check` also builds the whole pool on rank 0 and compares
// the result with the deterministic one-GPU fold call (bitwise when --chunk is deterministic mode's
// chunk for -H, the default; to a stated tolerance with --premerge, whose merge tree differs).
#include <CLI/CLI.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/dcp_nccl.h"
#include "mlaspec/attention/registry.h"
#include "mlaspec/bench/random_fill.h"
#include "mlaspec/core/cuda_device.h"
#include "mlaspec/core/log.h"
#include "tools/commands.h"
#include "tools/rank_exit.h"

#if defined(MLASPEC_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace mlaspec::tools {
namespace {

struct DcpCli {
  int world = 1;
  int rank = -1;  // set for the child processes
  std::string nccl_id;
  int batch = 1, heads = 16, q_len = 8;
  int64_t seq_len = 1048576;
  std::string kv = "bf16";
  int64_t chunk = 0;  // 0: deterministic mode's chunk for `heads`
  int reps = 20;
  bool check = false;
  bool premerge = false;
  bool ragged = false;  // every other request brings 1 query token instead of q_len
};

constexpr int kPage = 64;

#if defined(MLASPEC_WITH_CUDA)
// Query tokens of request b: --q-len, or 1 for every odd request with --ragged (q_len 1 next to
// the full width: the runs DCP takes a ragged batch in are then single requests, its worst case).
int64_t q_len_of(const DcpCli& c, int64_t b) {
  return c.ragged && b % 2 == 1 ? 1 : c.q_len;
}

Status cuda_ok(cudaError_t e, const char* what) {
  return e == cudaSuccess ? Status::Ok()
                          : internal_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// KV page `page` of the global pool (every rank derives the same values for the pages it holds).
uint64_t page_seed(int64_t page) {
  return 0x5eed0000ull + static_cast<uint64_t>(page);
}

// One rank's work: shard, steps, report.
void run_rank(const DcpCli& c) {
  throw_if_error(cuda_device_available());
  int devices = 0;
  throw_if_error(cuda_ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount"));
  if (c.rank >= devices) {
    throw Error(invalid_argument("rank " + std::to_string(c.rank) + " needs GPU " +
                                 std::to_string(c.rank) + " but this machine has " +
                                 std::to_string(devices)));
  }
  throw_if_error(cuda_ok(cudaSetDevice(c.rank), "cudaSetDevice"));
  DType kv;
  if (!parse_dtype(c.kv, &kv) || (kv != DType::kBF16 && kv != DType::kFP8E4M3)) {
    throw Error(invalid_argument("--kv " + c.kv + " is not bf16 or fp8"));
  }
  const attn::dcp::ShardLayout layout{c.world, c.chunk};
  throw_if_error(layout.validate(kPage));
  const int64_t B = c.batch, Q = c.q_len, H = c.heads;
  const int64_t pages_per_req = (c.seq_len + kPage - 1) / kPage, pages_per_chunk = c.chunk / kPage;
  const int64_t page_elems = int64_t{kPage} * attn::kHeadDimQK, esize = dtype_size(kv);
  const float kv_scale = kv == DType::kFP8E4M3 ? 0.05f : 1.0f;

  // Global page ids: request b's page j is b * pages_per_req + j. This rank's pages, renumbered.
  std::vector<int32_t> table(static_cast<size_t>(B * pages_per_req), 0);
  std::vector<int64_t> owned;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < pages_per_req; ++j) {
      if (layout.owner(j / pages_per_chunk) != c.rank) continue;
      table[b * pages_per_req + j] = static_cast<int32_t>(owned.size());
      owned.push_back(b * pages_per_req + j);
    }
  }
  const int64_t local_pages = std::max<int64_t>(1, static_cast<int64_t>(owned.size()));
  Buffer kv_buf(static_cast<size_t>(local_pages * page_elems * esize), Device::kCUDA);
  for (size_t p = 0; p < owned.size(); ++p) {
    throw_if_error(bench::fill_random(static_cast<uint8_t*>(kv_buf.data()) + p * page_elems * esize,
                                      true, kv, page_elems, page_seed(owned[p]), 1.0f, kv_scale));
  }
  std::vector<int32_t> indptr = {0};
  for (int64_t b = 0; b < B; ++b) indptr.push_back(indptr.back() + q_len_of(c, b));
  const int64_t T = indptr.back();  // query tokens (B * Q when uniform)
  const int64_t q_elems = T * H * attn::kHeadDimQK;
  Buffer q(static_cast<size_t>(q_elems * 2), Device::kCUDA);
  throw_if_error(bench::fill_random(q.data(), true, DType::kBF16, q_elems, 42));
  std::vector<int32_t> lens(static_cast<size_t>(B), static_cast<int32_t>(c.seq_len));
  Buffer bt(table.size() * 4, Device::kCUDA), sl(lens.size() * 4, Device::kCUDA);
  throw_if_error(bt.copy_from_host(table.data(), table.size() * 4));
  throw_if_error(sl.copy_from_host(lens.data(), lens.size() * 4));
  Buffer ip(indptr.size() * 4, Device::kCUDA);
  throw_if_error(ip.copy_from_host(indptr.data(), indptr.size() * 4));
  Buffer out(static_cast<size_t>(T * H * attn::kHeadDimV * 2), Device::kCUDA);
  Buffer lse(static_cast<size_t>(T * H * 4), Device::kCUDA);
  // Ragged: q [T, H, 576], out [T, H, 512], lse [T, H] with q_indptr; else the uniform shapes.
  auto out_view = [&](const Buffer& o) {
    return c.ragged ? o.view(DType::kBF16, {T, H, attn::kHeadDimV})
                    : o.view(DType::kBF16, {B, Q, H, attn::kHeadDimV});
  };
  auto lse_view = [&](const Buffer& l) {
    return c.ragged ? l.view(DType::kF32, {T, H}) : l.view(DType::kF32, {B, Q, H});
  };

  attn::VerifyArgs a;
  a.q = c.ragged ? q.view(DType::kBF16, {T, H, attn::kHeadDimQK})
                 : q.view(DType::kBF16, {B, Q, H, attn::kHeadDimQK});
  if (c.ragged) {
    a.q_indptr = ip.view(DType::kI32, {B + 1});
    a.q_indptr_host = TensorView(indptr.data(), DType::kI32, {B + 1});
  }
  a.kv.pages = kv_buf.view(kv, {local_pages, kPage, attn::kHeadDimQK});
  a.kv.kv_scale = kv_scale;
  a.block_table = bt.view(DType::kI32, {B, pages_per_req});
  a.seq_lens = sl.view(DType::kI32, {B});
  a.block_table_host = TensorView(table.data(), DType::kI32, {B, pages_per_req});
  a.seq_lens_host = TensorView(lens.data(), DType::kI32, {B});
  a.sm_scale = 1.0f / std::sqrt(static_cast<float>(attn::kHeadDimQK));
  const TensorView out_v = out_view(out);
  const TensorView lse_v = lse_view(lse);

  Result<std::unique_ptr<attn::dcp::NcclComm>> comm =
      attn::dcp::NcclComm::join(c.nccl_id, c.world, c.rank);
  throw_if_error(comm.status());
  attn::dcp::DcpWorkspace ws;
  const attn::dcp::DcpMerge merge =
      c.premerge ? attn::dcp::DcpMerge::kPremerge : attn::dcp::DcpMerge::kDeterministic;
  cudaStream_t stream;
  throw_if_error(
      cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  for (int w = 0; w < 3; ++w) {
    throw_if_error(
        attn::dcp::verify_step(*comm.value(), a, layout, ws, out_v, lse_v, stream, merge));
  }
  throw_if_error(cuda_ok(cudaStreamSynchronize(stream), "warm-up steps"));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> us;
  for (int r = 0; r < c.reps; ++r) {
    cudaEventRecord(e0, stream);
    throw_if_error(
        attn::dcp::verify_step(*comm.value(), a, layout, ws, out_v, lse_v, stream, merge));
    cudaEventRecord(e1, stream);
    throw_if_error(cuda_ok(cudaEventSynchronize(e1), "DCP step"));
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    us.push_back(1000.0 * ms);
  }
  std::sort(us.begin(), us.end());

  std::string verdict = "not checked (--check)";
  if (c.check && c.rank == 0) {
    // The whole pool on this GPU with the same per-page values, deterministic fold call.
    const int64_t all_pages = B * pages_per_req;
    Buffer full(static_cast<size_t>(all_pages * page_elems * esize), Device::kCUDA);
    for (int64_t p = 0; p < all_pages; ++p) {
      throw_if_error(bench::fill_random(static_cast<uint8_t*>(full.data()) + p * page_elems * esize,
                                        true, kv, page_elems, page_seed(p), 1.0f, kv_scale));
    }
    std::vector<int32_t> identity(static_cast<size_t>(all_pages));
    for (int64_t p = 0; p < all_pages; ++p) identity[p] = static_cast<int32_t>(p);
    Buffer bt_full(identity.size() * 4, Device::kCUDA), out1(out.bytes(), Device::kCUDA),
        lse1(lse.bytes(), Device::kCUDA);
    throw_if_error(bt_full.copy_from_host(identity.data(), identity.size() * 4));
    attn::VerifyArgs g = a;
    g.kv.pages = full.view(kv, {all_pages, kPage, attn::kHeadDimQK});
    g.block_table = bt_full.view(DType::kI32, {B, pages_per_req});
    g.block_table_host = TensorView(identity.data(), DType::kI32, {B, pages_per_req});
    g.out = out_view(out1);
    g.lse = lse_view(lse1);
    Result<std::unique_ptr<attn::Backend>> fold = attn::make_cuda_fold_backend();
    throw_if_error(fold.status());
    attn::VerifyOptions det;
    det.deterministic = true;
    throw_if_error(fold.value()->run(g, det));
    throw_if_error(cuda_ok(cudaDeviceSynchronize(), "reference call"));
    std::vector<uint8_t> h1(out.bytes()), h2(out.bytes()), l1(lse.bytes()), l2(lse.bytes());
    throw_if_error(out1.copy_to_host(h1.data(), h1.size()));
    throw_if_error(out.copy_to_host(h2.data(), h2.size()));
    throw_if_error(lse1.copy_to_host(l1.data(), l1.size()));
    throw_if_error(lse.copy_to_host(l2.data(), l2.size()));
    int64_t diff = 0;
    bool lse_same = l1 == l2;
    if (!c.premerge) {
      for (size_t k = 0; k < h1.size(); k += 2) diff += std::memcmp(&h1[k], &h2[k], 2) != 0;
      verdict = diff == 0 && lse_same
                    ? "bitwise equal to the deterministic one-GPU call"
                    : std::to_string(diff) + " out elements differ from the one-GPU call" +
                          (lse_same ? "" : ", lse differs");
    } else {
      // Another merge tree over the same partials: fp32 reassociation before the bf16 rounding,
      // so at most a couple of bf16 ulps (2^-7 relative) plus a small absolute floor.
      constexpr double kRel = 1.0 / 128, kAbs = 1e-5, kLseTol = 1e-5;
      double worst = 0;
      for (size_t k = 0; k < h1.size(); k += 2) {
        uint16_t a, b;
        std::memcpy(&a, &h1[k], 2);
        std::memcpy(&b, &h2[k], 2);
        const double x = bf16_bits_to_float(a), y = bf16_bits_to_float(b);
        const double err = std::fabs(x - y) / (kRel * std::fabs(x) + kAbs);
        worst = std::max(worst, err);
        diff += err > 1.0;
      }
      float lse_err = 0.f;
      for (size_t k = 0; k + 4 <= l1.size(); k += 4) {
        float x, y;
        std::memcpy(&x, &l1[k], 4);
        std::memcpy(&y, &l2[k], 4);
        lse_err = std::max(lse_err, std::fabs(x - y) / (1.f + std::fabs(x)));
      }
      lse_same = lse_err <= kLseTol;
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "within tolerance of the deterministic one-GPU call (worst %.2f of |d| <= "
                    "2^-7|x| + 1e-5; lse %.1e)",
                    worst, lse_err);
      verdict = diff == 0 && lse_same ? std::string(buf)
                                      : std::to_string(diff) + " out elements outside tolerance" +
                                            (lse_same ? "" : ", lse outside tolerance");
    }
    if (diff != 0 || !lse_same) {
      std::printf("mlaspec dcp: rank 0: CHECK FAILED: %s\n", verdict.c_str());
      std::fflush(stdout);
      throw Error(internal_error("DCP result differs from the one-GPU result"));
    }
  }
  if (c.rank == 0) {
    std::printf(
        "| world | config | chunk | µs per step (median) | min | max | check "
        "|\n|---|---|---|---|---|---|---|\n");
    std::printf("| %d | B=%d,H=%d,q=%d,S=%lld,kv=%s%s%s | %lld | %.1f | %.1f | %.1f | %s |\n",
                c.world, c.batch, c.heads, c.q_len, static_cast<long long>(c.seq_len), c.kv.c_str(),
                c.ragged ? ",ragged" : "", c.premerge ? ",premerge" : "",
                static_cast<long long>(c.chunk), us[us.size() / 2], us.front(), us.back(),
                verdict.c_str());
    std::fflush(stdout);
  }
  cudaStreamDestroy(stream);
}
#endif

// Every argument is checked here, before a rank starts: a bad value is one error from the
// parent, not one per rank after each has set up its GPU and joined NCCL.
void check_args(const DcpCli& c) {
  const attn::dcp::ShardLayout layout{c.world, c.chunk};
  throw_if_error(layout.validate(kPage).with_context("--world " + std::to_string(c.world) +
                                                     " --chunk " + std::to_string(c.chunk)));
  if (c.ragged && (c.batch < 2 || c.q_len < 2)) {
    throw Error(invalid_argument(
        "--ragged gives every other request 1 query token beside --q-len's: with --batch " +
        std::to_string(c.batch) + " and --q-len " + std::to_string(c.q_len) +
        " the batch would be uniform (it needs both >= 2)"));
  }
  if (c.seq_len < c.q_len) {
    throw Error(invalid_argument("--seq-len " + std::to_string(c.seq_len) + " is below --q-len " +
                                 std::to_string(c.q_len) +
                                 " (the context counts the new tokens too)"));
  }
  // The shape must be one the one-GPU fold backend serves: its kernels run every rank's part.
  attn::VerifyShape s;
  s.batch = c.batch;
  s.num_heads = c.heads;
  s.q_len = c.q_len;
  s.max_seq_len = c.seq_len;
  s.total_kv = c.seq_len * c.batch;
  s.page_size = kPage;
  s.kv_dtype = c.kv == "fp8" ? DType::kFP8E4M3 : DType::kBF16;
  s.deterministic = true;
  s.ragged = c.ragged;
  const auto reg = attn::BackendRegistry::with_builtin_backends();
  Result<int> fold = reg->index_of("cuda_fold");
  throw_if_error(fold.status());
  throw_if_error(attn::can_serve(reg->caps(fold.value()), s).with_context(s.to_string()));
}

// Starts one child per rank and waits for all of them.
void run_parent(const DcpCli& c, const std::vector<std::string>& argv_tail) {
#if !defined(MLASPEC_WITH_CUDA)
  (void)c;
  (void)argv_tail;
  throw Error(unsupported("mlaspec dcp needs a CUDA build with NCCL"));
#else
  if (!attn::dcp::built_with_nccl())
    throw Error(unsupported("mlaspec dcp needs NCCL: this build has none"));
  Result<std::string> id = attn::dcp::NcclComm::unique_id();
  throw_if_error(id.status());
  std::fprintf(stderr, "mlaspec dcp: starting %d rank processes\n", c.world);
  std::vector<pid_t> pids;
  for (int r = 0; r < c.world; ++r) {
    const pid_t pid = fork();
    if (pid < 0) throw Error(internal_error(std::string("fork failed: ") + std::strerror(errno)));
    if (pid == 0) {
      std::vector<std::string> args = {"mlaspec", "dcp"};
      args.insert(args.end(), argv_tail.begin(), argv_tail.end());
      args.insert(args.end(), {"--rank", std::to_string(r), "--nccl-id", id.value()});
      std::vector<char*> cargs;
      for (auto& s : args) cargs.push_back(s.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      std::fprintf(stderr, "mlaspec dcp: exec failed: %s\n", std::strerror(errno));
      _exit(127);
    }
    pids.push_back(pid);
  }
  std::string failures;
  int failed = 0;
  StatusCode code = StatusCode::kOk;  // the first failed rank's
  for (int r = 0; r < c.world; ++r) {
    int status = 0;
    if (waitpid(pids[r], &status, 0) < 0) {
      throw Error(internal_error("waitpid for rank " + std::to_string(r) +
                                 " failed: " + std::strerror(errno)));
    }
    const StatusCode rank_code = rank_failure_code(status);
    if (rank_code == StatusCode::kOk) continue;
    failures += (failures.empty() ? "" : ", ") +
                ("rank " + std::to_string(r) + " " + describe_rank_exit(status));
    ++failed;
    if (code == StatusCode::kOk) code = rank_code;
  }
  // Each rank printed its own error; this says which ranks ended how.
  if (failed) {
    throw Error(Status(code, std::to_string(failed) + " of " + std::to_string(c.world) +
                                 " ranks failed (" + failures + "; each rank's error is above)"));
  }
#endif
}

}  // namespace

void add_dcp_command(CLI::App& app) {
  auto cli = std::make_shared<DcpCli>();
  CLI::App* cmd = app.add_subcommand(
      "dcp",
      "Decode-context-parallel verify attention across GPUs: starts one process per GPU (NCCL), "
      "shards every request's KV in fixed chunks, and reports the time per verify step on rank 0.");
  cmd->add_option("--world", cli->world, "Ranks (one GPU each)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("-B,--batch", cli->batch, "Requests")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("-H,--heads", cli->heads, "Query heads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("-q,--q-len", cli->q_len, "Query tokens per request")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("-S,--seq-len", cli->seq_len, "Context length per request")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--kv", cli->kv, "KV dtype: bf16 or fp8")
      ->check(CLI::IsMember({"bf16", "fp8"}))
      ->capture_default_str();
  cmd->add_option("--chunk", cli->chunk,
                  "Tokens per DCP chunk (multiple of 64); 0 = deterministic mode's chunk for -H "
                  "(1024 per 64 heads), the one the one-GPU check is bitwise equal at")
      ->capture_default_str();
  cmd->add_option("--reps", cli->reps, "Timed steps")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_flag("--check", cli->check,
                "Rank 0 also computes the one-GPU deterministic result and compares (bitwise; with "
                "--premerge to a tolerance)");
  cmd->add_flag("--premerge", cli->premerge,
                "Each rank merges its own chunks first, so the all-gather carries one partial per "
                "rank instead of one per chunk (not bitwise equal to the one-GPU call)");
  cmd->add_flag("--ragged", cli->ragged,
                "Every other request brings 1 query token instead of --q-len (a ragged batch: DCP "
                "runs it as its runs of equal q_len, one all-gather each in one NCCL group)");
  cmd->add_option("--rank", cli->rank, "(internal) this process's rank")->group("");
  cmd->add_option("--nccl-id", cli->nccl_id, "(internal) NCCL unique id")->group("");
  cmd->callback([cli] {
    if (cli->chunk == 0) cli->chunk = attn::deterministic_chunk_tokens(cli->heads);
    check_args(*cli);
    if (cli->rank < 0) {
      // The children get the same problem options, then their rank and the NCCL id.
      std::vector<std::string> tail = {
          "--world",   std::to_string(cli->world),   "--batch", std::to_string(cli->batch),
          "--heads",   std::to_string(cli->heads),   "--q-len", std::to_string(cli->q_len),
          "--seq-len", std::to_string(cli->seq_len), "--kv",    cli->kv,
          "--chunk",   std::to_string(cli->chunk),   "--reps",  std::to_string(cli->reps)};
      if (cli->check) tail.push_back("--check");
      if (cli->premerge) tail.push_back("--premerge");
      if (cli->ragged) tail.push_back("--ragged");
      run_parent(*cli, tail);
      return;
    }
#if defined(MLASPEC_WITH_CUDA)
    try {
      run_rank(*cli);
    } catch (const Error& e) {
      std::fprintf(stderr, "mlaspec dcp: rank %d: error: %s\n", cli->rank, e.what());
      std::fflush(stderr);
      std::_Exit(rank_exit_code(e.status().code()));
    }
#else
    throw Error(unsupported("mlaspec dcp needs a CUDA build with NCCL"));
#endif
  });
}

}  // namespace mlaspec::tools
