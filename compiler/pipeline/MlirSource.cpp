//===- MlirSource.cpp - reading .mlir input that may be hostile -----------===//

#include "compiler/pipeline/MlirSource.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace infer::pipeline;

std::optional<MlirSourceProblem> infer::pipeline::checkMlirSource(llvm::StringRef text) {
  // MLIR bytecode starts with "ML\xefR"; its reader is not bounded here.
  if (text.starts_with("ML\xef"
                       "R"))
    return MlirSourceProblem{
        0, 0, "is MLIR bytecode; infer reads the textual form (as --emit prints it)"};
  int depth = 0;
  unsigned line = 1, column = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if (c == '"') {
      // A string literal, with backslash escapes; it may not span lines. One
      // left open is refused here: MLIR 22's lexer, after reporting it inside
      // a dialect_resources section, read on past the end of the buffer
      // (mlir-parse-fuzzer).
      unsigned startColumn = column;
      while (i + 1 < text.size() && text[i + 1] != '"' && text[i + 1] != '\n') {
        ++i;
        ++column;
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;
          ++column;
        }
      }
      if (i + 1 >= text.size() || text[i + 1] != '"')
        return MlirSourceProblem{line, startColumn,
                                 "string literal not closed on its line; refused before parsing"};
      ++i;
      ++column;
      continue;
    }
    switch (c) {
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxMlirNesting)
        return MlirSourceProblem{line, column,
                                 "brackets nest deeper than " + std::to_string(kMaxMlirNesting) +
                                     " levels (regions, attributes or types); refused before "
                                     "parsing"};
      break;
    case '>':
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < text.size() && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      depth = depth > 0 ? depth - 1 : 0;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
infer::pipeline::readMlirSource(llvm::StringRef path) {
  if (path == "-") {
    auto buffer = llvm::MemoryBuffer::getSTDIN();
    if (!buffer)
      return llvm::createStringError("cannot read stdin: " + buffer.getError().message());
    return std::move(*buffer);
  }
  std::string name = path.str();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it.
  int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return llvm::createStringError("cannot open '" + name + "': " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return llvm::createStringError("'" + name + "' is not a regular file");
  }
  auto buffer = llvm::MemoryBuffer::getOpenFile(fd, name, static_cast<uint64_t>(info.st_size));
  ::close(fd);
  if (!buffer)
    return llvm::createStringError("cannot read '" + name + "': " + buffer.getError().message());
  return std::move(*buffer);
}
