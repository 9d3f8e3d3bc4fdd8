//===- GraphResources.cpp - file mappings for weight resources ------------===//

#include "dialects/graph/IR/GraphResources.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace infer::graph;

llvm::Expected<std::shared_ptr<MappedFile>> MappedFile::open(llvm::StringRef path) {
  // Absolute, so that printed references stay valid from any directory.
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  std::string pathString = absolute.str().str();
  int fd = ::open(pathString.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return llvm::createStringError("cannot open '" + pathString + "': " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return llvm::createStringError("cannot stat '" + pathString + "': " + std::strerror(error));
  }
  std::shared_ptr<MappedFile> mapped(new MappedFile());
  mapped->filePath = pathString;
  mapped->length = static_cast<uint64_t>(info.st_size);
  if (mapped->length > 0) {
    void *base = ::mmap(nullptr, mapped->length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      return llvm::createStringError("cannot mmap '" + pathString + "': " + std::strerror(error));
    }
    mapped->base = static_cast<const char *>(base);
  }
  ::close(fd); // the mapping stays valid after the descriptor is closed
  return mapped;
}

MappedFile::~MappedFile() {
  if (base)
    ::munmap(const_cast<char *>(base), length);
}

llvm::Expected<FileRange> infer::graph::parseFileReference(llvm::StringRef reference) {
  if (!reference.consume_front("file:"))
    return llvm::createStringError("weight reference '" + reference.str() +
                                   "' does not start with 'file:'");
  // The path may itself contain ':', so split the two numbers off the back.
  auto [rest, sizeText] = reference.rsplit(':');
  auto [path, offsetText] = rest.rsplit(':');
  uint64_t offset = 0, size = 0;
  if (path.empty() || offsetText.getAsInteger(10, offset) || sizeText.getAsInteger(10, size))
    return llvm::createStringError("malformed weight reference 'file:" + reference.str() +
                                   "', expected file:<path>:<offset>:<size>");
  llvm::Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.takeError();
  if (offset > (*file)->size() || size > (*file)->size() - offset)
    return llvm::createStringError("weight range " + llvm::Twine(offset) + "+" + llvm::Twine(size) +
                                   " lies outside '" + path + "' (" + llvm::Twine((*file)->size()) +
                                   " bytes)");
  return FileRange{std::move(*file), offset, size};
}
