#include "connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

namespace mlaspec::serve {
namespace {

// The numeric address and port of a socket address (IPv4 or IPv6), as getnameinfo's
// NI_NUMERICHOST writes them (httplib's remote_addr).
bool endpoint(const sockaddr_storage& a, std::string* addr, int* port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    if (!inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof(buf))) return false;
    *port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (!inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof(buf))) return false;
    *port = ntohs(v6->sin6_port);
  } else {
    return false;
  }
  *addr = buf;
  return true;
}

// An IPv4 peer of an IPv6 socket is written ::ffff:a.b.c.d by one side and a.b.c.d by another.
std::string unmapped(const std::string& addr) {
  static const std::string kMapped = "::ffff:";
  return addr.compare(0, kMapped.size(), kMapped) == 0 ? addr.substr(kMapped.size()) : addr;
}

}  // namespace

int find_connection_socket(int local_port, const std::string& remote_addr, int remote_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
      continue;
    }
    std::string local_addr, peer_addr;
    int lport = 0, pport = 0;
    if (!endpoint(local, &local_addr, &lport) || !endpoint(peer, &peer_addr, &pport)) continue;
    if (lport == local_port && pport == remote_port &&
        unmapped(peer_addr) == unmapped(remote_addr)) {
      found = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
  return found;
}

bool peer_closed(int fd) {
  char byte = 0;
  const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;  // data waiting (a pipelined request): the peer is there
  if (n == 0) return true;  // orderly shutdown
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace mlaspec::serve
