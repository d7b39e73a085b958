// The HTTP server of a build without cpp-httplib: every create() fails naming the package.
#include "mlaspec/serve/server.h"

namespace mlaspec::serve {

struct Server::Impl {};

bool server_available() {
  return false;
}

Result<std::unique_ptr<Server>> Server::create(const ServeOptions&) {
  return unsupported(
      "mlaspec was built without cpp-httplib: install libcpp-httplib-dev "
      "(scripts/install-deps.sh) and configure again");
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
int Server::port() const {
  return 0;
}
const std::string& Server::model_name() const {
  static const std::string kNone;
  return kNone;
}
std::string Server::describe() const {
  return {};
}
Status Server::run() {
  return unsupported("mlaspec was built without cpp-httplib");
}
void Server::start() {}
void Server::stop() {}
const Metrics& Server::metrics() const {
  static const Metrics kNone;
  return kNone;
}
Scheduler& Server::scheduler() {
  throw Error(unsupported("mlaspec was built without cpp-httplib"));
}

}  // namespace mlaspec::serve
