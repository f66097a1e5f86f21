#!/usr/bin/env python3
"""The PyTorch peer of bench_train_step: one ACT training step as LeRobot runs it.

LeRobot's ACT structure written out here (not imported, so it runs with torch + torchvision only):
a torchvision ResNet18 trunk with frozen batch norm, a 1x1 projection, 2-D sinusoidal positions,
a post-norm transformer encoder (4 layers) and decoder (1 layer) of nn.MultiheadAttention, the VAE
encoder (4 layers, CLS token), L1 + 10 * KL loss; AdamW with LeRobot's ACT preset (lr 1e-5, weight
decay 1e-4, backbone group), clip_grad_norm_ 10, TF32 on CUDA, autocast for bf16. Each optimizer
and clip runs with PyTorch's own default implementation choice (foreach on CUDA, per tensor on
CPU), as LeRobot leaves it. The batch stays on the device; the step reads nothing back.

  python3 peer.py --batch_size=8 --image_size=96 --device=cpu --state_dim=2 --action_dim=2
Print-out matches bench_train_step's (ms/step median/mean/min, samples/s, parameters).
"""
import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn
import torchvision
from torchvision.ops.misc import FrozenBatchNorm2d

from peer_common import add_common_args, prepare_device, time_and_report


def sinusoid_1d(n, d):
    pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(d, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, 2 * (i // 2) / d)
    out = torch.empty(n, d, dtype=torch.float64)
    out[:, 0::2] = torch.sin(angle[:, 0::2])
    out[:, 1::2] = torch.cos(angle[:, 1::2])
    return out.float()


def sinusoid_2d(h, w, d):
    # DETR-style: half the channels for y, half for x, normalised to 2*pi, temperature 10000.
    half = d // 2
    eps, scale = 1e-6, 2 * math.pi
    y = torch.arange(1, h + 1, dtype=torch.float32).view(h, 1).expand(h, w)
    x = torch.arange(1, w + 1, dtype=torch.float32).view(1, w).expand(h, w)
    y = y / (h + eps) * scale
    x = x / (w + eps) * scale
    dim_t = 10000.0 ** (2 * (torch.arange(half, dtype=torch.float32) // 2) / half)
    px, py = x[..., None] / dim_t, y[..., None] / dim_t
    px = torch.stack((px[..., 0::2].sin(), px[..., 1::2].cos()), dim=3).flatten(2)
    py = torch.stack((py[..., 0::2].sin(), py[..., 1::2].cos()), dim=3).flatten(2)
    return torch.cat((py, px), dim=2).permute(2, 0, 1)  # (d, h, w)


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ff, p):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, dropout=p)
        self.linear1, self.linear2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.dropout, self.dropout1, self.dropout2 = nn.Dropout(p), nn.Dropout(p), nn.Dropout(p)

    def forward(self, x, pos=None, key_padding_mask=None):
        q = k = x if pos is None else x + pos
        x = self.norm1(x + self.dropout1(self.self_attn(q, k, value=x, key_padding_mask=key_padding_mask)[0]))
        return self.norm2(x + self.dropout2(self.linear2(self.dropout(F.relu(self.linear1(x))))))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, ff, p):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, dropout=p)
        self.multihead_attn = nn.MultiheadAttention(d, heads, dropout=p)
        self.linear1, self.linear2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.dropout = nn.Dropout(p)
        self.dropout1, self.dropout2, self.dropout3 = nn.Dropout(p), nn.Dropout(p), nn.Dropout(p)

    def forward(self, x, mem, pos, mem_pos):
        q = k = x + pos
        x = self.norm1(x + self.dropout1(self.self_attn(q, k, value=x)[0]))
        x = self.norm2(x + self.dropout2(self.multihead_attn(x + pos, mem + mem_pos, value=mem)[0]))
        return self.norm3(x + self.dropout3(self.linear2(self.dropout(F.relu(self.linear1(x))))))


class ACT(nn.Module):
    def __init__(self, state_dim, action_dim, chunk=100, d=512, heads=8, ff=3200, enc=4, dec=1, vae_enc=4,
                 latent=32, p=0.1):
        super().__init__()
        self.chunk, self.latent = chunk, latent
        trunk = torchvision.models.resnet18(weights=None, norm_layer=FrozenBatchNorm2d)
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])  # conv1 ... layer4
        self.vae_encoder = nn.ModuleList(EncoderLayer(d, heads, ff, p) for _ in range(vae_enc))
        self.vae_encoder_cls_embed = nn.Embedding(1, d)
        self.vae_encoder_robot_state_input_proj = nn.Linear(state_dim, d)
        self.vae_encoder_action_input_proj = nn.Linear(action_dim, d)
        self.vae_encoder_latent_output_proj = nn.Linear(d, 2 * latent)
        self.register_buffer("vae_pos", sinusoid_1d(2 + chunk, d).unsqueeze(0))
        self.encoder = nn.ModuleList(EncoderLayer(d, heads, ff, p) for _ in range(enc))
        self.decoder = nn.ModuleList(DecoderLayer(d, heads, ff, p) for _ in range(dec))
        self.decoder_norm = nn.LayerNorm(d)
        self.encoder_robot_state_input_proj = nn.Linear(state_dim, d)
        self.encoder_latent_input_proj = nn.Linear(latent, d)
        self.encoder_img_feat_input_proj = nn.Conv2d(512, d, kernel_size=1)
        self.encoder_1d_feature_pos_embed = nn.Embedding(2, d)
        self.decoder_pos_embed = nn.Embedding(chunk, d)
        self.action_head = nn.Linear(d, action_dim)

    def forward(self, image, state, action, action_is_pad):
        b = state.shape[0]
        # VAE encoder over [CLS, state, actions].
        tokens = torch.cat([self.vae_encoder_cls_embed.weight.unsqueeze(0).expand(b, -1, -1),
                            self.vae_encoder_robot_state_input_proj(state).unsqueeze(1),
                            self.vae_encoder_action_input_proj(action)], dim=1).transpose(0, 1)
        pad = torch.cat([torch.zeros(b, 2, dtype=torch.bool, device=state.device), action_is_pad], dim=1)
        pos = self.vae_pos.transpose(0, 1).to(tokens.dtype)
        x = tokens
        for layer in self.vae_encoder:
            x = layer(x, pos, key_padding_mask=pad)
        params = self.vae_encoder_latent_output_proj(x[0])
        mu, log_sigma_x2 = params[:, : self.latent], params[:, self.latent:]
        z = mu + log_sigma_x2.div(2).exp() * torch.randn_like(mu)
        # Transformer encoder over [latent, state, camera features].
        feat = self.encoder_img_feat_input_proj(self.backbone(image))
        cam_pos = sinusoid_2d(feat.shape[2], feat.shape[3], feat.shape[1]).to(feat.device, feat.dtype)
        feat = feat.flatten(2).permute(2, 0, 1)
        cam_pos = cam_pos.flatten(1).t().unsqueeze(1)
        enc_in = torch.cat([self.encoder_latent_input_proj(z).unsqueeze(0),
                            self.encoder_robot_state_input_proj(state).unsqueeze(0), feat])
        enc_pos = torch.cat([self.encoder_1d_feature_pos_embed.weight.unsqueeze(1), cam_pos])
        x = enc_in
        for layer in self.encoder:
            x = layer(x, enc_pos)
        y = torch.zeros(self.chunk, b, x.shape[-1], dtype=x.dtype, device=x.device)
        dec_pos = self.decoder_pos_embed.weight.unsqueeze(1)
        for layer in self.decoder:
            y = layer(y, x, dec_pos, enc_pos)
        pred = self.action_head(self.decoder_norm(y).transpose(0, 1))
        l1 = (F.l1_loss(action, pred, reduction="none") * ~action_is_pad.unsqueeze(-1)).mean()
        kld = (-0.5 * (1 + log_sigma_x2 - mu.pow(2) - log_sigma_x2.exp())).sum(-1).mean()
        return l1 + 10.0 * kld


def main():
    ap = argparse.ArgumentParser()
    add_common_args(ap, batch_size=8)
    ap.add_argument("--image_size", type=int, default=96)
    a = ap.parse_args()
    dev = prepare_device(a)
    model = ACT(a.state_dim, a.action_dim).to(dev).train()
    backbone = [p for n, p in model.named_parameters() if n.startswith("backbone") and p.requires_grad]
    rest = [p for n, p in model.named_parameters() if not n.startswith("backbone") and p.requires_grad]
    opt = torch.optim.AdamW([{"params": rest}, {"params": backbone, "lr": 1e-5}], lr=1e-5, weight_decay=1e-4)
    params = [p for p in model.parameters() if p.requires_grad]
    b, s = a.batch_size, a.image_size
    image = torch.randn(b, 3, s, s, device=dev)
    state = torch.randn(b, a.state_dim, device=dev)
    action = torch.randn(b, 100, a.action_dim, device=dev)
    is_pad = torch.zeros(b, 100, dtype=torch.bool, device=dev)
    is_pad[:, 90:] = True

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.mixed_precision == "bf16"):
            loss = model(image, state, action, is_pad)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 10.0)
        opt.step()
        opt.zero_grad()
        return loss.detach()

    n = sum(p.numel() for p in params)
    print(f"PyTorch {torch.__version__} ACT step: {n} parameters in {len(params)} tensors, batch {b}, {s}x{s} image, "
          f"device {dev}, mixed_precision {a.mixed_precision}")
    time_and_report(step, dev, a.steps, a.warmup, b)


if __name__ == "__main__":
    main()
