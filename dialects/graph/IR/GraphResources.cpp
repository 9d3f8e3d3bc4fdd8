//===- GraphResources.cpp - file mappings for weight resources ------------===//

#include "dialects/graph/IR/GraphResources.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
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
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it.
  int fd = ::open(pathString.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return llvm::createStringError("cannot open '" + pathString + "': " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return llvm::createStringError("cannot stat '" + pathString + "': " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return llvm::createStringError("'" + pathString + "' is not a regular file");
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

llvm::Expected<std::string> infer::graph::resolveInsideDirectory(llvm::StringRef directory,
                                                                 llvm::StringRef path) {
  llvm::SmallString<256> joined;
  if (llvm::sys::path::is_absolute(path)) {
    joined = path;
  } else {
    joined = directory.empty() ? "." : directory;
    llvm::sys::path::append(joined, path);
  }
  char buffer[PATH_MAX];
  if (!::realpath(joined.c_str(), buffer))
    return llvm::createStringError(
        "'" + joined.str() + "' not found" +
        (errno == ENOENT ? "" : ": " + std::string(std::strerror(errno))));
  std::string target = buffer;
  std::string base = directory.empty() ? "." : directory.str();
  if (!::realpath(base.c_str(), buffer))
    return llvm::createStringError("cannot resolve the directory '" + base +
                                   "': " + std::strerror(errno));
  llvm::StringRef root = buffer;
  bool inside = llvm::StringRef(target).starts_with(root) &&
                (target.size() == root.size() || root == "/" || target[root.size()] == '/');
  if (!inside)
    return llvm::createStringError("'" + joined.str() +
                                   "' leads outside the model's directory (to '" + target +
                                   "'); the files a model names must lie beside it");
  return target;
}

llvm::Expected<FileRange>
infer::graph::parseFileReference(llvm::StringRef reference,
                                 std::optional<llvm::StringRef> directory) {
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
  std::string resolved = path.str();
  if (directory) {
    llvm::Expected<std::string> inside = resolveInsideDirectory(*directory, path);
    if (!inside)
      return llvm::createStringError("weight reference 'file:" + reference.str() +
                                     "': " + llvm::toString(inside.takeError()));
    resolved = *inside;
  }
  llvm::Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(resolved);
  if (!file)
    return file.takeError();
  if (offset > (*file)->size() || size > (*file)->size() - offset)
    return llvm::createStringError("weight range " + llvm::Twine(offset) + "+" + llvm::Twine(size) +
                                   " lies outside '" + path + "' (" + llvm::Twine((*file)->size()) +
                                   " bytes)");
  return FileRange{std::move(*file), offset, size};
}
