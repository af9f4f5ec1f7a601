# The OOM404 probe's workload (runtime_check/probes.cpp, probe404) as Python code states it, at
# the H200 run's sizes: a float32 cross-entropy over bf16 logits of B·T·V under autocast.
import torch
import torch.nn.functional as F

BATCH = 32
SEQ = 2048
VOCAB = 32000

logits = torch.randn(BATCH, SEQ, VOCAB, device="cuda", dtype=torch.bfloat16, requires_grad=True)
target = torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda")

for step in range(9):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), target.view(-1))
    loss.backward()
    logits.grad = None
