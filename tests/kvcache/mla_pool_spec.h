// The MLA pool spec the kvcache tests start from (name "target", mla(576) rows).
#pragma once

#include "mlaspec/kvcache/pool.h"

namespace mlaspec::kv {

inline KvPoolSpec mla_spec(DType dtype, int layers = 2, int pages = 4, int page_size = 4) {
  KvPoolSpec s;
  s.name = "target";
  s.layout = KvLayout::mla();
  s.num_layers = layers;
  s.num_pages = pages;
  s.page_size = page_size;
  s.dtype = dtype;
  return s;
}

}  // namespace mlaspec::kv
