//===- FileReader.cpp - whole small files, read safely ---------------------===//

#include "runtime/base/FileReader.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace infer {
namespace {

/// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

std::string resolved(const std::string &path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

} // namespace

StatusOr<std::string> readRegularFile(const std::string &path, uint64_t maxBytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it.
  Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0)
    return errnoError(errno, "cannot open '" + path + "'");
  struct stat info;
  if (::fstat(file.fd, &info) != 0)
    return errnoError(errno, "cannot stat '" + path + "'");
  if (!S_ISREG(info.st_mode))
    return invalidArgumentError("'" + path + "' is not a regular file");
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size > maxBytes)
    return invalidArgumentError("'" + path + "' is " + std::to_string(size) +
                                " bytes, more than the " + std::to_string(maxBytes) +
                                " this file may have");
  std::string bytes(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    ssize_t got = ::read(file.fd, bytes.data() + done, size - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return errnoError(errno, "cannot read '" + path + "'");
    if (got == 0)
      return dataLossError("'" + path + "' became shorter while it was read");
    done += static_cast<uint64_t>(got);
  }
  return bytes;
}

bool pathExists(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

StatusOr<std::string> fileInsideDirectory(const std::string &dir, const std::string &name) {
  std::string path = (dir.empty() ? std::string(".") : dir) + "/" + name;
  if (!pathExists(path))
    return std::string();
  std::string base = resolved(dir.empty() ? "." : dir), target = resolved(path);
  if (base.empty() || target.empty())
    return invalidArgumentError("'" + path + "' cannot be resolved (a broken link?)");
  if (target.compare(0, base.size(), base) != 0 ||
      (target.size() > base.size() && target[base.size()] != '/' && base != "/"))
    return invalidArgumentError("'" + path + "' leads outside its directory (to '" + target +
                                "'); a model's files must lie beside it");
  return path;
}

} // namespace infer
