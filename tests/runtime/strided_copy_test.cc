// runtime/strided_copy.h: every element lands where an index-by-index copy puts it, for
// transpositions, views with gaps, reversed strides and every element size the runtime has.
#include "runtime/strided_copy.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

using cjax::runtime::strided_copy;

// The reference: visits every index of `sizes` and copies one element at a time.
void copy_by_index(size_t elem, const std::vector<int64_t>& sizes, const char* src,
                   const std::vector<int64_t>& ss, char* dst, const std::vector<int64_t>& ds) {
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t so = 0, dof = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      so += idx[d] * ss[d];
      dof += idx[d] * ds[d];
    }
    std::memcpy(dst + dof * int64_t(elem), src + so * int64_t(elem), elem);
    for (size_t d = sizes.size(); d > 0 && ++idx[d - 1] == sizes[d - 1]; --d) idx[d - 1] = 0;
  }
}

struct Case {
  std::vector<int64_t> sizes, src_strides, dst_strides;
  int64_t src_origin, dst_origin, src_span, dst_span;  // elements
};

void check(size_t elem, const Case& c) {
  std::vector<char> src(size_t(c.src_span) * elem);
  for (size_t i = 0; i < src.size(); ++i) src[i] = char(i * 7 + 3);
  std::vector<char> want(size_t(c.dst_span) * elem, 0), got = want;
  copy_by_index(elem, c.sizes, src.data() + c.src_origin * int64_t(elem), c.src_strides,
                want.data() + c.dst_origin * int64_t(elem), c.dst_strides);
  strided_copy(elem, c.sizes, src.data() + c.src_origin * int64_t(elem), c.src_strides,
               got.data() + c.dst_origin * int64_t(elem), c.dst_strides);
  CHECK(got == want);
}

TEST_CASE("strided_copy: transpositions, views with gaps and reversed strides") {
  const std::vector<Case> cases = {
      {{3, 4, 5}, {20, 5, 1}, {20, 5, 1}, 0, 0, 60, 60},  // contiguous: one memcpy
      {{3, 4, 5}, {1, 15, 3}, {20, 5, 1}, 0, 0, 60, 60},  // a 3-d transposition
      {{3, 4}, {4, 1}, {1, 3}, 0, 0, 12, 12},             // contiguous read, transposed write
      {{4, 5}, {8, 1}, {5, 1}, 2, 0, 40, 20},             // rows of a wider array
      {{4, 1, 5}, {8, 99, 1}, {1, 77, 4}, 0, 0, 40, 20},  // a size-1 dim with any stride
      {{2, 3, 2}, {-6, 2, 1}, {6, 2, 1}, 6, 0, 12, 12},   // the outer dim reversed
      {{6}, {-1}, {1}, 5, 0, 6, 6},                       // one reversed run
      {{3, 0, 2}, {1, 1, 1}, {1, 1, 1}, 0, 0, 1, 1},      // empty: nothing is written
      {{}, {}, {}, 1, 2, 3, 3},                           // a scalar
  };
  for (size_t elem : {1, 2, 4, 8, 16})
    for (const Case& c : cases) {
      INFO("element size " << elem << ", rank " << c.sizes.size());
      check(elem, c);
    }
}

}  // namespace
