// A non-streaming handler's view of its client: cpp-httplib 0.11 (Debian's libcpp-httplib-dev)
// does not tell a handler that its client went away (Request::is_connection_closed came later),
// and writes nothing until the answer is ready, so a client that leaves would go unnoticed until
// the request ends. The handler finds its connection's socket by the two endpoints httplib does
// give it and peeks at it while it waits.
//
//   int fd = find_connection_socket(req.local_port, req.remote_addr, req.remote_port);
//   if (fd >= 0 && peer_closed(fd)) channel->cancel();
#pragma once

#include <string>

namespace mlaspec::serve {

// The descriptor of this process's TCP socket whose local port is `local_port` and whose peer
// is remote_addr:remote_port (numeric, as httplib writes it), or -1. Reads /proc/self/fd: call
// it once per request and keep the answer (the socket stays open while the handler runs).
int find_connection_socket(int local_port, const std::string& remote_addr, int remote_port);

// True when the peer closed its end (orderly shutdown: a read would return 0) or reset the
// connection. Never consumes data: a pipelined next request stays in the socket for httplib.
bool peer_closed(int fd);

}  // namespace mlaspec::serve
