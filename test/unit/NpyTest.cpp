//===- NpyTest.cpp - .npy reader and writer tests --------------------------===//
//
// Round trips through writeNpy/readNpy, plus files written byte by byte here
// (what numpy.save produces) to check the reader independently of the writer.
//
//===----------------------------------------------------------------------===//

#include "compiler/support/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <utility>

using infer::interp::DType;
using infer::interp::Tensor;
using infer::support::readNpy;
using infer::support::writeNpy;
using ::testing::HasSubstr;

namespace {

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("infer-npy-test", directory));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<128> result(directory);
    llvm::sys::path::append(result, name);
    return std::string(result);
  }

  /// Writes a .npy file by hand: magic, version 1.0, a header padded with
  /// spaces to a multiple of 64 bytes in total, then `data`.
  std::string writeRaw(llvm::StringRef name, const std::string &dictionary,
                       const std::string &data) {
    std::string header = dictionary;
    while ((10 + header.size() + 1) % 64 != 0)
      header.push_back(' ');
    header.push_back('\n');
    std::string file = "\x93NUMPY";
    file.push_back(1);
    file.push_back(0);
    file.push_back(static_cast<char>(header.size() & 0xff));
    file.push_back(static_cast<char>(header.size() >> 8));
    file += header + data;
    std::string filePath = path(name);
    std::ofstream(filePath, std::ios::binary) << file;
    return filePath;
  }

  template <typename T> static std::string bytesOf(std::vector<T> values) {
    return std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
  }

  llvm::SmallString<128> directory;
};

Tensor roundTrip(const Tensor &tensor, const std::string &file) {
  EXPECT_FALSE(static_cast<bool>(writeNpy(file, tensor)));
  llvm::Expected<Tensor> read = readNpy(file);
  if (!read) {
    ADD_FAILURE() << llvm::toString(read.takeError());
    return Tensor();
  }
  return std::move(*read);
}

TEST_F(NpyTest, RoundTripsF32) {
  Tensor back = roundTrip(Tensor::fromF32({2, 3}, {1.5f, -2, 0, 3.25f, 1e-30f, -7}), path("a.npy"));
  ASSERT_EQ(back.dtype(), DType::F32);
  ASSERT_EQ(back.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<float>(back.f32(), back.f32() + 6),
            (std::vector<float>{1.5f, -2, 0, 3.25f, 1e-30f, -7}));
}

TEST_F(NpyTest, RoundTripsI64) {
  Tensor back = roundTrip(Tensor::fromI64({3}, {INT64_MIN, 0, INT64_MAX}), path("b.npy"));
  ASSERT_EQ(back.dtype(), DType::I64);
  ASSERT_EQ(back.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(std::vector<int64_t>(back.i64(), back.i64() + 3),
            (std::vector<int64_t>{INT64_MIN, 0, INT64_MAX}));
}

TEST_F(NpyTest, RoundTripsBool) {
  Tensor back = roundTrip(Tensor::fromBool({2, 2}, {1, 0, 0, 1}), path("c.npy"));
  ASSERT_EQ(back.dtype(), DType::Bool);
  ASSERT_EQ(back.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::vector<uint8_t>(back.boolData(), back.boolData() + 4),
            (std::vector<uint8_t>{1, 0, 0, 1}));
}

TEST_F(NpyTest, RoundTripsScalarsAndZeroSizedArrays) {
  Tensor scalar = roundTrip(Tensor::fromF32({}, {42}), path("s.npy"));
  ASSERT_EQ(scalar.dtype(), DType::F32);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.f32()[0], 42.0f);
  Tensor empty = roundTrip(Tensor::fromI64({2, 0, 3}, {}), path("e.npy"));
  ASSERT_EQ(empty.dtype(), DType::I64);
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{2, 0, 3}));
}

TEST_F(NpyTest, WritesWhatNumpyWrites) {
  // numpy.save(np.array([1, 2], dtype=np.int64)): a 128-byte header then data.
  std::string file = path("w.npy");
  ASSERT_FALSE(static_cast<bool>(writeNpy(file, Tensor::fromI64({2}, {1, 2}))));
  std::ifstream in(file, std::ios::binary);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(contents.size(), 10u);
  EXPECT_EQ(contents.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLength =
      static_cast<unsigned char>(contents[8]) | (static_cast<unsigned char>(contents[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 16, 0u);
  std::string header = contents.substr(10, headerLength);
  EXPECT_THAT(header, HasSubstr("'descr': '<i8'"));
  EXPECT_THAT(header, HasSubstr("'fortran_order': False"));
  EXPECT_THAT(header, HasSubstr("'shape': (2,)"));
  EXPECT_EQ(contents.substr(10 + headerLength), bytesOf<int64_t>({1, 2}));
}

TEST_F(NpyTest, ReadsHandWrittenFiles) {
  std::string f32 = writeRaw("f.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                             bytesOf<float>({0.5f, -1}));
  llvm::Expected<Tensor> read = readNpy(f32);
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(read->f32()[0], 0.5f);
  EXPECT_EQ(read->f32()[1], -1.0f);
}

TEST_F(NpyTest, WidensInt32AndNarrowsFloat64) {
  std::string i32 = writeRaw("i.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                             bytesOf<int32_t>({-1, 7, 2147483647}));
  llvm::Expected<Tensor> ints = readNpy(i32);
  ASSERT_TRUE(static_cast<bool>(ints)) << llvm::toString(ints.takeError());
  ASSERT_EQ(ints->dtype(), DType::I64);
  EXPECT_EQ(std::vector<int64_t>(ints->i64(), ints->i64() + 3),
            (std::vector<int64_t>{-1, 7, 2147483647}));
  std::string f64 = writeRaw("d.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
                             bytesOf<double>({0.1, -3}));
  llvm::Expected<Tensor> doubles = readNpy(f64);
  ASSERT_TRUE(static_cast<bool>(doubles)) << llvm::toString(doubles.takeError());
  ASSERT_EQ(doubles->dtype(), DType::F32);
  EXPECT_EQ(doubles->shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(doubles->f32()[0], 0.1f);
  EXPECT_EQ(doubles->f32()[1], -3.0f);
}

TEST_F(NpyTest, ReadsHeadersLongerThan127Bytes) {
  // A rank-32 shape makes the header 182 bytes (0xB6): the length's low byte
  // has its top bit set.
  std::string file =
      writeRaw("long.npy",
               "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, "
               "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2), }",
               bytesOf<float>({3, 4}));
  llvm::Expected<Tensor> read = readNpy(file);
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->rank(), 32);
  EXPECT_EQ(read->f32()[1], 4.0f);
}

TEST_F(NpyTest, TruncatedDataIsAnError) {
  std::string file = writeRaw("t.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                              bytesOf<float>({1, 2, 3}));
  llvm::Expected<Tensor> read = readNpy(file);
  ASSERT_FALSE(static_cast<bool>(read));
  std::string message = llvm::toString(read.takeError());
  EXPECT_THAT(message, HasSubstr("t.npy"));
  EXPECT_THAT(message,
              HasSubstr("holds 12 bytes of data but shape [4] of '<f4' needs 16 (truncated)"));
}

TEST_F(NpyTest, TruncatedHeaderIsAnError) {
  std::string full = path("full.npy");
  ASSERT_FALSE(static_cast<bool>(writeNpy(full, Tensor::fromF32({2}, {1, 2}))));
  std::ifstream in(full, std::ios::binary);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string cut = path("cut.npy");
  std::ofstream(cut, std::ios::binary) << contents.substr(0, 30);
  llvm::Expected<Tensor> read = readNpy(cut);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("truncated header"));
}

TEST_F(NpyTest, GarbageIsAnError) {
  std::string garbage = path("g.npy");
  std::ofstream(garbage, std::ios::binary) << "this is not a numpy file at all";
  llvm::Expected<Tensor> read = readNpy(garbage);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("not a .npy file"));

  std::string badHeader =
      writeRaw("h.npy", "{'descr': '<f4', 'shape': (2,), }", bytesOf<float>({1, 2}));
  read = readNpy(badHeader);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("malformed header"));

  std::string badShape = writeRaw(
      "s.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999,), }", "");
  read = readNpy(badShape);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("too large"));
}

/// The message readNpy gives for `file`, or "" when it reads it.
std::string errorOf(const std::string &file) {
  llvm::Expected<Tensor> read = readNpy(file);
  if (read)
    return "";
  return llvm::toString(read.takeError());
}

TEST_F(NpyTest, HeadersAreParsedStrictly) {
  // numpy writes only decimal dims, each key once; anything else was once
  // read loosely ((2.5, 7) as (2, 7)).
  const std::string ids = bytesOf<int64_t>(std::vector<int64_t>(14, 1));
  const std::pair<const char *, const char *> cases[] = {
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (2.5, 7), }",
       "malformed header: shape dim '2.5' is not a non-negative integer"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (+2, 7), }",
       "malformed header: shape dim '+2' is not a non-negative integer"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (-2, 7), }",
       "malformed header: shape dim '-2' is not a non-negative integer"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (2e0, 7), }",
       "malformed header: shape dim '2e0' is not a non-negative integer"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (2 7), }",
       "malformed header: shape dim '2 7' is not a non-negative integer"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (2, 7), 'shape': (14,), }",
       "malformed header: 'shape' appears twice"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (14,), 'order': 'C', }",
       "malformed header: unknown key 'order'"},
      {"{'descr': '<i8', 'fortran_order': 0, 'shape': (14,), }",
       "malformed header: 'fortran_order' is not True or False"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (14,), } x",
       "malformed header: text after the dictionary"},
  };
  for (auto [dictionary, message] : cases)
    EXPECT_THAT(errorOf(writeRaw("strict.npy", dictionary, ids)), HasSubstr(message)) << dictionary;
  // What numpy writes reads: spaces, a trailing comma, a one-dim tuple.
  EXPECT_EQ(errorOf(writeRaw(
                "ok.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': ( 2 , 7 ), }", ids)),
            "");
}

TEST_F(NpyTest, OnlyRegularFilesAreRead) {
  // A directory threw std::ios_failure, a FIFO blocked for a writer and
  // /dev/zero was read until memory ran out.
  std::string dir = path("dir.npy");
  ASSERT_FALSE(llvm::sys::fs::create_directory(dir));
  EXPECT_THAT(errorOf(dir), HasSubstr("'" + dir + "' is not a regular file (a directory)"));
  std::string fifo = path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(errorOf(fifo), HasSubstr("'" + fifo + "' is not a regular file (a FIFO)"));
  EXPECT_THAT(errorOf("/dev/zero"),
              HasSubstr("'/dev/zero' is not a regular file (a character device)"));
}

TEST_F(NpyTest, HeaderLengthIsBounded) {
  // A version 2 header length of 4 GB: refused before anything is read.
  std::string file = "\x93NUMPY";
  file.push_back(2);
  file.push_back(0);
  file += std::string("\xff\xff\xff\xff", 4);
  std::string huge = path("huge.npy");
  std::ofstream(huge, std::ios::binary) << file;
  EXPECT_THAT(errorOf(huge), HasSubstr("the header is 4294967295 bytes, more than the 65536"));
}

TEST_F(NpyTest, UnsupportedLayoutsAndTypesAreErrors) {
  std::string fortran =
      writeRaw("o.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
               bytesOf<float>({1, 2, 3, 4}));
  llvm::Expected<Tensor> read = readNpy(fortran);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("Fortran-order"));

  std::string bigEndian = writeRaw(
      "b.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", bytesOf<float>({1}));
  read = readNpy(bigEndian);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("big-endian"));

  std::string half = writeRaw(
      "f16.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", std::string(2, '\0'));
  read = readNpy(half);
  ASSERT_FALSE(static_cast<bool>(read));
  EXPECT_THAT(llvm::toString(read.takeError()), HasSubstr("unsupported dtype '<f2'"));

  read = readNpy(path("missing.npy"));
  ASSERT_FALSE(static_cast<bool>(read));
  std::string missing = llvm::toString(read.takeError());
  EXPECT_THAT(missing, HasSubstr("cannot open"));
  EXPECT_THAT(missing, HasSubstr("missing.npy"));
}

} // namespace
