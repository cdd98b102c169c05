// NumPy's .npy format (format versions 1.0, 2.0 and 3.0), the way NumPy and JAX users already
// store arrays: `np.save("x.npy", x)` / `np.load("x.npy")`.
//
//   runtime::Buffer x = cjax::io::load_npy("x.npy");
//   cjax::io::save_npy("grad.npy", g);
//
// Every cjax dtype round-trips. NumPy has no bfloat16: a bf16 array is written with descr '<V2'
// (what np.save writes for ml_dtypes.bfloat16; `np.load(...).view(ml_dtypes.bfloat16)` reads it)
// and a 2-byte void array reads as bf16. Big-endian data and Fortran order are converted on read.
// Malformed input throws cjax::Error naming what is wrong; the header's claims are checked against
// the bytes actually present before anything is allocated.
#pragma once

#include <string>
#include <string_view>

#include "runtime/buffer.h"

namespace cjax::io {

// Parses the bytes of a whole .npy file.
runtime::Buffer read_npy(std::string_view bytes);
// The bytes of a .npy file holding `buffer` (format 1.0, or 2.0 for a header over 64 KiB).
std::string write_npy(const runtime::Buffer& buffer);

// The same on files; errors name the path.
runtime::Buffer load_npy(const std::string& path);
void save_npy(const std::string& path, const runtime::Buffer& buffer);

// NumPy's descr for a dtype ('<f4', '|b1', '<V2' for bf16).
std::string npy_descr(DType t);

}  // namespace cjax::io
