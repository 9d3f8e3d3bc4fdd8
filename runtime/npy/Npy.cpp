//===- Npy.cpp - NumPy .npy arrays for the runtime ------------------------===//
//
// Framing (magic, version, header length) and the data are handled here, the
// header dictionary by xtensor (which throws; caught below). Sizes are checked
// against the file before anything is allocated.
//
//===----------------------------------------------------------------------===//

#include "runtime/npy/Npy.h"
#include "runtime/artifact/ArtifactFormat.h"

#include <xtensor/xnpy.hpp>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <sstream>

namespace infer {
namespace art = artifact;

namespace {

constexpr uint64_t kMaxDataBytes = uint64_t(1) << 36;

struct StoredType {
  const char *descr;
  art::ElementType type;
  uint64_t width;
};
constexpr StoredType kStoredTypes[] = {
    {"<f4", art::ELEMENT_TYPE_F32, 4},  {"<f8", art::ELEMENT_TYPE_F64, 8},
    {"<i8", art::ELEMENT_TYPE_I64, 8},  {"<i4", art::ELEMENT_TYPE_I32, 4},
    {"|b1", art::ELEMENT_TYPE_BOOL, 1},
};

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool looksLikeHeader(const std::string &header) {
  std::string compact;
  for (char c : header)
    if (c != ' ' && c != '\n')
      compact.push_back(c);
  return !header.empty() && header.back() == '\n' && compact.size() >= 2 &&
         compact.front() == '{' && compact.back() == '}' &&
         compact.find("'descr':'") != std::string::npos &&
         compact.find("'fortran_order':") != std::string::npos &&
         compact.find("'shape':(") != std::string::npos;
}

} // namespace

int64_t HostArray::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

StatusOr<HostArray> readNpy(const std::string &path) {
  auto fail = [&](const std::string &message) {
    return invalidArgumentError("'" + path + "': " + message);
  };
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return errnoError(errno, "cannot open '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  uint64_t lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0)
    return fail("unsupported .npy format version " + std::to_string(major));
  if (bytes.size() < 8 + lengthBytes)
    return fail("truncated header");
  uint64_t headerLength = 0;
  for (uint64_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  uint64_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    return fail("truncated header");
  std::string header = bytes.substr(8 + lengthBytes, headerLength);
  if (!looksLikeHeader(header))
    return fail("malformed header");
  std::string descr;
  bool fortranOrder = false;
  std::vector<std::size_t> dims;
  try {
    xt::detail::parse_header(header, descr, &fortranOrder, dims);
  } catch (const std::exception &error) {
    return fail(std::string("malformed header: ") + error.what());
  }
  const StoredType *stored = nullptr;
  for (const StoredType &candidate : kStoredTypes)
    if (descr == candidate.descr)
      stored = &candidate;
  if (!stored) {
    if (!descr.empty() && descr[0] == '>')
      return fail("big-endian data ('" + descr + "') is not supported");
    return fail("unsupported dtype '" + descr + "' (expected <f4, <i8, |b1, <i4 or <f8)");
  }
  if (fortranOrder && dims.size() > 1)
    return fail("Fortran-order arrays are not supported; save a C-order array");
  HostArray array;
  array.type = stored->type;
  uint64_t count = 1;
  for (std::size_t dim : dims) {
    if (dim > kMaxDataBytes)
      return fail("shape dim " + std::to_string(dim) + " is too large");
    if (dim != 0 && count > kMaxDataBytes / dim)
      return fail("array is too large");
    array.shape.push_back(static_cast<int64_t>(dim));
    count *= dim;
  }
  uint64_t dataBytes = count * stored->width;
  uint64_t held = bytes.size() - dataStart;
  if (held != dataBytes)
    return fail("holds " + std::to_string(held) + " bytes of data but shape " +
                formatShape(array.shape) + " of '" + descr + "' needs " +
                std::to_string(dataBytes) + (held < dataBytes ? " (truncated)" : ""));
  array.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart), bytes.end());
  return array;
}

Status writeNpy(const std::string &path, const HostArray &array) {
  const char *descr = nullptr;
  for (const StoredType &candidate : kStoredTypes)
    if (candidate.type == array.type)
      descr = candidate.descr;
  if (!descr)
    return invalidArgumentError("'" + path + "': cannot write element type " +
                                art::elementTypeName(array.type) + " as .npy");
  std::ostringstream header;
  std::vector<std::size_t> dims(array.shape.begin(), array.shape.end());
  try {
    xt::detail::write_header(header, descr, /*fortran_order=*/false, dims);
  } catch (const std::exception &error) {
    return internalError("'" + path + "': cannot build the .npy header: " + error.what());
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return errnoError(errno, "cannot open '" + path + "' for writing");
  std::string text = header.str();
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.write(reinterpret_cast<const char *>(array.bytes.data()),
            static_cast<std::streamsize>(array.bytes.size()));
  out.close();
  if (!out)
    return errnoError(errno, "write to '" + path + "' failed");
  return okStatus();
}

} // namespace infer
