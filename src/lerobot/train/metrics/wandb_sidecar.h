// The W&B sidecar process (apps/lerobot-cpp/lerobot-cpp-wandb, run by Python): found beside the
// executable, checked before step 1, started by rank 0 with its stdin on a pipe we hold. It
// follows train_metrics.jsonl on its own, so no training step ever waits on it; closing the pipe
// tells it to log what is left and finish the run. If it dies, training goes on (one warning).
#pragma once

#include <sys/types.h>

#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/train/train_config.h"

namespace lerobot {

// $LEROBOT_CPP_WANDB, else lerobot-cpp-wandb beside the running executable, else on PATH.
fs::path find_wandb_sidecar();
// $LEROBOT_CPP_PYTHON, else python3 (from PATH).
std::string wandb_python();

// Before step 1: is `wandb` importable by the interpreter, and (online mode) is there a login?
// Throws a usage error naming --wandb.enable and what to install or run.
void check_wandb_ready(const WandBConfig& cfg);

class WandBSidecar {
 public:
  // Starts `python sidecar --spec=SPEC_FILE`.
  explicit WandBSidecar(const fs::path& spec_file);
  ~WandBSidecar();  // closes the pipe; does not wait (the sidecar finishes by itself)
  WandBSidecar(const WandBSidecar&) = delete;
  WandBSidecar& operator=(const WandBSidecar&) = delete;

  // Non-blocking: false once the process has exited (warns once that W&B stopped receiving).
  bool alive();
  // End of training: close the pipe and wait up to timeout_s for the run to be finished.
  void finish(double timeout_s);

 private:
  void reap(int status);
  pid_t pid_ = -1;
  int pipe_fd_ = -1;
  bool exited_ = false;
};

}  // namespace lerobot
