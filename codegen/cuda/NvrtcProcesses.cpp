//===- NvrtcProcesses.cpp - NVRTC programs compiled in child processes -----===//
//
// NVRTC spends most of a first compile in one program's optimizer and code
// generator and keeps about two cores busy whatever --split-compile says
// (bench/results/tinyllama-1.1b-compile.md, session 20): a tinyllama artifact's
// kernels took 11.6-13.2 s as one program on a fresh H200 machine and 5.5-7.4 s
// as six programs in separate processes. Two programs compiled concurrently in
// one process now and then gave different PTX for the same source, so each
// program here gets its own process (fork): its own NVRTC state, and the same
// bytes as when it compiles alone. The child sends its output back through a
// pipe as length-prefixed fields and leaves with _exit.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Nvrtc.h"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

namespace infer::codegen {
namespace {

// The child's reply: a status byte (0 ok), then fields of an 8-byte length
// and the bytes: on success cubin, ptx, the compile's seconds, the name
// count, each name and its lowered form; on failure the error message.
void appendField(std::string &out, std::string_view field) {
  uint64_t size = field.size();
  out.append(reinterpret_cast<const char *>(&size), sizeof size);
  out.append(field);
}

std::string encode(const StatusOr<NvrtcOutput> &result) {
  std::string out;
  if (!result.ok()) {
    out.push_back(1);
    appendField(out, result.status().message());
    return out;
  }
  out.push_back(0);
  appendField(out, result->cubin);
  appendField(out, result->ptx);
  appendField(out, std::to_string(result->seconds));
  appendField(out, std::to_string(result->loweredNames.size()));
  for (const auto &[expression, lowered] : result->loweredNames) {
    appendField(out, expression);
    appendField(out, lowered);
  }
  return out;
}

/// Reads the fields encode wrote; a short or malformed reply is an error
/// (the child died, e.g. killed for memory).
class Reply {
public:
  explicit Reply(std::string bytes) : bytes_(std::move(bytes)) {}
  bool field(std::string &out) {
    uint64_t size = 0;
    if (bytes_.size() - at_ < sizeof size)
      return false;
    std::memcpy(&size, bytes_.data() + at_, sizeof size);
    at_ += sizeof size;
    if (bytes_.size() - at_ < size)
      return false;
    out.assign(bytes_, at_, size);
    at_ += size;
    return true;
  }
  StatusOr<NvrtcOutput> decode() {
    if (bytes_.empty())
      return internalError("the NVRTC child process sent nothing (it crashed or was killed)");
    at_ = 1;
    std::string text;
    if (bytes_[0] != 0) {
      if (!field(text))
        return internalError("the NVRTC child process sent a truncated error");
      return internalError(text);
    }
    NvrtcOutput output;
    std::string seconds, count;
    if (!field(output.cubin) || !field(output.ptx) || !field(seconds) || !field(count))
      return internalError("the NVRTC child process sent a truncated result");
    output.seconds = std::strtod(seconds.c_str(), nullptr);
    unsigned long names = std::strtoul(count.c_str(), nullptr, 10);
    for (unsigned long i = 0; i < names; ++i) {
      std::string expression, lowered;
      if (!field(expression) || !field(lowered))
        return internalError("the NVRTC child process sent a truncated name list");
      output.loweredNames[expression] = lowered;
    }
    return output;
  }

private:
  std::string bytes_;
  size_t at_ = 0;
};

bool writeAll(int fd, const std::string &bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

std::string readAll(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return bytes;
    bytes.append(buffer, size_t(n));
  }
}

StatusOr<NvrtcOutput> compileJob(const NvrtcJob &job) {
  auto start = std::chrono::steady_clock::now();
  StatusOr<NvrtcOutput> output =
      compileWithNvrtc(job.source, job.nameExpressions, job.arch, job.lineInfo);
  if (output.ok())
    output->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return output;
}

} // namespace

std::vector<StatusOr<NvrtcOutput>> compileInSeparateProcesses(const std::vector<NvrtcJob> &jobs) {
  std::vector<StatusOr<NvrtcOutput>> results;
  const char *processes = std::getenv("INFER_NVRTC_PROCESSES");
  if (jobs.size() <= 1 || (processes && std::string_view(processes) == "0")) {
    for (const NvrtcJob &job : jobs)
      results.push_back(compileJob(job));
    return results;
  }
  struct Child {
    pid_t pid = -1;
    int fd = -1;
  };
  std::vector<Child> children(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    int pipeFds[2];
    if (::pipe(pipeFds) != 0)
      continue; // compiled in this process below
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(pipeFds[0]);
      bool sent = writeAll(pipeFds[1], encode(compileJob(jobs[i])));
      ::_exit(sent ? 0 : 1);
    }
    ::close(pipeFds[1]);
    if (pid < 0) {
      ::close(pipeFds[0]);
      continue;
    }
    children[i] = {pid, pipeFds[0]};
  }
  // Each child compiles, then blocks on its pipe until read: reading them in
  // order cannot deadlock.
  for (size_t i = 0; i < jobs.size(); ++i) {
    Child &child = children[i];
    if (child.pid < 0) { // no pipe or no fork: compile here
      results.push_back(compileJob(jobs[i]));
      continue;
    }
    Reply reply(readAll(child.fd));
    ::close(child.fd);
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    StatusOr<NvrtcOutput> decoded = reply.decode();
    if (decoded.ok() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      decoded = internalError("the NVRTC child process exited abnormally");
    results.push_back(std::move(decoded));
  }
  return results;
}

} // namespace infer::codegen
