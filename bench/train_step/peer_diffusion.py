#!/usr/bin/env python3
"""The PyTorch peer of bench_train_step for Diffusion Policy: one training step as LeRobot runs it.

LeRobot's DiffusionPolicy written out here (not imported, so it runs with torch + torchvision only),
with its module names, so the state dict has LeRobot's keys (less the `diffusion.` prefix):
per-camera RGB encoder = optional crop (random in training, centre in eval), a torchvision ResNet18
trunk (weights=None) with regular BatchNorm (GroupNorm C/16 with --group_norm, the pre-2026 default),
spatial softmax (32 keypoints), Linear + ReLU; global conditioning = per obs step [state, camera
features] flattened over n_obs_steps 2; the conditional 1-D U-Net (down dims 512/1024/2048, kernel 5,
8 groups, 128-d step embedding, FiLM scale + bias); DDPM training with squaredcos_cap_v2 betas,
epsilon target, mean MSE. Adam with LeRobot's Diffusion preset (lr 1e-4, betas 0.95/0.999, weight
decay 1e-6), clip_grad_norm_ 10, diffusers' cosine schedule (500 warm-up steps, LambdaLR) stepped
each step, TF32 and cudnn.benchmark on CUDA, autocast for bf16. Optimizer and clip use PyTorch's
own default implementation, as LeRobot leaves it. The batch stays on the device; a step reads
nothing back. --infer times one action chunk at batch 1 instead (eval mode, no_grad, DDIM with
leading spacing, clip_sample, eta 0).

  python3 peer_diffusion.py --batch_size=8 --image_size=96 --device=cpu --state_dim=2 --action_dim=2
  python3 peer_diffusion.py --infer --num_inference_steps=10 --device=cuda
Print-out matches bench_train_step's (ms/step median/mean/min, samples/s, parameters); --infer prints
ms/chunk. bf16 is meant for CUDA: torch 1.13's CPU autocast has no bf16 mish / group_norm.
"""
import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn
import torchvision

from peer_common import add_common_args, prepare_device, time_and_report

N_OBS_STEPS, NUM_TRAIN_TIMESTEPS, NUM_KEYPOINTS = 2, 100, 32
DOWN_DIMS, KERNEL, N_GROUPS, STEP_EMBED = (512, 1024, 2048), 5, 8, 128


def squaredcos_cap_v2(T):
    # diffusers' betas_for_alpha_bar (cosine alpha_bar), computed in double, stored as float32.
    abar = lambda t: math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2
    return torch.tensor([min(1 - abar((i + 1) / T) / abar(i / T), 0.999) for i in range(T)], dtype=torch.float32)


def resnet_out_size(n):  # conv 7/2/3, maxpool 3/2/1, three stride-2 stages: each floor((n - 1) / 2) + 1
    for _ in range(5):
        n = (n - 1) // 2 + 1
    return n


class SpatialSoftmax(nn.Module):
    def __init__(self, c, h, w, num_kp):
        super().__init__()
        self.nets = nn.Conv2d(c, num_kp, kernel_size=1)
        self.num_kp = num_kp
        lin = lambda n: torch.linspace(-1.0, 1.0, n, dtype=torch.float64)  # numpy's linspace, then float32
        ys, xs = torch.meshgrid(lin(h), lin(w), indexing="ij")
        self.register_buffer("pos_grid", torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1).float())  # x fastest

    def forward(self, x):
        attention = F.softmax(self.nets(x).flatten(2).flatten(0, 1), dim=-1)  # (N * K, H * W)
        return (attention @ self.pos_grid).view(-1, self.num_kp, 2)


class RgbEncoder(nn.Module):
    def __init__(self, image_size, crop, group_norm):
        super().__init__()
        norm = (lambda c: nn.GroupNorm(c // 16, c)) if group_norm else None
        trunk = torchvision.models.resnet18(weights=None, norm_layer=norm)
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])  # 0 conv1, 1 bn1, 2 relu, 3 maxpool, 4..7
        self.crop = crop
        side = resnet_out_size(crop or image_size)
        self.pool = SpatialSoftmax(512, side, side, NUM_KEYPOINTS)
        self.out = nn.Linear(2 * NUM_KEYPOINTS, 2 * NUM_KEYPOINTS)

    def forward(self, x):
        if self.crop:
            h, w = x.shape[-2:]
            if self.training:  # torchvision RandomCrop.get_params: one crop for the whole batch, host RNG
                top = int(torch.randint(0, h - self.crop + 1, (1,)).item())
                left = int(torch.randint(0, w - self.crop + 1, (1,)).item())
            else:  # CenterCrop
                top, left = int(round((h - self.crop) / 2.0)), int(round((w - self.crop) / 2.0))
            x = x[..., top:top + self.crop, left:left + self.crop]
        return F.relu(self.out(self.pool(self.backbone(x)).flatten(1)))


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(torch.arange(half, device=t.device) * (-math.log(10000.0) / (half - 1)))
        e = t.unsqueeze(-1) * freqs.unsqueeze(0)
        return torch.cat([e.sin(), e.cos()], dim=-1)


class Conv1dBlock(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.block = nn.Sequential(nn.Conv1d(cin, cout, k, padding=k // 2), nn.GroupNorm(N_GROUPS, cout), nn.Mish())

    def forward(self, x):
        return self.block(x)


class ResBlock(nn.Module):  # conv1 -> FiLM (scale, bias) -> conv2, + residual
    def __init__(self, cin, cout, cond_dim):
        super().__init__()
        self.cout = cout
        self.conv1 = Conv1dBlock(cin, cout, KERNEL)
        self.cond_encoder = nn.Sequential(nn.Mish(), nn.Linear(cond_dim, 2 * cout))
        self.conv2 = Conv1dBlock(cout, cout, KERNEL)
        self.residual_conv = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, cond):
        emb = self.cond_encoder(cond).unsqueeze(-1)
        h = emb[:, :self.cout] * self.conv1(x) + emb[:, self.cout:]
        return self.conv2(h) + self.residual_conv(x)


class ConditionalUnet1d(nn.Module):
    def __init__(self, action_dim, global_cond_dim):
        super().__init__()
        d = STEP_EMBED
        self.diffusion_step_encoder = nn.Sequential(SinusoidalPosEmb(d), nn.Linear(d, 4 * d), nn.Mish(),
                                                    nn.Linear(4 * d, d))
        cond = d + global_cond_dim
        in_out = [(action_dim, DOWN_DIMS[0])] + list(zip(DOWN_DIMS[:-1], DOWN_DIMS[1:]))
        self.down_modules = nn.ModuleList(
            nn.ModuleList([ResBlock(i, o, cond), ResBlock(o, o, cond),
                           nn.Conv1d(o, o, 3, stride=2, padding=1) if n + 1 < len(in_out) else nn.Identity()])
            for n, (i, o) in enumerate(in_out))
        last = DOWN_DIMS[-1]
        self.mid_modules = nn.ModuleList([ResBlock(last, last, cond), ResBlock(last, last, cond)])
        # LeRobot's up path: reversed(in_out[1:]), and every up block ends with a ConvTranspose1d.
        self.up_modules = nn.ModuleList(
            nn.ModuleList([ResBlock(2 * i, o, cond), ResBlock(o, o, cond), nn.ConvTranspose1d(o, o, 4, 2, 1)])
            for o, i in reversed(in_out[1:]))
        self.final_conv = nn.Sequential(Conv1dBlock(DOWN_DIMS[0], DOWN_DIMS[0], KERNEL),
                                        nn.Conv1d(DOWN_DIMS[0], action_dim, 1))

    def forward(self, x, t, global_cond):  # x (B, T, A), t (B,) int64, global_cond (B, G)
        x = x.transpose(1, 2)
        cond = torch.cat([self.diffusion_step_encoder(t), global_cond], dim=-1)
        skips = []
        for res1, res2, down in self.down_modules:
            x = res2(res1(x, cond), cond)
            skips.append(x)
            x = down(x)
        for res in self.mid_modules:
            x = res(x, cond)
        for res1, res2, up in self.up_modules:
            x = up(res2(res1(torch.cat([x, skips.pop()], dim=1), cond), cond))
        return self.final_conv(x).transpose(1, 2)


class Diffusion(nn.Module):
    def __init__(self, state_dim, action_dim, image_size, crop, group_norm, n_cams=1):
        super().__init__()
        self.rgb_encoder = nn.ModuleList(RgbEncoder(image_size, crop, group_norm) for _ in range(n_cams))
        self.unet = ConditionalUnet1d(action_dim, N_OBS_STEPS * (state_dim + 2 * NUM_KEYPOINTS * n_cams))
        abar = torch.cumprod(1 - squaredcos_cap_v2(NUM_TRAIN_TIMESTEPS), 0)
        self.register_buffer("alphas_cumprod", abar, persistent=False)  # on the device, for training
        self.abar_host = abar.tolist()  # host copy for the sampler's per-step scalars (diffusers keeps it on CPU)

    def global_cond(self, state, images):  # state (B, n, S), images (B, n, cams, 3, H, W)
        b, n = state.shape[:2]
        feats = [enc(images[:, :, i].flatten(0, 1)).view(b, n, -1) for i, enc in enumerate(self.rgb_encoder)]
        return torch.cat([state] + feats, dim=-1).flatten(1)

    def compute_loss(self, state, images, action):
        cond = self.global_cond(state, images)
        eps = torch.randn_like(action)
        t = torch.randint(0, NUM_TRAIN_TIMESTEPS, (action.shape[0],), device=action.device)
        abar = self.alphas_cumprod[t].to(action.dtype).view(-1, 1, 1)
        noisy = abar.sqrt() * action + (1 - abar).sqrt() * eps
        return F.mse_loss(self.unet(noisy, t, cond), eps, reduction="none").mean()

    @torch.no_grad()
    def generate_actions(self, state, images, horizon, action_dim, n_steps, n_action_steps):
        cond = self.global_cond(state, images)
        abar = self.abar_host
        ratio = NUM_TRAIN_TIMESTEPS // n_steps
        x = torch.randn(state.shape[0], horizon, action_dim, device=state.device)
        for t in [i * ratio for i in reversed(range(n_steps))]:  # DDIM, leading spacing, eta 0
            eps = self.unet(x, torch.full((x.shape[0],), t, dtype=torch.long, device=x.device), cond)
            a_t, a_prev = abar[t], abar[t - ratio] if t - ratio >= 0 else 1.0  # set_alpha_to_one
            x0 = ((x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)).clamp(-1.0, 1.0)  # clip_sample
            x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
        return x[:, N_OBS_STEPS - 1:N_OBS_STEPS - 1 + n_action_steps]


def cosine_with_warmup(warmup, total):  # diffusers get_scheduler("cosine"), num_cycles 0.5
    def f(s):
        if s < warmup:
            return s / max(1, warmup)
        p = (s - warmup) / max(1, total - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 2.0 * 0.5 * p)))
    return f


def main():
    ap = argparse.ArgumentParser()
    add_common_args(ap, batch_size=64)
    ap.add_argument("--image_size", type=int, default=96, help="frame size before the crop")
    ap.add_argument("--crop_shape", type=int, default=0, help="square crop side (0: none, our default)")
    ap.add_argument("--group_norm", action="store_true", help="GroupNorm backbone (pre-2026 default)")
    ap.add_argument("--horizon", type=int, default=64)
    ap.add_argument("--n_action_steps", type=int, default=32)
    ap.add_argument("--infer", action="store_true", help="time DDIM inference of one chunk at batch 1")
    ap.add_argument("--num_inference_steps", type=int, default=10)
    a = ap.parse_args()
    dev = prepare_device(a)
    s, crop = a.image_size, min(a.crop_shape, a.image_size)
    model = Diffusion(a.state_dim, a.action_dim, s, crop, a.group_norm).to(dev)
    params = [p for p in model.parameters() if p.requires_grad]
    b = 1 if a.infer else a.batch_size
    state = torch.randn(b, N_OBS_STEPS, a.state_dim, device=dev)
    images = torch.randn(b, N_OBS_STEPS, 1, 3, s, s, device=dev)
    action = torch.randn(b, a.horizon, a.action_dim, device=dev)
    autocast = lambda: torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.mixed_precision == "bf16")

    if a.infer:
        model.eval()

        def step():
            with autocast():
                return model.generate_actions(state, images, a.horizon, a.action_dim, a.num_inference_steps,
                                              a.n_action_steps)
    else:
        model.train()
        opt = torch.optim.Adam(params, lr=1e-4, betas=(0.95, 0.999), eps=1e-8, weight_decay=1e-6)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, cosine_with_warmup(500, 100000))

        def step():
            with autocast():
                loss = model.compute_loss(state, images, action)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 10.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            return loss.detach()

    n = sum(p.numel() for p in params)
    what = f"inference ({a.num_inference_steps} DDIM steps)" if a.infer else "step"
    crop_txt = f"{crop}x{crop} {'random ' if not a.infer else 'centre '}crop" if crop else "no crop"
    print(f"PyTorch {torch.__version__} Diffusion {what}: {n} parameters in {len(params)} tensors, batch {b}, "
          f"{s}x{s} image, {crop_txt}, horizon {a.horizon}, {'group' if a.group_norm else 'batch'} norm, "
          f"device {dev}, mixed_precision {a.mixed_precision}")
    time_and_report(step, dev, a.steps, a.warmup, b, unit="chunk" if a.infer else "step", per_sample=not a.infer)


if __name__ == "__main__":
    main()
