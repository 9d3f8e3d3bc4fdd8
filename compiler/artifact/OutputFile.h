//===- OutputFile.h - where -o may write, and the temporary file -*- C++ -*-===//
//
// An artifact is written to a temporary file beside its path and renamed into
// place (ArtifactWriter.h). What -o may name: a new file or an existing
// regular file that is not one of the compile's inputs. The temporary file is
// removed on every way out: errors, and SIGINT/SIGTERM/SIGHUP (LLVM's
// RemoveFileOnSignal: an async-signal-safe unlink of the registered path in
// the handler, then the signal re-raised with its default action).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_ARTIFACT_OUTPUTFILE_H
#define INFER_COMPILER_ARTIFACT_OUTPUTFILE_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace infer::compiler {

/// Refuses (with an error at `loc`) an output `path` that exists and is not
/// a regular file (a device such as /dev/null, a FIFO, a directory: renaming
/// onto it would replace it), or that is the same file as one of `inputs`
/// (the model, its external data, tokenizer files: the compile would
/// overwrite what it reads). Inputs that do not exist are skipped.
mlir::LogicalResult checkOutputPath(mlir::Location loc, llvm::StringRef path,
                                    llvm::ArrayRef<std::string> inputs);

/// `path`.tmpXXXXXX, created 0666 & ~umask, removed when this is destroyed
/// unless keep() was called, or when the process gets SIGINT, SIGTERM or
/// SIGHUP while it exists.
class TempFile {
public:
  TempFile() = default;
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile();

  /// Creates the file; false (errno set) on failure.
  bool create(llvm::StringRef path);
  int fd() const { return descriptor; }
  const std::string &path() const { return name; }
  /// Closes the descriptor; false (errno set) if close fails.
  bool close();
  /// Renames the file to `target` and keeps it; false (errno set) on failure.
  bool renameTo(llvm::StringRef target);

private:
  std::string name;
  int descriptor = -1;
  bool registered = false;
};

} // namespace infer::compiler

#endif // INFER_COMPILER_ARTIFACT_OUTPUTFILE_H
