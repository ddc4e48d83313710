"""One optimisation phase of the trainer on fixed samples, for tests/test_train_batch.py.

Run alone or under `accelerate launch --num_processes N`: every process builds the same 20 samples, keeps its
contiguous share (as `split_between_processes` shares out a step's groups), and the trainer's own functions pool
them, compute the log-probs and run the epochs. The main process writes the metrics and a checksum of the
trained adapter as JSON to the path given.
"""

from __future__ import annotations

import json
import sys

import torch
from accelerate import Accelerator

from train import config as configuration
from train.samples import Sample
from train.trainer import fill_pool_logprobs, load_model, optimise, pool_of


def main(model_dir: str, out: str) -> None:
    from transformers import get_cosine_schedule_with_warmup

    cfg = configuration.TrainConfig(
        model=model_dir,
        batch_size=8,
        mini_batch=4,
        epochs=2,
        lora_rank=4,
        lora_alpha=8,
        learning_rate=1e-2,
        old_logprobs="before_epochs",
        variant="phase",
    )
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)  # the same fresh adapter on every process
    model, tokenizer = load_model(cfg, accelerator)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.learning_rate)
    layout = configuration.batch_layout(cfg, accelerator.num_processes)
    model, optimizer = accelerator.prepare(model, optimizer)
    generator = torch.Generator().manual_seed(1)
    vocab = len(tokenizer)
    everything = [
        Sample(
            torch.randint(3, vocab, (6 + i % 3,), generator=generator).tolist(),
            torch.randint(3, vocab, (3 + i % 2,), generator=generator).tolist(),
            float(i % 5 - 2) + 0.3,
        )
        for i in range(20)
    ]
    with accelerator.split_between_processes(everything) as mine:
        pool = pool_of(list(mine), accelerator)
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.eval()
    for reference in (True, False):
        fill_pool_logprobs(unwrapped, pool, accelerator, tokenizer.pad_token_id, layout.mini_batch, reference)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 0, 100)
    result = optimise(cfg, layout, model, optimizer, scheduler, accelerator, pool, tokenizer.pad_token_id, seed=5)
    checksum = sum(float(p.detach().double().sum()) for n, p in unwrapped.named_parameters() if "lora_" in n)
    if accelerator.is_main_process:
        with open(out, "w") as handle:
            json.dump(
                {
                    **result,
                    "checksum": checksum,
                    "world_size": layout.world_size,
                    "per_device": layout.per_device,
                    "accumulation": layout.accumulation,
                },
                handle,
            )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
