// --save_checkpoint_to_hub (see checkpoint_uploader.h).
#include "lerobot/hub/checkpoint_uploader.h"

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {

CommitResult push_checkpoint_to_hub(const HubClient& client, const fs::path& checkpoint_dir,
                                         const std::string& repo_id, std::optional<bool> private_) {
  const std::string name = checkpoint_dir.filename().string();
  std::vector<UploadFile> files;
  for (const auto& e : fs::recursive_directory_iterator(checkpoint_dir)) {
    if (!e.is_regular_file() || ends_with(e.path().filename().string(), ".tmp")) continue;
    files.push_back({"checkpoints/" + name + "/" + fs::relative(e.path(), checkpoint_dir).generic_string(), e.path()});
  }
  if (files.empty())
    throw_runtime("the checkpoint directory has no files to push", checkpoint_dir.string());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path_in_repo < b.path_in_repo; });
  client.create_repo(RepoType::kModel, repo_id, private_, true);
  CommitResult r = client.upload_files(RepoType::kModel, repo_id, files, "checkpoint " + name);
  // The step's tag, as LeRobot sets it: --policy.pretrained_revision=<step> finds the checkpoint.
  // A push of files the branch already has makes no commit; the tag then goes on the branch head.
  client.create_tag(RepoType::kModel, repo_id, name, r.commit.empty() ? "main" : r.commit, true);
  return r;
}

CheckpointUploader::CheckpointUploader(HubClient client, std::string repo_id, std::optional<bool> private_)
    : client_(std::move(client)), repo_id_(std::move(repo_id)), private_(private_) {
  worker_ = std::thread([this] { run(); });
}

CheckpointUploader::~CheckpointUploader() {
  finish();  // what is still queued goes up first; its report was already logged upload by upload
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void CheckpointUploader::push(const fs::path& checkpoint_dir) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(checkpoint_dir);
  }
  cv_.notify_all();
}

void CheckpointUploader::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    const fs::path dir = queue_.front();
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    const std::string name = dir.filename().string();
    std::string error;
    try {
      const CommitResult r = push_checkpoint_to_hub(client_, dir, repo_id_, private_);
      LOG_INFO << "Checkpoint " << name << " pushed to " << client_.repo_url(RepoType::kModel, repo_id_)
               << " (checkpoints/" << name << ", tag " << name
               << (r.commit.empty() ? ", already there" : ", commit " + r.commit.substr(0, 10)) << ")";
    } catch (const std::exception& e) {
      error = redact(e.what(), client_.env().token);
      LOG_ERROR << "Checkpoint " << name << " was not pushed to " << repo_id_ << ": " << error
                << " (it is saved at " << dir.string() << "; training goes on)";
    }
    lock.lock();
    busy_ = false;
    if (error.empty()) {
      ++pushed_;
    } else {
      failed_.push_back(name);
      if (first_error_.empty()) first_error_ = error;
    }
    cv_.notify_all();
  }
}

std::string CheckpointUploader::finish() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!queue_.empty() || busy_)
    LOG_INFO << "Waiting for " << queue_.size() + (busy_ ? 1 : 0) << " checkpoint upload(s) to " << repo_id_;
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  if (failed_.empty()) return "";
  return std::to_string(failed_.size()) + " of " + std::to_string(failed_.size() + pushed_) +
         " checkpoint(s) were not pushed to " + repo_id_ + " (" + join(failed_, ", ") + "): " + first_error_;
}

}  // namespace lerobot::hub
