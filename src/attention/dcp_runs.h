// Ragged DCP calls as uniform runs (attention/dcp.h's layouts): the run list and the views of one
// run in the ragged buffers, shared by the CPU, CUDA and NCCL paths.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "mlaspec/attention/verify.h"

namespace mlaspec::attn::dcp {

// Requests [first_request, +count), query rows [first_row, +count * q_len), one q_len.
struct UniformRun {
  int64_t first_request = 0, count = 0, first_row = 0, q_len = 0;
};

// The runs of q_indptr_host ([B+1] int32 on the host, checked by validate_q_indptr against
// `rows` = T), in request order: the ones for_each_uniform_run makes.
Result<std::vector<UniformRun>> uniform_runs(const TensorView& q_indptr_host, int64_t rows);

// Run `run`'s part of a contiguous ragged partial buffer [n * T, H(, 512)] (n = world * cpr for
// gathered partials, cpr for a rank's, 1 for pre-merged ones): the contiguous view of shape `dims`
// (the run's uniform buffer, e.g. {count, cpr, q_len, H, 512}) from row n * run.first_row.
TensorView run_partials(const TensorView& ragged, const UniformRun& run, int64_t n,
                        std::initializer_list<int64_t> dims);

// Run `run`'s rows of a ragged out [T, H, 512] or lse [T, H] (any row strides) as the run's
// uniform [count, q_len, H(, 512)].
TensorView run_rows(const TensorView& ragged, const UniformRun& run);

// A ragged partial buffer: contiguous f32 [rows, H, 512] (o) or [rows, H] (lse) on `device`.
Status expect_ragged_partials(const TensorView& t, const std::string& name, int64_t rows,
                              int64_t num_heads, bool o, Device device);

// A rank's partials of a validated ragged call by run: checks o_parts [cpr * T, H, 512] and
// lse_parts [cpr * T, H] (contiguous f32 on `device`), then calls `uniform` once per uniform run
// of `ragged` (for_each_uniform_run's, in request order) with the run's call and its
// [count, cpr, q_len, H(, 512)] views of the buffers.
using RunPartials =
    std::function<Status(const VerifyArgs& run, const TensorView& o, const TensorView& lse)>;
Status for_each_run_partials(const VerifyArgs& ragged, int64_t cpr, const TensorView& o_parts,
                             const TensorView& lse_parts, Device device,
                             const RunPartials& uniform);

}  // namespace mlaspec::attn::dcp
