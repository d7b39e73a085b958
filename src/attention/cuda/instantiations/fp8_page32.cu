// fp8 KV, page size 32: the sm90 verify kernel (TMA + wgmma).
#include "instantiate.cuh"

MLASPEC_INSTANTIATE_VERIFY(uint8_t, 32)
