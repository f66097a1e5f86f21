"""A tiny ACT run with real Python LeRobot 0.6 (commit 7427f318), saved with LeRobot's own
`save_checkpoint` at step 5, for lerobot-cpp to resume.

The config is parsed by LeRobot's `parser.wrap` (draccus) from a command line, validated with
`cfg.validate()`, the policy made by `make_policy` on the dataset's meta (info.json features +
stats.json, with ImageNet stats for the camera as `make_dataset` does when use_imagenet_stats),
the processors by `make_pre_post_processors`, the optimizer/scheduler by
`make_optimizer_and_scheduler`, and each step is `update_policy`'s sequence without the
Accelerator (forward, backward, clip_grad_norm_, optimizer.step, zero_grad, scheduler.step).
The dataset's parquet cannot be read here (no pyarrow in Debian), so batches are random tensors of
the dataset's shapes (images in [0,1], state/action in the dataset's range).

usage: python3 train_tiny_act.py RUN_DIR DATASET_ROOT [extra CLI flags...]
Writes RUN_DIR/checkpoints/000005/ (+ last symlink) and RUN_DIR/python_steps.json (lr and loss
per step, the lr the scheduler gives for step 6, the weights' parameter order).
"""

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from lerobot.common.train_utils import get_step_checkpoint_dir, save_checkpoint, update_last_checkpoint
from lerobot.configs import parser
from lerobot.configs.train import TrainPipelineConfig
from lerobot.optim.factory import make_optimizer_and_scheduler
from lerobot.policies import make_policy, make_pre_post_processors
from lerobot.utils.constants import CHECKPOINTS_DIR
from lerobot.utils.random_utils import set_seed

RUN = Path(sys.argv[1]).resolve()
ROOT = Path(sys.argv[2]).resolve()
EXTRA = sys.argv[3:]
SAVE_STEP = 5

IMAGENET_STATS = {"mean": [[[0.485]], [[0.456]], [[0.406]]], "std": [[[0.229]], [[0.224]], [[0.225]]]}


@parser.wrap()
def parse(cfg: TrainPipelineConfig):
    return cfg


sys.argv = [
    "lerobot-train",
    "--dataset.repo_id=local/reach2d_64",
    f"--dataset.root={ROOT}",
    "--policy.type=act",
    "--policy.push_to_hub=false",
    "--policy.device=cpu",
    "--policy.dim_model=64",
    "--policy.n_heads=2",
    "--policy.dim_feedforward=128",
    "--policy.n_encoder_layers=1",
    "--policy.n_decoder_layers=1",
    "--policy.n_vae_encoder_layers=1",
    "--policy.chunk_size=10",
    "--policy.n_action_steps=10",
    "--policy.pretrained_backbone_weights=null",
    "--batch_size=4",
    "--num_workers=0",
    "--steps=6",
    "--save_freq=5",
    "--log_freq=1",
    "--seed=7",
    f"--output_dir={RUN}",
    *EXTRA,
]
cfg = parse()
cfg.validate()
if os.environ.get("PYCHECK_PRESET_GROUPS_WITH_SCHEDULER"):
    # The preset's two ACT param groups (backbone lr = policy.optimizer_lr_backbone) with a cosine
    # schedule: what LeRobot holds after validate() when a resumed config carries
    # use_policy_training_preset=true plus optimizer/scheduler sections (validate() only fills the
    # preset on a fresh run). A fresh LeRobot CLI run cannot ask for it: presets replace both.
    from lerobot.optim.optimizers import AdamWConfig
    from lerobot.optim.schedulers import CosineDecayWithWarmupSchedulerConfig

    cfg.optimizer = AdamWConfig(lr=1e-3, weight_decay=1e-4)
    cfg.scheduler = CosineDecayWithWarmupSchedulerConfig(
        num_warmup_steps=2, num_decay_steps=6, peak_lr=1e-3, decay_lr=1e-5)
set_seed(cfg.seed)

info = json.loads((ROOT / "meta/info.json").read_text())
stats_json = json.loads((ROOT / "meta/stats.json").read_text())
stats = {k: {s: np.array(v) for s, v in d.items()} for k, d in stats_json.items()}
camera_keys = [k for k, f in info["features"].items() if f["dtype"] in ("image", "video")]
if cfg.dataset.use_imagenet_stats:
    for key in camera_keys:
        for s, v in IMAGENET_STATS.items():
            stats[key][s] = torch.tensor(v, dtype=torch.float32)
ds_meta = SimpleNamespace(features=info["features"], stats=stats, camera_keys=camera_keys, depth_keys=[])

policy = make_policy(cfg=cfg.policy, ds_meta=ds_meta, rename_map=cfg.rename_map)
preprocessor, postprocessor = make_pre_post_processors(policy_cfg=cfg.policy, dataset_stats=stats)
optimizer, lr_scheduler = make_optimizer_and_scheduler(cfg, policy)
policy.train()

B, T = cfg.batch_size, cfg.policy.chunk_size
lo = torch.tensor(stats_json["action"]["min"], dtype=torch.float32)
hi = torch.tensor(stats_json["action"]["max"], dtype=torch.float32)
g = torch.Generator().manual_seed(1234)


def batch():
    return {
        "observation.image": torch.rand(B, 3, 64, 64, generator=g),
        "observation.state": lo + (hi - lo) * torch.rand(B, 2, generator=g),
        "action": lo + (hi - lo) * torch.rand(B, T, 2, generator=g),
        "action_is_pad": torch.zeros(B, T, dtype=torch.bool),
        "task": ["Move the blue disc onto the green square."] * B,
    }


log = {"steps": [], "param_groups": [len(g_["params"]) for g_ in optimizer.param_groups],
       "param_names_in_optimizer_order": []}
names = {id(p): n for n, p in policy.named_parameters()}
for group in optimizer.param_groups:
    log["param_names_in_optimizer_order"] += [names[id(p)] for p in group["params"]]

for step in range(1, SAVE_STEP + 1):
    b = preprocessor(batch())
    lr_used = [gr["lr"] for gr in optimizer.param_groups]
    loss, out = policy(b)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.optimizer.grad_clip_norm)
    optimizer.step()
    optimizer.zero_grad()
    if lr_scheduler is not None:
        lr_scheduler.step()
    # LeRobot's tracker logs optimizer.param_groups[0]["lr"] after the scheduler step
    log["steps"].append({"step": step, "loss": loss.item(), "grad_norm": float(grad_norm), "lr_used": lr_used,
                         "lr_logged": optimizer.param_groups[0]["lr"]})
    print(log["steps"][-1])

ckpt = get_step_checkpoint_dir(cfg.output_dir, cfg.steps, SAVE_STEP)
save_checkpoint(ckpt, SAVE_STEP, cfg, policy, optimizer, lr_scheduler, preprocessor, postprocessor)
update_last_checkpoint(ckpt)
# The lr LeRobot uses for the optimizer step of step 6 (before its scheduler.step()).
log["lr_for_step6"] = [gr["lr"] for gr in optimizer.param_groups]
if lr_scheduler is not None:
    lr_scheduler.step()
    log["lr_logged_step6"] = optimizer.param_groups[0]["lr"]
(RUN / "python_steps.json").write_text(json.dumps(log, indent=2))
print("saved", ckpt, "lr for step 6:", log["lr_for_step6"])
