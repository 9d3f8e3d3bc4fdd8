//===- OutputFile.cpp - where -o may write, and the temporary file --------===//

#include "compiler/artifact/OutputFile.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Signals.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace infer::compiler;

LogicalResult infer::compiler::checkOutputPath(Location loc, llvm::StringRef path,
                                               llvm::ArrayRef<std::string> inputs) {
  std::string name = path.str();
  struct stat output;
  if (::stat(name.c_str(), &output) != 0)
    return success(); // a new file (a missing directory fails at create)
  if (!S_ISREG(output.st_mode))
    return emitError(loc) << "-o '" << path
                          << "' exists and is not a regular file; an artifact replaces only a "
                             "regular file";
  for (const std::string &input : inputs) {
    struct stat info;
    if (::stat(input.c_str(), &info) == 0 && info.st_dev == output.st_dev &&
        info.st_ino == output.st_ino)
      return emitError(loc) << "-o '" << path << "' is '" << input
                            << "', an input of this compile; write the artifact elsewhere";
  }
  return success();
}

TempFile::~TempFile() {
  if (descriptor >= 0)
    ::close(descriptor);
  if (!name.empty()) {
    ::unlink(name.c_str());
    if (registered)
      llvm::sys::DontRemoveFileOnSignal(name);
  }
}

bool TempFile::create(llvm::StringRef path) {
  std::string pattern = (path + ".tmpXXXXXX").str();
  // Signals stay blocked from mkstemp until the name is registered: one in
  // between would leave the file behind.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &previous);
  descriptor = ::mkstemp(pattern.data());
  int error = errno;
  if (descriptor >= 0) {
    name = pattern;
    registered = !llvm::sys::RemoveFileOnSignal(name);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (descriptor < 0) {
    errno = error;
    return false;
  }
  // mkstemp creates 0600; an artifact is readable like any other output.
  mode_t mask = ::umask(0);
  ::umask(mask);
  return ::fchmod(descriptor, 0666 & ~mask) == 0;
}

bool TempFile::close() {
  int fd = descriptor;
  descriptor = -1;
  return ::close(fd) == 0;
}

bool TempFile::renameTo(llvm::StringRef target) {
  if (::rename(name.c_str(), target.str().c_str()) != 0)
    return false;
  if (registered)
    llvm::sys::DontRemoveFileOnSignal(name);
  name.clear();
  return true;
}
