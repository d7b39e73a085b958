// fp8_tile KV, page size 16: the sm90 verify kernels (TMA + wgmma).
#include "instantiate.cuh"

MLASPEC_INSTANTIATE_VERIFY(Fp8TileKv, 16)
