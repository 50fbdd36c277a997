// Tests of .npy reading and writing: round trips, numpy-made fixtures compared byte for byte, must-fail inputs.
#include "evoxc/io/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "evoxc/core/file_io.h"
#include "expect_error.h"

namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using evoxc::DType;
using evoxc::Tensor;
using evoxc::io::read_npy;
using evoxc::io::read_npy_bytes;
using evoxc::io::write_npy;
using evoxc::io::write_npy_bytes;
using evoxc::test::expect_error;

const std::string kFixtures = std::string(EVOXC_TEST_DATA_DIR) + "/npy/";

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("evoxc_npy_test_" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string bytes_of(const Tensor& t) { return std::string(static_cast<const char*>(t.raw_data()), t.nbytes()); }

// Deterministic contents for any dtype: bools are 0/1, everything else a byte pattern.
Tensor patterned(std::vector<int64_t> shape, DType dtype) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  auto* p = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    p[i] = dtype == DType::Bool ? static_cast<unsigned char>(i % 3 == 0) : static_cast<unsigned char>(i * 37 + 11);
  return t;
}

// A .npy file from a header dict text and raw data, with a correct length field.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + "\n";
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  size_t n = header.size();
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (major >= 2) out += std::string("\0\0", 2);
  return out + header + data;
}

TEST(Npy, RoundTripEveryDtypeAndShape) {
  TempDir dir;
  const DType dtypes[] = {DType::Bool, DType::I8,  DType::I16, DType::I32, DType::I64, DType::U8,
                          DType::U16,  DType::U32, DType::U64, DType::F16, DType::F32, DType::F64};
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 1, 3}};
  for (DType t : dtypes) {
    for (const auto& shape : shapes) {
      Tensor in = patterned(shape, t);
      std::string path = dir.file("rt.npy");
      write_npy(path, in);
      Tensor out = read_npy(path);
      SCOPED_TRACE(std::string(evoxc::dtype_name(t)) + " rank " + std::to_string(shape.size()));
      EXPECT_EQ(out.dtype(), t);
      EXPECT_EQ(out.shape(), shape);
      EXPECT_EQ(bytes_of(out), bytes_of(in));
      Tensor again = read_npy_bytes(write_npy_bytes(in));
      EXPECT_EQ(bytes_of(again), bytes_of(in));
    }
  }
}

TEST(Npy, HeaderIsAlignedAndEndsWithNewline) {
  std::string b = write_npy_bytes(Tensor::zeros({3, 4}, evoxc::f32));
  size_t hlen = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(b[10 + hlen - 1], '\n');
  EXPECT_EQ(b.size(), 10 + hlen + 48);
}

struct Fixture {
  const char* file;
  Tensor expected;
};

// The hand-written values of the numpy fixtures (tests/data/npy/make_fixtures.py).
std::vector<Fixture> c_order_fixtures() {
  return {
      {"f32_2x3.npy", Tensor::from_vector<float>({0.f, 0.25f, 0.5f, 0.75f, 1.f, 1.25f}, {2, 3})},
      {"f64_scalar.npy", Tensor::from_vector<double>({-2.5}, {})},
      {"bool_5.npy", Tensor::from_vector<bool>({true, false, true, true, false}, {5})},
      {"i8_4.npy", Tensor::from_vector<int8_t>({-128, -1, 0, 127}, {4})},
      {"u16_3.npy", Tensor::from_vector<uint16_t>({0, 1, 65535}, {3})},
      {"i64_2x2.npy", Tensor::from_vector<int64_t>(
                          {std::numeric_limits<int64_t>::min(), -1, 1, std::numeric_limits<int64_t>::max()}, {2, 2})},
      {"u64_2.npy", Tensor::from_vector<uint64_t>({0, std::numeric_limits<uint64_t>::max()}, {2})},
      {"f16_3.npy",
       Tensor::from_vector<evoxc::float16>({evoxc::float16(1.0f), evoxc::float16(-2.0f), evoxc::float16(0.5f)}, {3})},
      {"i32_0x3.npy", Tensor::zeros({0, 3}, evoxc::i32)},
  };
}

TEST(Npy, ReadsNumpyFixtures) {
  for (const auto& f : c_order_fixtures()) {
    SCOPED_TRACE(f.file);
    Tensor t = read_npy(kFixtures + f.file);
    EXPECT_EQ(t.dtype(), f.expected.dtype());
    EXPECT_EQ(t.shape(), f.expected.shape());
    EXPECT_EQ(bytes_of(t), bytes_of(f.expected));
  }
}

TEST(Npy, WritesTheSameBytesAsNumpy) {
  for (const auto& f : c_order_fixtures()) {
    SCOPED_TRACE(f.file);
    EXPECT_EQ(write_npy_bytes(f.expected), evoxc::read_file(kFixtures + f.file));
  }
}

TEST(Npy, BigEndianIsSwapped) {
  Tensor a = read_npy(kFixtures + "be_i32_3.npy");
  EXPECT_EQ(a.dtype(), evoxc::i32);
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 65536}));
  Tensor b = read_npy(kFixtures + "be_f64_2.npy");
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1.5, -0.25}));
}

TEST(Npy, FortranOrderIsTransposedToRowMajor) {
  Tensor t = read_npy(kFixtures + "fortran_f32_2x3.npy");
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // A hand-made 3-d Fortran file: element (i,j,k) is stored at i + 2*j + 6*k.
  std::string data;
  for (int8_t v : {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23})
    data += static_cast<char>(v);
  Tensor u = read_npy_bytes(make_npy("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 3, 4), }", data));
  std::vector<int8_t> want(24);
  for (int i = 0; i < 24; ++i) want[static_cast<size_t>(i)] = static_cast<int8_t>(i);
  EXPECT_EQ(u.to_vector<int8_t>(), want);
}

TEST(Npy, ReadsVersion2) {
  Tensor t = read_npy(kFixtures + "v2_u8_3.npy");
  EXPECT_EQ(t.to_vector<uint8_t>(), (std::vector<uint8_t>{7, 8, 9}));
}

TEST(Npy, ToleratesHeaderVariants) {
  // Double quotes, reordered keys, no trailing comma, Python 2 longs, '=' byte order.
  std::string data(8, '\0');
  data[0] = 1;
  data[4] = 2;
  Tensor t = read_npy_bytes(make_npy("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"=i4\"}", data));
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  // Bool bytes other than 0/1 read as true.
  Tensor b = read_npy_bytes(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x00\x07"s));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(Npy, WritingBfloat16IsAValidationError) {
  TempDir dir;
  expect_error<evoxc::ValidationError>([&] { write_npy(dir.file("x.npy"), Tensor::zeros({2}, evoxc::bf16)); },
                                       "convert the tensor to float32 first");
  EXPECT_FALSE(fs::exists(dir.file("x.npy")));
  expect_error<evoxc::ValidationError>([&] { write_npy_bytes(Tensor()); }, "undefined");
}

TEST(Npy, MustFail) {
  using evoxc::PersistenceError;
  const std::string good = write_npy_bytes(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  auto bad = [](const std::string& bytes, const std::string& substring) {
    SCOPED_TRACE(substring);
    expect_error<PersistenceError>([&] { read_npy_bytes(bytes, "bad.npy"); }, substring);
    expect_error<PersistenceError>([&] { read_npy_bytes(bytes, "bad.npy"); }, "bad.npy: ");
  };
  bad("", "too short for the magic");
  bad(good.substr(0, 5), "too short for the magic");
  bad(good.substr(0, 9), "header length is cut off");
  bad(good.substr(0, 40), "the header needs");
  bad(good.substr(0, good.size() - 1), "header/data size mismatch");
  bad(good.substr(0, good.size() - 24), "truncated .npy file");
  bad(good + "x", "trailing bytes");
  bad("PK\x03\x04" + good.substr(4), "bad magic");
  std::string v9 = good;
  v9[6] = 9;
  bad(v9, "unsupported .npy format version 9.0");
  std::string f = "'fortran_order': False";
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (2, 3), ", std::string(24, '\0')), "malformed .npy header");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (2, 3)} junk", std::string(24, '\0')), "unexpected text");
  bad(make_npy("{'descr': '<f4', " + f + "}", ""), "'shape' is missing");
  bad(make_npy("{'shape': (), " + f + "}", ""), "'descr' is missing");
  bad(make_npy("{'descr': '<f4', 'shape': ()}", ""), "'fortran_order' is missing");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (), 'x': 1}", ""), "malformed .npy header");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (), 'extra': True}", ""), "unexpected key 'extra'");
  bad(make_npy("{'descr': 4, " + f + ", 'shape': ()}", ""), "malformed .npy header");
  bad(make_npy("{'descr': True, " + f + ", 'shape': ()}", ""), "'descr' must be a string");
  bad(make_npy("{'descr': '<f4', 'fortran_order': 'no', 'shape': ()}", ""), "'fortran_order' must be True or False");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (2, -3)}", ""), "negative extent");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (99999999999999999999,)}", ""), "integer out of range");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': (1099511627776, 1099511627776)}", ""),
      "the element count overflows");
  bad(make_npy("{'descr': '<f8', " + f + ", 'shape': (4611686018427387904,)}", ""), "the byte size overflows");
  // Big but representable: rejected by the size check, before any allocation.
  bad(make_npy("{'descr': '<f8', " + f + ", 'shape': (1099511627776,)}", "12345678"), "header/data size mismatch");
  bad(make_npy("{'descr': '<c8', " + f + ", 'shape': ()}", ""), "unsupported dtype '<c8' (complex)");
  bad(make_npy("{'descr': '|O', " + f + ", 'shape': ()}", ""), "unsupported dtype '|O'");
  bad(make_npy("{'descr': '<U3', " + f + ", 'shape': ()}", ""), "unsupported dtype '<U3' (strings)");
  bad(make_npy("{'descr': '<f3', " + f + ", 'shape': ()}", ""), "unsupported dtype '<f3'");
  bad(make_npy("{'descr': '<f4', " + f + ", 'shape': ()}\x01", ""), "control byte");
  std::string no_newline = good;
  no_newline[good.size() - 25] = ' ';
  bad(no_newline, "does not end with a newline");
  std::string huge = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{}";
  bad(huge, "exceeds the limit");
}

TEST(Npy, MustFailNumpyFiles) {
  using evoxc::PersistenceError;
  expect_error<PersistenceError>([] { read_npy(kFixtures + "c8_2.npy"); }, "unsupported dtype '<c8'");
  expect_error<PersistenceError>([] { read_npy(kFixtures + "structured.npy"); }, "structured arrays");
  expect_error<PersistenceError>([] { read_npy(kFixtures + "no_such_file.npy"); }, "no_such_file.npy: ");
  expect_error<PersistenceError>([] { read_npy(kFixtures + "no_such_file.npy"); }, "no such file");
  expect_error<PersistenceError>([] { read_npy(kFixtures); }, "not a regular file");
  expect_error<PersistenceError>([] { read_npy(kFixtures + "make_fixtures.py"); }, "bad magic");
}

TEST(Npy, ReaderRefusesSpecialFilesAndFilesOverItsCap) {
  using evoxc::PersistenceError;
  expect_error<PersistenceError>([] { read_npy("/dev/zero"); }, "not a regular file");
  TempDir dir;
  std::string path = dir.file("x.npy");
  write_npy(path, patterned({16}, evoxc::f32));
  auto size = std::filesystem::file_size(path);
  ::setenv("EVOXC_MAX_NPY_BYTES", std::to_string(size - 1).c_str(), 1);
  expect_error<PersistenceError>([&] { read_npy(path); }, "more than the limit of " + std::to_string(size - 1));
  expect_error<PersistenceError>([&] { read_npy(path); }, "set EVOXC_MAX_NPY_BYTES to raise it");
  ::setenv("EVOXC_MAX_NPY_BYTES", std::to_string(size).c_str(), 1);
  EXPECT_EQ(read_npy(path).numel(), 16);
  // The graph cap does not apply to data files.
  ::unsetenv("EVOXC_MAX_NPY_BYTES");
  ::setenv("EVOXC_MAX_FILE_BYTES", "1", 1);
  EXPECT_EQ(read_npy(path).numel(), 16);
  ::unsetenv("EVOXC_MAX_FILE_BYTES");
}

}  // namespace
