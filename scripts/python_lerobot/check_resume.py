"""Checks a lerobot-cpp step-6 checkpoint resumed from a Python LeRobot step-5 checkpoint.

usage: python3 check_resume.py PY_CKPT_5 CPP_CKPT_6 PYTHON_STEPS_JSON

With torch's AdamW (p <- p(1 - lr wd) - lr * (m/bc1) / (sqrt(v)/sqrt(bc2) + eps)), from the
step-5 state (Python) and the step-6 state (lerobot-cpp), per parameter:
  1. `step` is 6 in the optimizer state (5 loaded + 1);
  2. the moments continue the saved ones: g from m (g = (m6 - b1 m5)/(1-b1)) squared equals
     g^2 from v ((v6 - b2 v5)/(1-b2)) -- it would not if m5/v5 had not been loaded or were
     attached to another parameter;
  3. the lr that moved p5 to p6 given m6, v6 and step 6, solved per tensor, is the lr LeRobot's
     scheduler gives for step 6.
Then LeRobot's own loaders read the lerobot-cpp checkpoint back (the reverse direction).
"""

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

py5, cpp6 = Path(sys.argv[1]), Path(sys.argv[2])
steps = json.loads(Path(sys.argv[3]).read_text())
names = steps["param_names_in_optimizer_order"]
groups6 = json.loads((cpp6 / "training_state/optimizer_param_groups.json").read_text())
groups5 = json.loads((py5 / "training_state/optimizer_param_groups.json").read_text())
print("param groups: python", [len(g["params"]) for g in groups5], "lerobot-cpp", [len(g["params"]) for g in groups6])
print("python group keys:     ", list(groups5[0]))
print("lerobot-cpp group keys:", list(groups6[0]))
assert [g["params"] for g in groups5] == [g["params"] for g in groups6], "param indices per group differ"
group_of = {}
for gi, g in enumerate(groups6):
    for i in g["params"]:
        group_of[i] = gi

o5 = load_file(py5 / "training_state/optimizer_state.safetensors")
o6 = load_file(cpp6 / "training_state/optimizer_state.safetensors")
w5 = load_file(py5 / "pretrained_model/model.safetensors")
w6 = load_file(cpp6 / "pretrained_model/model.safetensors")
print("optimizer_state keys: python", len(o5), "lerobot-cpp", len(o6), "same set:", set(o5) == set(o6))
print("model keys same set:", set(w5) == set(w6), "n", len(w5))

lr_expected = steps["lr_for_step6"]
bad_step, worst_rel, lr_ests, shape_bad, changed = [], 0.0, {}, [], 0
for i, name in enumerate(names):
    g = groups6[group_of[i]]
    b1, b2 = g["betas"]
    eps, wd = g["eps"], g["weight_decay"]
    s5, s6 = o5[f"state/{i}/step"].item(), o6[f"state/{i}/step"].item()
    if s5 != 5 or s6 != 6:
        bad_step.append((i, name, s5, s6))
    m5, v5 = o5[f"state/{i}/exp_avg"].double(), o5[f"state/{i}/exp_avg_sq"].double()
    m6, v6 = o6[f"state/{i}/exp_avg"].double(), o6[f"state/{i}/exp_avg_sq"].double()
    if m6.shape != w5[name].shape:
        shape_bad.append((i, name, tuple(m6.shape), tuple(w5[name].shape)))
        continue
    g_m = (m6 - b1 * m5) / (1 - b1)
    g2_v = (v6 - b2 * v5) / (1 - b2)
    # float32 storage of v limits how well (v6 - b2 v5) is known: compare where g^2 is not tiny next to v5
    ok = g2_v.abs() > 1e-3 * v5.abs()
    if ok.any():
        rel = ((g_m[ok] ** 2 - g2_v[ok]).abs() / g2_v[ok].abs().clamp_min(1e-30)).median().item()
        worst_rel = max(worst_rel, rel)
    p5, p6 = w5[name].double(), w6[name].double()
    if not torch.equal(p5, p6):
        changed += 1
    bc1, bc2 = 1 - b1**6, 1 - b2**6
    u = (m6 / bc1) / (v6.sqrt() / bc2**0.5 + eps)
    den = wd * p5 + u
    sel = den.abs() > 1e-3 * den.abs().max()
    lr_est = ((p5 - p6)[sel] / den[sel]).median().item()
    lr_ests.setdefault(group_of[i], []).append(lr_est)

print("tensors whose step is not 5 -> 6:", len(bad_step), bad_step[:3])
print("moment tensors with the wrong shape for their parameter:", len(shape_bad), shape_bad[:3])
print(f"moments continue the saved ones: worst per-tensor median |g_m^2 - g2_v| / g2_v = {worst_rel:.2e}")
print("parameters moved by step 6:", changed, "of", len(names))
for gi, ests in sorted(lr_ests.items()):
    t = torch.tensor(ests)
    print(f"group {gi}: lr applied at step 6 (solved from p5->p6, per tensor): median {t.median().item():.6e} "
          f"min {t.min().item():.6e} max {t.max().item():.6e}; LeRobot's scheduler gives {lr_expected[gi]:.6e}")

# Reverse direction: LeRobot's loaders read lerobot-cpp's step-6 checkpoint.
from lerobot.optim.optimizers import load_optimizer_state  # noqa: E402
from lerobot.optim.schedulers import load_scheduler_state  # noqa: E402
from lerobot.policies.act.modeling_act import ACTPolicy  # noqa: E402
from lerobot.common.train_utils import load_training_metadata  # noqa: E402
from lerobot.utils.random_utils import load_rng_state  # noqa: E402

policy = ACTPolicy.from_pretrained(cpp6 / "pretrained_model")
sd = policy.state_dict()
print("LeRobot ACTPolicy.from_pretrained(lerobot-cpp step 6): weights equal:",
      all(torch.equal(sd[k], w6[k]) for k in w6))
params = policy.get_optim_params() if len(groups6) == 2 else policy.parameters()
opt = torch.optim.AdamW(params, lr=groups6[0]["lr"])
sched_file = cpp6 / "training_state/scheduler_state.json"
sched = None
if sched_file.exists():
    # LeRobot builds the scheduler (LambdaLR adds `initial_lr` to each group) before loading.
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
try:
    load_optimizer_state(opt, cpp6 / "training_state")
except ValueError as e:
    # torch 2.6 (Debian 13) AdamW has no `decoupled_weight_decay` group key; torch >= 2.7 (LeRobot
    # 0.6's requirement) has it. Retry on a copy without that key to check the rest.
    print("LeRobot load_optimizer_state on torch", torch.__version__, "refuses it:", str(e).splitlines()[0],
          "(group key set differs:", sorted(set(groups6[0]) ^ set(opt.state_dict()["param_groups"][0])), ")")
    import shutil, tempfile  # noqa: E401

    tmp = Path(tempfile.mkdtemp()) / "training_state"
    shutil.copytree(cpp6 / "training_state", tmp)
    gj = json.loads((tmp / "optimizer_param_groups.json").read_text())
    for gr in gj:
        gr.pop("decoupled_weight_decay", None)  # the one torch-2.7-only key
    (tmp / "optimizer_param_groups.json").write_text(json.dumps(gj))
    load_optimizer_state(opt, tmp)
    print("  ...and reads it without that one key")
st = opt.state_dict()["state"]
print("LeRobot load_optimizer_state: step of param 0 =", st[0]["step"].item(),
      "exp_avg equal:", torch.equal(st[0]["exp_avg"], o6["state/0/exp_avg"]))
if sched is not None:
    print("scheduler_state.json (lerobot-cpp):", sched_file.read_text().replace("\n", "").replace(" ", ""))
    try:
        load_scheduler_state(sched, cpp6 / "training_state")
        print("LeRobot load_scheduler_state: last_epoch", sched.last_epoch)
    except ValueError as e:
        print("LeRobot load_scheduler_state on torch", torch.__version__, "refuses it:", str(e).replace("\n", " "))
print("LeRobot load_training_metadata:", load_training_metadata(cpp6 / "training_state"))
load_rng_state(cpp6 / "training_state")
print("LeRobot load_rng_state: ok")
