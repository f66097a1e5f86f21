// One HTTP exchange over libcurl: HEAD/GET to a string or appended to a file (Range resume),
// POST/PUT of a string or of a byte range of a file (uploads), response headers of the final
// hop, no hidden retries (the caller decides; see hub_client.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"

namespace lerobot::hub {

struct HttpRequest {
  std::string method = "GET";            // GET, HEAD, POST or PUT
  std::string url;
  std::vector<std::string> headers;      // "Name: value"
  bool follow_redirects = true;          // every hop; false: the 3xx itself is the response
  fs::path append_to;                    // GET body appended to this file (else kept in body)
  uint64_t range_from = 0;               // > 0: "Range: bytes=N-"
  // POST/PUT body: `body`, or when upload_from is set, upload_length bytes of that file from
  // upload_offset (streamed, never held in memory).
  std::string body;
  fs::path upload_from;
  uint64_t upload_offset = 0;
  uint64_t upload_length = 0;
  long connect_timeout_s = 10;
  long low_speed_timeout_s = 30;         // abort when under 1 byte/s for this long
  // Called with (bytes of this transfer so far, expected bytes of it or 0); false aborts.
  std::function<bool(uint64_t, uint64_t)> on_progress;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names, the final hop's
  std::string body;
  std::string effective_url;
  std::string header(const std::string& lower_name) const;
};

// Thrown when no HTTP status came back (DNS, refused, reset, timeout, truncated body).
struct TransportError {
  std::string message;
  bool partial = false;  // the connection broke inside a body (the bytes so far were kept)
};

// Performs the request. Throws TransportError when the exchange did not complete.
HttpResponse http_perform(const HttpRequest& request);

// RFC 3986 percent-encoding of one path segment or query value (quote(safe="")).
std::string url_quote(const std::string& s, bool keep_slash = false);

}  // namespace lerobot::hub
