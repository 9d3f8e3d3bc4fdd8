//===- ClientConnection.cpp - has a request's client gone away? -----------===//

#include "runtime/server/ClientConnection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>

namespace infer::server {
namespace {

/// The address and port of an IPv4 or IPv6 socket address.
bool describe(const sockaddr_storage &address, std::string &host, int &port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto &in = reinterpret_cast<const sockaddr_in &>(address);
    port = ntohs(in.sin_port);
    host = inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text)) ? text : "";
    return true;
  }
  if (address.ss_family == AF_INET6) {
    const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(address);
    port = ntohs(in6.sin6_port);
    host = inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text)) ? text : "";
    return true;
  }
  return false;
}

bool matches(int socket, const std::string &host, int port, bool peer) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  int got = peer ? getpeername(socket, reinterpret_cast<sockaddr *>(&address), &length)
                 : getsockname(socket, reinterpret_cast<sockaddr *>(&address), &length);
  std::string foundHost;
  int foundPort = -1;
  return got == 0 && describe(address, foundHost, foundPort) && foundPort == port &&
         foundHost == host;
}

} // namespace

ClientConnection ClientConnection::find(const std::string &remoteAddr, int remotePort,
                                        const std::string &localAddr, int localPort) {
  ClientConnection connection;
  DIR *descriptors = opendir("/proc/self/fd");
  if (!descriptors)
    return connection;
  while (dirent *entry = readdir(descriptors)) {
    char *end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(descriptors))
      continue;
    int socket = static_cast<int>(fd);
    if (matches(socket, remoteAddr, remotePort, /*peer=*/true) &&
        matches(socket, localAddr, localPort, /*peer=*/false)) {
      connection.socket_ = socket;
      break;
    }
  }
  closedir(descriptors);
  return connection;
}

bool ClientConnection::closed() const {
  if (socket_ < 0)
    return false;
  pollfd probe{socket_, POLLRDHUP, 0};
  return poll(&probe, 1, 0) == 1 && (probe.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

} // namespace infer::server
