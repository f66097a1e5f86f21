// Turning Hub answers into lerobot::Error messages that say what happened and what to do, and
// the retry loop (429/5xx and broken connections, exponential back-off). Tokens never appear.
#pragma once

#include <functional>
#include <string>

#include "lerobot/hub/cache_layout.h"
#include "lerobot/hub/http.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub {

// What a request was about, for messages.
struct RequestContext {
  RepoType type = RepoType::kModel;
  std::string repo_id;
  std::string revision;
  std::string filename;  // empty for API calls
};

// Throws the Error for a non-2xx answer (401, 403, 404 with X-Error-Code, others).
[[noreturn]] void throw_for_status(const HttpResponse& resp, const RequestContext& ctx, const HubClient& client);

// Throws the Error for "the Hub could not be reached" after the retries.
[[noreturn]] void throw_unreachable(const std::string& detail, const RequestContext& ctx, const HubClient& client);

// Runs `attempt` until it returns a response that is neither 429 nor 5xx, retrying those and
// TransportErrors with back-off; the last answer (or error) is what the caller sees.
HttpResponse with_retries(const HubClientOptions& options, const std::function<HttpResponse()>& attempt,
                          const RequestContext& ctx, const HubClient& client);

// "dataset lerobot/pusht at revision v3.0" (with the file when there is one).
std::string describe(const RequestContext& ctx);

}  // namespace lerobot::hub
