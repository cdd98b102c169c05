// NumPy's .npz archives: `np.savez("ckpt.npz", **arrays)` / `np.load("ckpt.npz")`, a zip file of
// one .npy file per named array.
//
//   cjax::io::save_npz("ckpt.npz", {{"params.wte", wte}, {"step", step}});
//   for (auto& [name, buffer] : cjax::io::load_npz("ckpt.npz")) ...
//
// Written uncompressed (ZIP_STORED, as np.savez); read are np.savez's files, zip64 records
// included. Entries compressed by np.savez_compressed are refused by name (save with np.savez).
// The reader checks every offset and size against the bytes present, each entry's CRC-32, and
// its limits: at most kMaxNpzEntries entries, names of at most kMaxNpzNameBytes bytes, unique.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/buffer.h"

namespace cjax::io {

inline constexpr size_t kMaxNpzEntries = 65535;
inline constexpr size_t kMaxNpzNameBytes = 1024;

// Named arrays in file order; a name is the entry's file name less its ".npy".
using NamedBuffers = std::vector<std::pair<std::string, runtime::Buffer>>;

// Parses the bytes of a whole .npz file (throws cjax::Error "malformed .npz: ..." and the like).
NamedBuffers read_npz(std::string_view bytes);
// The bytes of a .npz holding `arrays`; names must be unique, non-empty and without '/'.
std::string write_npz(const NamedBuffers& arrays);

// The same on files; errors name the path.
NamedBuffers load_npz(const std::string& path);
void save_npz(const std::string& path, const NamedBuffers& arrays);

}  // namespace cjax::io
