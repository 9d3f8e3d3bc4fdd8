//===- Npy.cpp - NumPy .npy arrays for the runtime ------------------------===//
//
// Reading is done here: the framing (magic, version, header length), the
// header dictionary (a strict parser below) and the data, each read bounded
// by what the header declares and checked against the file's size before
// anything is allocated. Writing uses xtensor's header writer.
//
//===----------------------------------------------------------------------===//

#include "runtime/npy/Npy.h"
#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/FileReader.h"
#include "runtime/base/HostMemory.h"

#include <xtensor/xnpy.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>

namespace infer {
namespace art = artifact;

namespace {

constexpr uint64_t kMaxDataBytes = uint64_t(1) << 36;
/// numpy writes headers of a few hundred bytes; its own reader refuses
/// more than 10,000 by default.
constexpr uint64_t kMaxHeaderBytes = uint64_t(1) << 16;

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

/// The header dictionary as numpy writes it, parsed strictly:
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
/// Keys in any order, each once, no others; 'shape' a tuple of decimal
/// integers (no signs, fractions or exponents). Anything else is an error
/// naming what was found.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text_(text) {}

  Status parse(std::string &descr, bool &fortranOrder, std::vector<uint64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    RETURN_IF_ERROR(expect('{'));
    while (true) {
      skipSpaces();
      if (peek('}'))
        break;
      ASSIGN_OR_RETURN(std::string key, quoted());
      RETURN_IF_ERROR(expect(':'));
      skipSpaces();
      if (key == "descr") {
        if (haveDescr)
          return fail("'descr' appears twice");
        ASSIGN_OR_RETURN(descr, quoted());
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (haveOrder)
          return fail("'fortran_order' appears twice");
        if (consume("True"))
          fortranOrder = true;
        else if (consume("False"))
          fortranOrder = false;
        else
          return fail("'fortran_order' is not True or False");
        haveOrder = true;
      } else if (key == "shape") {
        if (haveShape)
          return fail("'shape' appears twice");
        RETURN_IF_ERROR(parseShape(shape));
        haveShape = true;
      } else {
        return fail("unknown key '" + key + "'");
      }
      skipSpaces();
      if (!peek(','))
        break;
      ++at_;
    }
    RETURN_IF_ERROR(expect('}'));
    skipSpaces();
    if (at_ != text_.size())
      return fail("text after the dictionary");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(std::string("no '") +
                  (!haveDescr   ? "descr"
                   : !haveOrder ? "fortran_order"
                                : "shape") +
                  "' key");
    return okStatus();
  }

private:
  Status fail(const std::string &what) const {
    return invalidArgumentError("malformed header: " + what);
  }
  void skipSpaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n'))
      ++at_;
  }
  bool peek(char c) const { return at_ < text_.size() && text_[at_] == c; }
  bool consume(const char *word) {
    size_t length = std::strlen(word);
    if (text_.compare(at_, length, word) != 0)
      return false;
    at_ += length;
    return true;
  }
  Status expect(char c) {
    skipSpaces();
    if (!peek(c))
      return fail(std::string("expected '") + c + "'");
    ++at_;
    return okStatus();
  }
  StatusOr<std::string> quoted() {
    skipSpaces();
    if (!peek('\'') && !peek('"'))
      return fail("expected a quoted string");
    char quote = text_[at_++];
    size_t end = text_.find(quote, at_);
    if (end == std::string::npos)
      return fail("unterminated string");
    std::string value = text_.substr(at_, end - at_);
    at_ = end + 1;
    return value;
  }
  Status parseShape(std::vector<uint64_t> &shape) {
    if (!peek('('))
      return fail("'shape' is not a tuple");
    ++at_;
    while (true) {
      skipSpaces();
      if (peek(')'))
        break;
      size_t start = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9')
        ++at_;
      size_t end = at_;
      while (at_ < text_.size() && text_[at_] != ',' && text_[at_] != ')')
        ++at_;
      std::string item = text_.substr(start, at_ - start);
      while (!item.empty() && item.back() == ' ')
        item.pop_back();
      if (end == start || end - start != item.size())
        return fail("shape dim '" + item + "' is not a non-negative integer");
      if (item.size() > 15)
        return fail("shape dim " + item + " is too large");
      shape.push_back(std::stoull(item));
      if (peek(','))
        ++at_;
      else if (!peek(')'))
        return fail("unterminated shape");
    }
    ++at_;
    return okStatus();
  }

  const std::string &text_;
  size_t at_ = 0;
};

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
  // A regular file only (a directory, FIFO or /dev/zero is refused), read
  // with bounds: the preamble, the header its length field gives (at most
  // kMaxHeaderBytes), then exactly the data the header's shape and dtype
  // need, which the file's size must match.
  ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  uint64_t fileSize = file.size();
  unsigned char preamble[12] = {};
  uint64_t preambleBytes = std::min<uint64_t>(fileSize, sizeof(preamble));
  RETURN_IF_ERROR(file.readAt(0, preambleBytes, preamble));
  if (preambleBytes < 8 || std::memcmp(preamble, "\x93NUMPY", 6) != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = preamble[6];
  uint64_t lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0)
    return fail("unsupported .npy format version " + std::to_string(major));
  if (preambleBytes < 8 + lengthBytes)
    return fail("truncated header");
  uint64_t headerLength = 0;
  for (uint64_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(preamble[8 + i]) << (8 * i);
  if (headerLength > kMaxHeaderBytes)
    return fail("the header is " + std::to_string(headerLength) + " bytes, more than the " +
                std::to_string(kMaxHeaderBytes) + " a .npy header may have here");
  uint64_t dataStart = 8 + lengthBytes + headerLength;
  if (fileSize < dataStart)
    return fail("truncated header");
  std::string header(headerLength, '\0');
  RETURN_IF_ERROR(file.readAt(8 + lengthBytes, headerLength, header.data()));
  if (header.empty() || header.back() != '\n')
    return fail("malformed header: it does not end in a newline");
  std::string descr;
  bool fortranOrder = false;
  std::vector<uint64_t> dims;
  if (Status parsed = HeaderParser(header).parse(descr, fortranOrder, dims); !parsed.ok())
    return fail(parsed.message());
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
  for (uint64_t dim : dims) {
    if (dim > kMaxDataBytes)
      return fail("shape dim " + std::to_string(dim) + " is too large");
    if (dim != 0 && count > kMaxDataBytes / dim)
      return fail("array is too large");
    array.shape.push_back(static_cast<int64_t>(dim));
    count *= dim;
  }
  uint64_t dataBytes = count * stored->width;
  uint64_t held = fileSize - dataStart;
  if (held != dataBytes)
    return fail("holds " + std::to_string(held) + " bytes of data but shape " +
                formatShape(array.shape) + " of '" + descr + "' needs " +
                std::to_string(dataBytes) + (held < dataBytes ? " (truncated)" : ""));
  RETURN_IF_ERROR(checkHostMemory("'" + path + "'", dataBytes, availableHostMemoryBytes()));
  array.bytes.resize(dataBytes);
  RETURN_IF_ERROR(file.readAt(dataStart, dataBytes, array.bytes.data()));
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
