//===- ClientConnection.h - has a request's client gone away? ---*- C++ -*-===//
//
// cpp-httplib 0.11 gives a handler no socket and reports a closed connection
// only when a write to it fails, so a non-streamed request (which writes
// nothing until it ends) would run to its end for a client that left. This
// finds the request's accepted socket among the process's descriptors by its
// two addresses (unique per TCP connection; the worker thread owns it until
// the handler returns) and polls it for the peer's close, as uvicorn's EOF
// gives vLLM its is_disconnected().
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_CLIENTCONNECTION_H
#define INFER_RUNTIME_SERVER_CLIENTCONNECTION_H

#include <string>

namespace infer::server {

class ClientConnection {
public:
  /// The connection from remoteAddr:remotePort to localAddr:localPort; one
  /// that is never closed when it cannot be found. Find it before writing to
  /// it: a write that meets a closed peer draws a reset, after which the
  /// socket has no peer address.
  static ClientConnection find(const std::string &remoteAddr, int remotePort,
                               const std::string &localAddr, int localPort);
  /// The client closed or reset the connection (POLLRDHUP, POLLHUP, POLLERR).
  bool closed() const;

private:
  int socket_ = -1;
};

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_CLIENTCONNECTION_H
