// --save_checkpoint_to_hub: LeRobot's push_checkpoint_to_hub. Every checkpoint the run saves goes
// to the policy's Hub repo as checkpoints/<step>/ (pretrained_model/, training_state/ and the EMA
// copy, verbatim), in a commit "checkpoint <step>" tagged <step>, so a run that dies on one machine
// resumes on another (`--resume=true --config_path=<repo>`, train/hub_checkpoint.h), and every
// step stays reachable at its tag. The uploads run on a thread of their own, one after another in
// step order, so training does not wait for the network.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub {

// One checkpoint directory (.../checkpoints/<step>) uploaded to repo_id under checkpoints/<step>/,
// the repo created first if missing (private_ as --policy.private), the commit tagged <step>.
CommitResult push_checkpoint_to_hub(const HubClient& client, const fs::path& checkpoint_dir,
                                         const std::string& repo_id, std::optional<bool> private_);

class CheckpointUploader {
 public:
  CheckpointUploader(HubClient client, std::string repo_id, std::optional<bool> private_);
  // Waits for the queued uploads (each bounded by the Hub client's timeouts and retries): a run
  // that stops on an error still leaves its saved checkpoints on the Hub.
  ~CheckpointUploader();
  CheckpointUploader(const CheckpointUploader&) = delete;
  CheckpointUploader& operator=(const CheckpointUploader&) = delete;

  // Queues a complete checkpoint directory. A failed upload is logged as an error naming the step
  // and the reason; training goes on, and finish() reports it.
  void push(const fs::path& checkpoint_dir);
  // Waits for every queued upload. Returns "" when all went up, else which steps did not and why.
  std::string finish();

 private:
  void run();

  HubClient client_;
  std::string repo_id_;
  std::optional<bool> private_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<fs::path> queue_;
  bool busy_ = false, stop_ = false;
  int pushed_ = 0;
  std::vector<std::string> failed_;  // step directory names
  std::string first_error_;
  std::thread worker_;
};

}  // namespace lerobot::hub
