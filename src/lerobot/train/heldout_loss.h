// The held-out eval loss (--eval_steps, LeRobot 0.6's lerobot_train.py): the policy in eval mode,
// no gradients, under the run's autocast, over the held-out frames in order, in batches of
// --batch_size (the last one may be short); the loss is the mean of the batch losses. With several
// processes, batch b is evaluated by rank b mod world and the sums are all-reduced, so every
// process count gives the single-process value (accelerate's sharded loader would pad the last
// batches with repeated frames instead).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/distributed/process_group.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"

namespace lerobot {

struct HeldOutLoss {
  double loss = 0.0;       // mean over the batches of each batch's loss
  int64_t samples = 0;     // frames evaluated (all ranks)
  int64_t batches = 0;
};

struct HeldOutSet {
  std::shared_ptr<LeRobotDataset> dataset;  // the held-out episodes
  std::vector<int64_t> frames;              // global frame indices, in evaluation order
};

// Every rank calls it (collective when `group` has more than one process). The policy is put back
// in training mode afterwards. `lockstep`: every rank runs the same number of forwards (a sharded
// model's units are gathered collectively as each forward reaches them); a rank with no batch
// left in the last round runs one of its own batches again, not counted.
HeldOutLoss compute_heldout_loss(Policy& policy, const PolicyProcessors& processors, const HeldOutSet& set,
                                 int64_t batch_size, const torch::Device& device,
                                 const std::string& mixed_precision, ProcessGroup* group, bool lockstep = false);

}  // namespace lerobot
