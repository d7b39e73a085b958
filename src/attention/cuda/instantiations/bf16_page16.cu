// bf16 KV, page size 16: the sm90 verify kernel (TMA + wgmma).
#include "instantiate.cuh"

MLASPEC_INSTANTIATE_VERIFY(uint16_t, 16)
