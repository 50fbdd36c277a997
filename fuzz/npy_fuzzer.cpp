// Fuzz target: the .npy reader (io::read_npy_bytes). An accepted tensor must write and read back
// to the same dtype, shape and bytes.
#include "evoxc/evoxc.h"
#include "evoxc/io/npy.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace evoxc;
  return fuzz::guarded([&] {
    Tensor t = io::read_npy_bytes(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("npy write/read round trip", [&] {
      Tensor back = io::read_npy_bytes(io::write_npy_bytes(t), "<round trip>");
      if (back.dtype() != t.dtype() || back.shape() != t.shape() ||
          (t.nbytes() != 0 && std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()) != 0))
        fuzz::finding("read_npy_bytes(write_npy_bytes(t)) differs from t = " + t.repr());
    });
  });
}
