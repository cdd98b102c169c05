"""PyTorch eager peer of models/gpt (bench/gpt_bench.cc): the same GPT (token and position
embeddings, pre-LayerNorm blocks with causal attention and a tanh-GELU MLP, the output tied to the
embedding, no dropout), GPT-2's initialisation scheme, one training step = forward, backward,
clip_grad_norm_(1.0) and AdamW(betas=(0.9, 0.95), weight_decay=0.01), plain and with each block
under torch.utils.checkpoint. Prints, per config: the median step time in ms, and the peak bytes
of one step: the weights, optimizer state and batch live before it, plus how far the process's
resident memory rose above its level before the step (Linux's VmHWM, reset through clear_refs).
PyTorch's CPU allocator has no peak counter; the resident high-water mark measures what the step
held at once when freed blocks go back to the system, so run the memory measurement with
MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=0 (blocks over 64 KiB mapped and unmapped).

Run with Debian's python3-torch (/usr/bin/python3), 2 threads. Arguments: "time" (the median step
of `repetitions`, default 10, with MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296,
PyTorch's best case, as bench/torch_mlp.py) or "memory"."""
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CONFIGS = {  # name: (vocab, d_model, heads, seq, batch, layers), as bench/gpt_bench.cc
    "small": (96, 128, 4, 64, 16, 4),
    "issue": (96, 256, 4, 128, 16, 4),
}


class Block(torch.nn.Module):
    def __init__(self, d, heads, layers):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, 4 * d)
        self.proj = torch.nn.Linear(4 * d, d)
        for lin in (self.qkv, self.fc):
            torch.nn.init.normal_(lin.weight, std=0.02)
            torch.nn.init.zeros_(lin.bias)
        for lin in (self.out, self.proj):  # residual projections, as GPT-2
            torch.nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * layers))
            torch.nn.init.zeros_(lin.bias)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        p = F.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        return self.out((p @ v).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    def __init__(self, vocab, d, heads, seq, layers, remat):
        super().__init__()
        self.remat = remat
        self.wte = torch.nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(seq, d) * 0.02)
        self.blocks = torch.nn.ModuleList(Block(d, heads, layers) for _ in range(layers))
        self.lnf = torch.nn.LayerNorm(d)

    def forward(self, tokens, labels):
        x = self.wte[tokens] + self.wpe[: tokens.shape[1]]
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.remat else block(x)
        logits = self.lnf(x) @ self.wte.t()
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


def make_step(model, opt):
    def step(tokens, labels):
        opt.zero_grad(set_to_none=True)
        loss = model(tokens, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()
    return step


# The weights, the optimizer state and the batch: what is live before a step (the gradients are
# freed by zero_grad(set_to_none=True) at its start).
def state_bytes(model, opt, tensors):
    n = sum(p.numel() * p.element_size() for p in model.parameters())
    for s in opt.state.values():
        n += sum(v.numel() * v.element_size() for v in s.values() if torch.is_tensor(v))
    return n + sum(t.numel() * t.element_size() for t in tensors)


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


# How far resident memory rises during one step, from a level read with the previous step's
# gradients freed: the step frees them first (zero_grad(set_to_none=True)), and state_bytes does
# not count them, so a level read with them resident would leave them out of the peak.
def step_rss_growth(step, opt, tokens, labels):
    opt.zero_grad(set_to_none=True)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current VmRSS
    before = status_kib("VmRSS")
    step(tokens, labels)
    return (status_kib("VmHWM") - before) * 1024


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "time"
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    torch.set_num_threads(2)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name, (vocab, d, heads, seq, batch, layers) in CONFIGS.items():
        for remat in (False, True):
            torch.manual_seed(0)
            model = Gpt(vocab, d, heads, seq, layers, remat)
            opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), eps=1e-8,
                                    weight_decay=0.01)
            step = make_step(model, opt)
            g = torch.Generator().manual_seed(1)
            tokens = torch.randint(0, vocab, (batch, seq), generator=g)
            labels = torch.randint(0, vocab, (batch, seq), generator=g)
            for _ in range(2):
                step(tokens, labels)
            tag = "checkpoint" if remat else "plain"
            if mode == "memory":
                peak = state_bytes(model, opt, (tokens, labels)) + max(
                    step_rss_growth(step, opt, tokens, labels) for _ in range(3))
                print(f"pytorch_eager {name} {tag} peak_bytes {peak} ({peak / 2**20:.1f} MiB)")
                continue
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                step(tokens, labels)
                times.append((time.perf_counter() - t0) * 1e3)
            print(f"pytorch_eager {name} {tag} step_ms {statistics.median(times):.2f}")


if __name__ == "__main__":
    main()
