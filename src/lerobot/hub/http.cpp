// libcurl easy interface, one handle per exchange (thread-safe; curl_global_init once).
#include "lerobot/hub/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Exchange {
  const HttpRequest* req;
  HttpResponse* resp;
  CURL* curl = nullptr;
  std::FILE* file = nullptr;
  bool to_string = false;
  uint64_t written = 0;
  std::FILE* source = nullptr;  // PUT/POST from a file
  uint64_t sent = 0;            // request body bytes handed to libcurl
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string line(data, size * n);
  // A new status line starts a new hop: keep only the final hop's headers.
  if (starts_with(line, "HTTP/")) {
    ex->resp->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    ex->resp->headers[name] = trim(line.substr(colon + 1));
  }
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t bytes = size * n;
  if (!ex->req->append_to.empty() && !ex->file && !ex->to_string) {
    // Only a successful body goes to the file (an error page is kept as text): 206 appends to
    // what is there, 200 (the server ignored Range) starts it again.
    long status = 0;
    curl_easy_getinfo(ex->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200 || status == 206) {
      ex->file = std::fopen(ex->req->append_to.c_str(), status == 206 ? "ab" : "wb");
      if (!ex->file) return 0;
    } else {
      ex->to_string = true;
    }
  }
  if (ex->file) {
    if (std::fwrite(data, 1, bytes, ex->file) != bytes) return 0;
  } else {
    ex->resp->body.append(data, bytes);
  }
  ex->written += bytes;
  return bytes;
}

// The request body: the string, or the file's byte range.
size_t on_read(char* out, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const HttpRequest& req = *ex->req;
  const uint64_t total = req.upload_from.empty() ? req.body.size() : req.upload_length;
  const size_t want = size_t(std::min<uint64_t>(size * n, total - ex->sent));
  if (want == 0) return 0;
  size_t got = 0;
  if (req.upload_from.empty()) {
    std::memcpy(out, req.body.data() + ex->sent, want);
    got = want;
  } else {
    got = std::fread(out, 1, want, ex->source);
    if (got == 0) return CURL_READFUNC_ABORT;  // the file shrank under us
  }
  ex->sent += got;
  return got;
}

int on_xfer(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* ex = static_cast<Exchange*>(user);
  if (ex->req->on_progress && !ex->req->on_progress(uint64_t(dlnow), uint64_t(dltotal))) return 1;
  return 0;
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string url_quote(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(char(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

HttpResponse http_perform(const HttpRequest& req) {
  global_init_once();
  HttpResponse resp;
  Exchange ex{&req, &resp};
  CURL* curl = curl_easy_init();
  if (!curl) throw TransportError{"cannot create a libcurl handle"};
  struct curl_slist* headers = nullptr;
  for (const auto& h : req.headers) headers = curl_slist_append(headers, h.c_str());
  // huggingface_hub asks for identity so Content-Length is the file's size.
  headers = curl_slist_append(headers, "Accept-Encoding: identity");
  curl_easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "lerobot-cpp/0.1 (huggingface_hub-compatible)");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, req.connect_timeout_s);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, req.low_speed_timeout_s);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_xfer);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &ex);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  if (req.method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (req.method == "POST" || req.method == "PUT") {
    if (!req.upload_from.empty()) {
      ex.source = std::fopen(req.upload_from.c_str(), "rb");
      if (!ex.source || ::fseeko(ex.source, off_t(req.upload_offset), SEEK_SET) != 0) {
        if (ex.source) std::fclose(ex.source);
        curl_slist_free_all(headers);
        curl_easy_cleanup(curl);
        throw TransportError{"cannot read " + req.upload_from.string()};
      }
    }
    const curl_off_t size = curl_off_t(req.upload_from.empty() ? req.body.size() : req.upload_length);
    // A PUT of the bytes (LFS basic transfer); a POST of a JSON / NDJSON body.
    if (req.method == "PUT") {
      curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, size);
    } else {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, size);
    }
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &ex);
    // No "Expect: 100-continue" round trip: the server answers once it has the body.
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  std::string range;
  if (req.range_from > 0) {
    range = std::to_string(req.range_from) + "-";
    curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  }
  ex.curl = curl;
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  char* eff = nullptr;
  curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &eff);
  if (eff) resp.effective_url = eff;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (ex.file) std::fclose(ex.file);
  if (ex.source) std::fclose(ex.source);
  if (rc != CURLE_OK) {
    bool partial = rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_OPERATION_TIMEDOUT;
    throw TransportError{curl_easy_strerror(rc), partial && resp.status != 0};
  }
  return resp;
}

}  // namespace lerobot::hub
