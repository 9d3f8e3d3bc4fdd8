//===- FileReader.cpp - files read safely: regular, bounded, pread ---------===//

#include "runtime/base/FileReader.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace infer {
namespace {

std::string resolved(const std::string &path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

int64_t nanoseconds(const struct timespec &time) {
  return int64_t(time.tv_sec) * 1000000000 + time.tv_nsec;
}

const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}

} // namespace

StatusOr<RegularFile> RegularFile::open(const std::string &path) {
  RegularFile file;
  file.path_ = path;
  file.fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (file.fd_ < 0)
    return errnoError(errno, "cannot open '" + path + "'");
  struct stat info;
  if (::fstat(file.fd_, &info) != 0)
    return errnoError(errno, "cannot stat '" + path + "'");
  if (!S_ISREG(info.st_mode))
    return invalidArgumentError("'" + path + "' is not a regular file (" + kindOf(info.st_mode) +
                                ")");
  file.size_ = static_cast<uint64_t>(info.st_size);
  file.mtimeNs_ = nanoseconds(info.st_mtim);
  return file;
}

RegularFile::RegularFile(RegularFile &&other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), size_(other.size_), mtimeNs_(other.mtimeNs_) {
  other.fd_ = -1;
}

RegularFile &RegularFile::operator=(RegularFile &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      (void)::close(fd_); // nothing useful to do if closing fails
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    size_ = other.size_;
    mtimeNs_ = other.mtimeNs_;
    other.fd_ = -1;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0)
    (void)::close(fd_); // read-only: nothing is lost if closing fails
}

Status RegularFile::readAt(uint64_t offset, uint64_t size, void *out) const {
  auto *bytes = static_cast<char *>(out);
  uint64_t done = 0;
  while (done < size) {
    uint64_t want = size - done;
    if (want > (uint64_t(1) << 30))
      want = uint64_t(1) << 30;
    ssize_t got = ::pread(fd_, bytes + done, want, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return errnoError(errno, "cannot read '" + path_ + "'");
    if (got == 0)
      return dataLossError("'" + path_ + "' ended at byte " + std::to_string(offset + done) + ", " +
                           std::to_string(size - done) +
                           " bytes short of what it held when opened (truncated while in use?)");
    done += static_cast<uint64_t>(got);
  }
  return okStatus();
}

Status RegularFile::checkUnchanged() const {
  struct stat info;
  if (::fstat(fd_, &info) != 0)
    return errnoError(errno, "cannot stat '" + path_ + "'");
  if (static_cast<uint64_t>(info.st_size) != size_)
    return dataLossError("'" + path_ + "' changed while in use: it had " + std::to_string(size_) +
                         " bytes when opened, now " + std::to_string(info.st_size));
  // Not the status-change time: renaming a new file over the path (the safe
  // way to replace an artifact) changes it on the old file without
  // changing what this descriptor reads.
  if (nanoseconds(info.st_mtim) != mtimeNs_)
    return dataLossError("'" + path_ +
                         "' changed while in use: it was modified after it was "
                         "opened (replace a file by renaming a new one over it)");
  return okStatus();
}

StatusOr<std::string> readRegularFile(const std::string &path, uint64_t maxBytes) {
  ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  uint64_t size = file.size();
  if (size > maxBytes)
    return invalidArgumentError("'" + path + "' is " + std::to_string(size) +
                                " bytes, more than the " + std::to_string(maxBytes) +
                                " this file may have");
  std::string bytes(size, '\0');
  Status read = file.readAt(0, size, bytes.data());
  if (!read.ok())
    return read;
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
