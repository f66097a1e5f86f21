"""Writes the train_config.json that LeRobot 0.6 (real Python code, lerobot commit
7427f31801f944f5ec9ce53cda02862ce7d1638b) saves for the two runs documented in
tests/fixtures/lerobot-0.6-run/README.md.

The config is parsed from the very command line of the README by LeRobot's own `parser.wrap`
(draccus), `cfg.validate()` runs as in `lerobot_train.train`, the policy features are filled the
way `make_policy` fills them (`dataset_to_policy_features` on the dataset's info.json features),
and the file is written by `TrainPipelineConfig._save_pretrained` (draccus.dump, JSON mode).

What the README's run machine would give and this one cannot, set before parsing:
  - os.cpu_count() -> 16 (EvalConfig.__post_init__: eval.batch_size = min(floor(0.7*16), 50, 64) = 11)
  - CUDA available (PreTrainedConfig.__post_init__ records device "cuda")
  - torchcodec importable (DatasetConfig.video_backend default factory -> "torchcodec")
The dataset info.json features are written here (no Hub access); their order decides the order
of `input_features`.

usage: python3 write_train_configs.py OUT_DIR
"""

import os
import sys
import tempfile
from pathlib import Path

import torch

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()

# ---- what the CUDA / 16-core / torchcodec machine would give ---------------------------------
os.cpu_count = lambda: 16

# get_safe_default_video_backend() (DatasetConfig.video_backend's default factory) returns
# "torchcodec" when importlib finds and imports it: a stand-in module answers both for the parse.
import importlib.machinery  # noqa: E402
import types  # noqa: E402

_tc = types.ModuleType("torchcodec")
_tc.__spec__ = importlib.machinery.ModuleSpec("torchcodec", None)
sys.modules["torchcodec"] = _tc

import lerobot.configs.policies as policies_cfg  # noqa: E402

policies_cfg.is_torch_device_available = lambda d: str(d).startswith("cuda")
policies_cfg.auto_select_torch_device = lambda: torch.device("cuda")

# lerobot_train.py's imports register the choice types (policies, optimizers, schedulers, envs); the
# script itself cannot be imported here (its dataset module needs HF `datasets`).
import lerobot.envs  # noqa: E402,F401
import lerobot.optim  # noqa: E402,F401
import lerobot.policies  # noqa: E402,F401
from lerobot.configs import parser  # noqa: E402
from lerobot.configs.train import TrainPipelineConfig  # noqa: E402
from lerobot.utils.feature_utils import dataset_to_policy_features  # noqa: E402
from lerobot.configs.types import FeatureType  # noqa: E402

META = {
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}


def aloha_features():
    # lerobot/aloha_sim_transfer_cube_human meta/info.json (v3.0): one 480x640 camera, 14-dof state/action
    motors = [f"m{i}" for i in range(14)]
    return {
        "observation.images.top": {"dtype": "video", "shape": [480, 640, 3],
                                   "names": ["height", "width", "channel"]},
        "observation.state": {"dtype": "float32", "shape": [14], "names": {"motors": motors}},
        "action": {"dtype": "float32", "shape": [14], "names": {"motors": motors}},
        "episode_index": {"dtype": "int64", "shape": [1], "names": None},
        "frame_index": {"dtype": "int64", "shape": [1], "names": None},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "next.done": {"dtype": "bool", "shape": [1], "names": None},
        **META,
    }


def pusht_features():
    # lerobot/pusht meta/info.json: one 96x96 camera, 2-dof state/action
    return {
        "observation.image": {"dtype": "video", "shape": [96, 96, 3], "names": ["height", "width", "channel"]},
        "observation.state": {"dtype": "float32", "shape": [2], "names": {"motors": ["x", "y"]}},
        "action": {"dtype": "float32", "shape": [2], "names": {"motors": ["x", "y"]}},
        "episode_index": {"dtype": "int64", "shape": [1], "names": None},
        "frame_index": {"dtype": "int64", "shape": [1], "names": None},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "next.reward": {"dtype": "float32", "shape": [1], "names": None},
        "next.done": {"dtype": "bool", "shape": [1], "names": None},
        "next.success": {"dtype": "bool", "shape": [1], "names": None},
        **META,
    }


def fill_features(policy_cfg, ds_features):
    # make_policy (policies/factory.py) lines 317-335
    features = dataset_to_policy_features(ds_features)
    policy_cfg.output_features = {k: ft for k, ft in features.items() if ft.type is FeatureType.ACTION}
    if not policy_cfg.input_features:
        policy_cfg.input_features = {k: ft for k, ft in features.items() if k not in policy_cfg.output_features}


@parser.wrap()
def parse(cfg: TrainPipelineConfig):
    return cfg


def write(name, argv, ds_features):
    work = Path(tempfile.mkdtemp())
    os.chdir(work)  # output_dir is relative (outputs/train/...), must not exist for validate()
    sys.argv = ["lerobot-train", *argv]
    cfg = parse()
    cfg.validate()
    fill_features(cfg.policy, ds_features)
    cfg._save_pretrained(work)
    (OUT / name).write_text((work / "train_config.json").read_text())
    print("wrote", OUT / name, "device", cfg.policy.device, "eval.batch_size", cfg.eval.batch_size,
          "video_backend", cfg.dataset.video_backend)


write("act_train_config.json",
      ["--dataset.repo_id=lerobot/aloha_sim_transfer_cube_human", "--policy.type=act",
       "--policy.push_to_hub=false", "--output_dir=outputs/train/act_aloha_transfer"],
      aloha_features())
write("diffusion_train_config.json",
      ["--dataset.repo_id=lerobot/pusht", "--policy.type=diffusion", "--policy.push_to_hub=false",
       "--policy.horizon=16", "--policy.n_action_steps=8", "--policy.crop_shape=[84,84]",
       "--policy.use_group_norm=true", "--policy.use_separate_rgb_encoder_per_camera=false",
       "--policy.pretrained_backbone_weights=null", "--batch_size=64", "--steps=200000", "--ema.enable=true",
       "--output_dir=outputs/train/diffusion_pusht"],
      pusht_features())
