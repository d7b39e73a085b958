// fp8 KV in fp8 math (VerifyOptions::fp8_math), page size 32: the sm90 64-row kernel's e4m3 MMAs.
#include "instantiate.cuh"

MLASPEC_INSTANTIATE_VERIFY_WIDE(Fp8MathKv, 32)
