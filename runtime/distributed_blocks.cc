#include "runtime/distributed_blocks.h"

#include <cstring>
#include <vector>

#include "runtime/distributed.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime::distributed {
namespace {

// Copies the block of shape `local` at `start` of an array of shape `whole_shape` out of it
// (extract) or into it, one contiguous row at a time.
void copy_block(char* whole, const Shape& whole_shape, char* block, const Shape& local,
                const std::vector<int64_t>& start, size_t item, bool extract) {
  if (local.empty()) {
    extract ? std::memcpy(block, whole, item) : std::memcpy(whole, block, item);
    return;
  }
  const std::vector<int64_t> strides = row_major_strides(whole_shape);
  const size_t row = size_t(local.back()) * item;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < local.size(); ++d) rows *= local[d];
  std::vector<int64_t> index(local.size(), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d < local.size(); ++d) offset += (start[d] + index[d]) * strides[d];
    char* w = whole + size_t(offset) * item;
    char* b = block + size_t(r) * row;
    extract ? std::memcpy(b, w, row) : std::memcpy(w, b, row);
    for (size_t d = local.size() - 1; d-- > 0;) {  // the next row: every dim but the last
      if (++index[d] < local[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

Buffer take_block(const Buffer& whole, const Shape& local, const PartitionSpec& spec,
                  const MeshAxes& mesh, int64_t device) {
  const ShapedArray& aval = whole.aval();
  Buffer b = Buffer::allocate(ShapedArray(aval.dtype, local));
  copy_block(static_cast<char*>(const_cast<void*>(whole.data())), aval.shape,
             static_cast<char*>(b.data()), local, block_start(local, spec, mesh, device),
             itemsize(aval.dtype), true);
  return b;
}

Buffer gather_blocks(const Buffer& block, const Shape& whole_shape, const PartitionSpec& spec,
                     const MeshAxes& mesh) {
  const ShapedArray& aval = block.aval();
  Buffer whole = Buffer::allocate(ShapedArray(aval.dtype, whole_shape));
  const std::vector<std::string> axes = spec.axes();
  const int64_t n = group_size(axes);
  std::vector<char> gathered(block.nbytes() * size_t(n));
  all_gather(axes, block.data(), gathered.data(), block.nbytes());
  // Member k of the group sits at coordinates k (row-major over `axes`) along the named axes.
  for (int64_t k = 0; k < n; ++k) {
    std::vector<int64_t> coords(mesh.names.size(), 0);
    for (int64_t rest = k, a = int64_t(axes.size()) - 1; a >= 0; --a) {
      const size_t m = *mesh.find(axes[size_t(a)]);
      coords[m] = rest % mesh.sizes[m];
      rest /= mesh.sizes[m];
    }
    int64_t device = 0;
    for (size_t m = 0; m < mesh.names.size(); ++m) device = device * mesh.sizes[m] + coords[m];
    copy_block(static_cast<char*>(whole.data()), whole_shape,
               gathered.data() + size_t(k) * block.nbytes(), aval.shape,
               block_start(aval.shape, spec, mesh, device), itemsize(aval.dtype), false);
  }
  return whole;
}

}  // namespace cjax::runtime::distributed
