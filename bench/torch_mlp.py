"""PyTorch eager on block/mlp's step: loss = mean((gelu_tanh(x @ W1) @ W2 - t)^2), value and grad
w.r.t. W1 and W2, plain and with torch.utils.checkpoint around the hidden layer. Prints the median
step time of each in ms. Run with Debian's python3-torch (/usr/bin/python3), ideally with
MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 (PyTorch's best case)."""
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def hidden(x, w1):
    return F.gelu(x @ w1, approximate="tanh")


def step(x, w1, w2, t, remat):
    h = checkpoint(hidden, x, w1, use_reentrant=False) if remat else hidden(x, w1)
    loss = ((h @ w2 - t) ** 2).mean()
    g1, g2 = torch.autograd.grad(loss, (w1, w2))
    return loss, g1, g2


def median_ms(fn, reps):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    torch.manual_seed(0)
    x = torch.randn(64, 512)
    t = torch.randn(64, 512)
    w1 = (torch.randn(512, 8192) * 0.02).requires_grad_()
    w2 = (torch.randn(8192, 512) * 0.02).requires_grad_()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for remat in (False, True):
        ms = median_ms(lambda: step(x, w1, w2, t, remat), reps)
        print(f"pytorch_eager{'_checkpoint' if remat else ''}_step_ms {ms:.3f}")


if __name__ == "__main__":
    main()
