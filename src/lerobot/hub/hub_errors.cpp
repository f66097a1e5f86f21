// Messages for the Hub's answers (huggingface_hub's hf_raise_for_status, in our words).
#include "lerobot/hub/hub_errors.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"

namespace lerobot::hub {

std::string describe(const RequestContext& ctx) {
  std::string s = std::string(repo_type_name(ctx.type)) + " '" + ctx.repo_id + "'";
  if (!ctx.revision.empty()) s += " at revision '" + ctx.revision + "'";
  if (!ctx.filename.empty()) s = "file '" + ctx.filename + "' of " + s;
  return s;
}

void throw_for_status(const HttpResponse& resp, const RequestContext& ctx, const HubClient& client) {
  const std::string what = describe(ctx);
  const std::string url = client.repo_url(ctx.type, ctx.repo_id);
  const std::string code = resp.header("x-error-code");
  const bool has_token = !client.env().token.empty();
  const std::string login =
      "log in with `hf auth login` (it writes " + client.env().token_path.string() +
      ") or set HF_TOKEN to a token with read access";
  std::string msg;
  if (resp.status == 401) {
    msg = what + ": the Hub answered 401 Unauthorized (the repository is private or gated, or does not exist)";
    throw_usage(msg, url,
                has_token ? "the token given (HF_TOKEN or " + client.env().token_path.string() +
                                ") was refused: check the repo id spelling and that the token is valid"
                          : "check the repo id spelling; if the repository is private or gated, " + login);
  }
  if (resp.status == 403) {
    msg = what + ": the Hub answered 403 Forbidden (a gated repository whose conditions are not accepted, or a token without access)";
    throw_usage(msg, url, "open " + url + " while logged in and accept its conditions, then " + login);
  }
  if (resp.status == 404) {
    if (code == "RevisionNotFound")
      throw_usage(what + ": revision '" + ctx.revision + "' does not exist (the Hub answered 404 RevisionNotFound)",
                  url, "pass an existing branch, tag or commit (the repository's refs are listed at " + url + "/tree/main)");
    if (code == "EntryNotFound")
      throw_usage(what + ": no such file at that revision (the Hub answered 404 EntryNotFound)", url,
                  "check the file name and the revision");
    throw_usage(what + ": repository not found (the Hub answered 404)", url,
                "check the repo id (org/name) and its type (a dataset or a model)");
  }
  msg = what + ": the Hub answered HTTP " + std::to_string(resp.status);
  std::string body = resp.body.substr(0, 300);
  if (!body.empty()) msg += " (" + body + ")";
  throw_runtime(redact(msg, client.env().token), url, "try again later; HF_HUB_OFFLINE=1 uses only the cache");
}

void throw_unreachable(const std::string& detail, const RequestContext& ctx, const HubClient& client) {
  throw_runtime("cannot reach the Hub at " + client.env().endpoint + " for " + describe(ctx) + ": " +
                    redact(detail, client.env().token),
                "HF_ENDPOINT=" + client.env().endpoint,
                "check the network connection (and HF_ENDPOINT), or set HF_HUB_OFFLINE=1 to use only "
                "files already in the cache");
}

HttpResponse with_retries(const HubClientOptions& options, const std::function<HttpResponse()>& attempt,
                          const RequestContext& ctx, const HubClient& client) {
  double wait = options.backoff_initial_s;
  for (int i = 0;; ++i) {
    std::string problem;
    try {
      HttpResponse resp = attempt();
      if (resp.status != 429 && resp.status < 500) return resp;
      if (i >= options.max_retries) return resp;
      problem = "HTTP " + std::to_string(resp.status);
    } catch (const TransportError& e) {
      if (i >= options.max_retries) throw_unreachable(e.message, ctx, client);
      problem = e.message;
    }
    LOG_WARNING << "hub: " << describe(ctx) << ": " << redact(problem, client.env().token) << "; retry "
                << (i + 1) << "/" << options.max_retries << " in " << wait << " s";
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    wait = std::min(wait * 2, options.backoff_max_s);
  }
}

}  // namespace lerobot::hub
