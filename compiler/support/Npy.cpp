//===- Npy.cpp - NumPy .npy files to and from interpreter tensors ---------===//
//
// The header dictionary is parsed and written by xtensor's npy helpers, which
// throw, so this file is built with exceptions and catches them here. The
// framing (magic, version, header length) and the data are handled locally:
// xt::detail::load_npy_file does not notice a short data read and sign-extends
// header-length bytes >= 0x80, and data-dependent sizes must be checked
// against the file before anything is allocated.
//
//===----------------------------------------------------------------------===//

#include "compiler/support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <xtensor/xnpy.hpp>

#include <cstring>
#include <exception>
#include <limits>
#include <sstream>

using namespace infer;
using interp::DType;
using interp::Tensor;

namespace {

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
/// The largest array readNpy accepts, in bytes (a corrupt shape must not
/// turn into a huge allocation).
constexpr uint64_t kMaxDataBytes = uint64_t(1) << 36;

/// How a stored dtype maps onto the interpreter's.
struct StoredType {
  llvm::StringRef descr;
  DType dtype;
  uint64_t width; // bytes per stored element
};

constexpr StoredType kStoredTypes[] = {
    {"<f4", DType::F32, 4}, {"<f8", DType::F32, 8},  {"<i8", DType::I64, 8},
    {"<i4", DType::I64, 4}, {"|b1", DType::Bool, 1},
};

llvm::StringRef descrFor(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::I64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  }
  return "";
}

/// Checks that `header` has the shape of a dictionary with the three keys so
/// that xtensor's parser never looks at an empty value.
bool looksLikeHeader(llvm::StringRef header) {
  std::string compact;
  for (char c : header)
    if (c != ' ')
      compact.push_back(c);
  llvm::StringRef text = llvm::StringRef(compact).rtrim("\n");
  return header.ends_with("\n") && text.starts_with("{") && text.ends_with("}") &&
         text.contains("'descr':'") && text.contains("'fortran_order':") &&
         text.contains("'shape':(");
}

} // namespace

llvm::Expected<Tensor> support::readNpy(llvm::StringRef path) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "'" + path + "': " + message);
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return fail("cannot read: " + file.getError().message());
  llvm::StringRef bytes = (*file)->getBuffer();

  // Framing: magic (6 bytes), major, minor, header length (2 bytes in
  // version 1, 4 bytes in versions 2 and 3, little-endian), header.
  if (bytes.size() < 8 || !bytes.starts_with(kMagic))
    return fail("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  uint64_t lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0)
    return fail("unsupported .npy format version " + llvm::Twine(major));
  if (bytes.size() < 8 + lengthBytes)
    return fail("truncated header");
  uint64_t headerLength = 0;
  for (uint64_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  uint64_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    return fail("truncated header");
  std::string header = bytes.substr(8 + lengthBytes, headerLength).str();
  if (!looksLikeHeader(header))
    return fail("malformed header");

  std::string descr;
  bool fortranOrder = false;
  std::vector<std::size_t> dims;
  try {
    xt::detail::parse_header(header, descr, &fortranOrder, dims);
  } catch (const std::exception &error) {
    return fail(llvm::Twine("malformed header: ") + error.what());
  }

  const StoredType *stored = nullptr;
  for (const StoredType &candidate : kStoredTypes)
    if (candidate.descr == descr)
      stored = &candidate;
  if (!stored) {
    if (llvm::StringRef(descr).starts_with(">"))
      return fail("big-endian data ('" + descr + "') is not supported");
    return fail("unsupported dtype '" + descr + "' (expected <f4, <i8, |b1, <i4 or <f8)");
  }
  if (fortranOrder && dims.size() > 1)
    return fail("Fortran-order arrays are not supported; save a C-order array");

  std::vector<int64_t> shape;
  uint64_t count = 1;
  for (std::size_t dim : dims) {
    if (dim > kMaxDataBytes)
      return fail("shape dim " + llvm::Twine(uint64_t(dim)) + " is too large");
    if (dim != 0 && count > kMaxDataBytes / dim)
      return fail("array is too large");
    shape.push_back(static_cast<int64_t>(dim));
    count *= dim;
  }
  uint64_t dataBytes = count * stored->width;
  if (bytes.size() - dataStart != dataBytes)
    return fail("holds " + llvm::Twine(bytes.size() - dataStart) + " bytes of data but shape " +
                interp::formatShape(shape) + " of '" + descr + "' needs " + llvm::Twine(dataBytes) +
                (bytes.size() - dataStart < dataBytes ? " (truncated)" : ""));

  Tensor tensor(stored->dtype, shape);
  const char *src = bytes.data() + dataStart;
  if (descr == "<f8") {
    for (uint64_t i = 0; i < count; ++i) {
      double value;
      std::memcpy(&value, src + i * 8, 8);
      tensor.f32()[i] = static_cast<float>(value);
    }
  } else if (descr == "<i4") {
    for (uint64_t i = 0; i < count; ++i) {
      int32_t value;
      std::memcpy(&value, src + i * 4, 4);
      tensor.i64()[i] = value;
    }
  } else if (stored->dtype == DType::Bool) {
    for (uint64_t i = 0; i < count; ++i)
      tensor.boolData()[i] = src[i] != 0;
  } else if (dataBytes > 0) {
    std::memcpy(tensor.rawData(), src, dataBytes);
  }
  return tensor;
}

llvm::Error support::writeNpy(llvm::StringRef path, const Tensor &tensor) {
  std::ostringstream header;
  std::vector<std::size_t> dims(tensor.shape().begin(), tensor.shape().end());
  try {
    xt::detail::write_header(header, descrFor(tensor.dtype()).str(), /*fortran_order=*/false, dims);
  } catch (const std::exception &error) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': cannot build the header: " + error.what());
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "'" + path + "': cannot open for writing: " + ec.message());
  os << header.str();
  os.write(static_cast<const char *>(tensor.rawData()), tensor.byteSize());
  os.close();
  if (os.has_error()) {
    std::error_code writeError = os.error();
    os.clear_error(); // reported below; raw_fd_ostream would abort on a pending error
    return llvm::createStringError(writeError,
                                   "'" + path + "': write failed: " + writeError.message());
  }
  return llvm::Error::success();
}
