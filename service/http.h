// The service's view of HTTP: plain request and response values, so the routes know nothing
// of Boost.Beast and the server (service/server.cc) is the only place that speaks the wire.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

namespace tilesmith::service {

/// One request as the routes see it.
struct HttpRequest {
  std::string method;                        ///< "GET", "POST", …
  std::string path;                          ///< Without the query string, e.g. "/v1/jobs/ab12…".
  std::map<std::string, std::string> query;  ///< Decoded `?a=b&c=d`.
  std::string authorization;                 ///< The Authorization header, or empty.
  std::string body;
};

/// One response. `headers` are added to Content-Type and Content-Length.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;
  /// Close the connection after this response (bad requests whose framing is unknown).
  bool close = false;
};

/// Delivers a response; may be called from any thread, exactly once.
using Reply = std::function<void(HttpResponse)>;

/// Splits `/a/b?x=1&y=%20` into its path and decoded query parameters. False when the
/// percent-encoding is malformed.
bool SplitTarget(std::string_view target, std::string* path,
                 std::map<std::string, std::string>* query);

}  // namespace tilesmith::service
