// Reading and writing numpy .npy files (format versions 1.0, 2.0 and 3.0) as evoxc Tensors.
#pragma once

#include <string>
#include <string_view>

#include "evoxc/core/tensor.h"

namespace evoxc::io {

// Reads a .npy file into a host tensor.
//  - Format versions 1.0, 2.0 and 3.0 (3.0 only differs by allowing a UTF-8 header).
//  - dtypes: '|b1', '<i1'..'<i8', '<u1'..'<u8', '<f2', '<f4', '<f8' ('|', '<', '=' and '>'
//    byte orders; big-endian data is byte-swapped to the host order). Bool bytes other
//    than 0 and 1 read as true.
//  - fortran_order True is accepted: the data is transposed into evoxc's row-major order,
//    so the tensor has the same shape and elements as numpy.load gives.
//  - Everything else (bad magic, unknown version, a malformed or oversized header,
//    structured, complex, string or object dtypes, a negative or overflowing shape, a data
//    size that differs from what the header says, truncation) is a PersistenceError whose
//    message starts "<path>: " and names the problem. The data size is checked against the
//    file size before anything is allocated, so a hostile header cannot cause a huge
//    allocation.
//  - Only regular files are read, of at most max_npy_bytes() (64 GiB unless
//    EVOXC_MAX_NPY_BYTES says otherwise, core/limits.h); PersistenceError otherwise.
Tensor read_npy(const std::string& path);
// The same from the bytes of a .npy file; `name` stands for the path in error messages.
Tensor read_npy_bytes(std::string_view bytes, const std::string& name = "<npy bytes>");

// Writes a host tensor as a .npy file, atomically (temp file + rename, see
// write_file_atomic): version 1.0, or 2.0 when the header does not fit 1.0's 16-bit
// length. The header is byte-identical to what numpy.save writes for the same array
// (little-endian descr, fortran_order False, numpy's padding to 64 bytes).
// ValidationError for an undefined tensor or a bfloat16 tensor (numpy has no bfloat16:
// convert to float32 first); DeviceError when the tensor is not on the cpu;
// PersistenceError when the file cannot be written.
void write_npy(const std::string& path, const Tensor& tensor);
// The bytes write_npy writes.
std::string write_npy_bytes(const Tensor& tensor);

// The numpy descr for a dtype ('<f4', '|b1'); ValidationError for bfloat16.
std::string npy_descr(DType dtype);

}  // namespace evoxc::io
