// The shape syntax of the command line (`inspect --explain`, `bench --config`):
// "B=1,H=16,q=8,S=131072,kv=fp8[,page=64][,det][,fp8math][,dev=cuda|cpu]".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/status.h"

namespace mlaspec::tools {

// The keys, exactly as written (case-sensitive, no aliases): B, H, q, page take a positive
// integer, S a positive integer with an optional k/m suffix (128k = 131072), kv bf16 or fp8, dev
// cuda or cpu; det and fp8math are flags and take no value. Items are comma-separated, spaces
// around them ignored; each key at most once. S is required; B=1, H=16, q=1, kv=bf16, page=64 by
// default. `device` (optional) receives dev=. Errors (kInvalidArgument) name the item and list
// what is accepted.
Result<attn::VerifyShape> parse_shape_spec(std::string_view spec,
                                           std::optional<Device>* device = nullptr);

// A token count as S= and `bench-model --context` write it: an integer >= 0 with an optional k
// (1024) or m (1048576) suffix, either case, at most 2^40; nullopt when malformed or larger.
std::optional<int64_t> parse_token_count(std::string_view text);

}  // namespace mlaspec::tools
