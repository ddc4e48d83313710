"""Backend: transformers + peft in this process, for a GPU without vLLM and for small models on CPU.

The base model is loaded once and every requested adapter is loaded onto it by name. Requests
from many concurrent games wait in one queue; a worker takes everything waiting and runs one
`generate` call per sampling setting, with mixed adapters in the batch (peft's per-row
`adapter_names`, `__base__` for the base model), so games on different arms share a forward
pass. Generation runs in a worker thread, so the event loop (and a web UI on it) stays
responsive; on a ZeroGPU Space each batch runs with a GPU attached (`hardware`), and on a
dedicated GPU the batch is capped to what the card's memory holds. Qwen3's chat template is
applied with `enable_thinking=False`; vLLM's presence penalty, which transformers lacks, is a
small logits processor.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bargain.agents.backends import BackendError, Completion, Request, Sampling
from bargain.agents.backends.hardware import batch_seconds, fit_batch, gpu_function, on_zero_gpu, plan, prepare_zero_gpu

BASE_ADAPTER = "__base__"  # peft's name for "no adapter" in a mixed batch


def presence_penalty_processor(penalty: float, prompt_length: int):
    """A logits processor subtracting `penalty` from every token already generated (as vLLM does)."""
    import torch
    from transformers import LogitsProcessor

    class PresencePenalty(LogitsProcessor):
        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.Tensor:
            generated = input_ids[:, prompt_length:]  # (B, T_new); prompts are left-padded to one length
            if generated.shape[1] == 0:
                return scores
            seen = torch.zeros_like(scores, dtype=torch.bool).scatter_(1, generated, True)  # (B, V)
            return scores - penalty * seen.to(scores.dtype)

    return PresencePenalty()


def pick_device(device: str | None) -> str:
    """`cuda` when a GPU is there (on ZeroGPU: always; it is attached when generating), else `cpu`, unless told
    otherwise."""
    import torch

    return device or ("cuda" if on_zero_gpu() or torch.cuda.is_available() else "cpu")


def pick_dtype(dtype: str | None, device: str):
    """bf16 on a GPU that supports it (ZeroGPU's do), float32 on CPU, unless told otherwise."""
    import torch

    if dtype and dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda") and (on_zero_gpu() or torch.cuda.is_bf16_supported()):
        return torch.bfloat16
    return torch.float32


class HFBackend:
    """Generation with transformers + peft; one base model, any number of adapters."""

    name = "hf"

    def __init__(
        self,
        model: str,
        adapters: Mapping[str, str | Path] | None = None,
        device: str | None = None,
        dtype: str | None = None,
        max_batch: int = 64,
        revision: str | None = None,
    ):
        prepare_zero_gpu()  # before torch touches CUDA
        from transformers import AutoModelForCausalLM, AutoTokenizer

        device = pick_device(device)
        torch_dtype = pick_dtype(dtype, device)
        try:
            tokenizer = AutoTokenizer.from_pretrained(model, revision=revision)
            base = AutoModelForCausalLM.from_pretrained(model, revision=revision, dtype=torch_dtype)
        except OSError as exc:
            raise BackendError(
                f"cannot load the model {model!r} ({exc}); pass a Hub id or a local directory "
                "with --model (offline: set HF_HUB_OFFLINE=1 and use a cached or local copy)"
            ) from exc
        adapters = dict(adapters or {})
        if adapters:
            from peft import PeftModel

            (first, path), *rest = adapters.items()
            peft = PeftModel.from_pretrained(base, str(path), adapter_name=first)
            for name, path in rest:
                peft.load_adapter(str(path), adapter_name=name)
            loaded: Any = peft
        else:
            loaded = base
        if device.startswith("cuda") and not on_zero_gpu():  # ZeroGPU's slice is attached later, and is large
            import torch

            weights = sum(p.numel() * p.element_size() for p in loaded.parameters())
            memory = plan(base.config, weights, torch_dtype.itemsize)
            free, _ = torch.cuda.mem_get_info(torch.device(device))
            max_batch = fit_batch(memory, free, max_batch, torch.cuda.get_device_name(torch.device(device)))
        loaded.to(device)  # on ZeroGPU `spaces` defers the move until a GPU is attached
        self._setup(loaded, tokenizer, list(adapters), model, device, max_batch)

    @classmethod
    def of(cls, model, tokenizer, adapters: list[str], model_id: str, max_batch: int = 64) -> HFBackend:
        """A backend over a model already in memory (the trainer's: its rollouts use the weights it trains)."""
        backend = cls.__new__(cls)
        backend._setup(model, tokenizer, adapters, model_id, str(next(model.parameters()).device), max_batch)
        return backend

    def _setup(self, model, tokenizer, adapters: list[str], model_id: str, device: str, max_batch: int) -> None:
        import torch

        self.model, self.tokenizer, self.model_id, self.device = model, tokenizer, model_id, device
        self.dtype = next(model.parameters()).dtype
        self.adapters = set(adapters)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.revision = getattr(model.config, "_commit_hash", None)
        self.model.eval()
        eos = model.generation_config.eos_token_id
        self.eos_ids = sorted(
            {*(eos if isinstance(eos, list) else [eos] if eos is not None else []), self.tokenizer.eos_token_id}
        )
        self.max_batch = max_batch
        self._torch = torch
        # On ZeroGPU, with a GPU attached while it runs, for what each batch needs.
        self._generate = gpu_function(self.generate_batch, duration=batch_seconds)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[Request, asyncio.Future]] = asyncio.Queue()  # remade for each event loop

    # --- the Backend interface ---------------------------------------------------------------

    def model_name(self, arm) -> str:
        """`__base__` for the base model, else the adapter's name."""
        return BASE_ADAPTER if arm.kind == "base" else arm.name

    async def available(self, arm) -> bool:
        """The base model always; an adapter when it was loaded."""
        return arm.kind == "base" or (arm.kind == "adapter" and arm.name in self.adapters)

    def describe(self) -> dict:
        """For the records."""
        return {
            "backend": "hf",
            "base_model": self.model_id,
            "revision": self.revision,
            "device": self.device,
            "dtype": str(self.dtype).removeprefix("torch."),
            "adapters": sorted(self.adapters),
        }

    async def complete(self, request: Request) -> Completion:
        """Queue the request; the worker answers it in the next batch."""
        if request.model != BASE_ADAPTER and request.model not in self.adapters:
            raise BackendError(
                f"adapter {request.model!r} is not loaded in the hf backend "
                f"(loaded: {', '.join(self.adapters) or 'none'})"
            )
        queue = self._queue_for_this_loop()
        future = asyncio.get_running_loop().create_future()
        queue.put_nowait((request, future))
        return await future

    # --- batching ----------------------------------------------------------------------------

    def _queue_for_this_loop(self) -> asyncio.Queue:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._queue = loop, asyncio.Queue()
            self._worker = loop.create_task(self._work())
        return self._queue

    async def _work(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < self.max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            groups: dict[Sampling, list] = {}
            for request, future in batch:
                groups.setdefault(request.sampling, []).append((request, future))
            for sampling, items in groups.items():
                try:
                    results = await asyncio.to_thread(self._generate, [r for r, _ in items], sampling)
                except Exception as exc:  # handed to every waiting game, which records it
                    for _, future in items:
                        if not future.done():
                            future.set_exception(BackendError(f"hf generation failed: {type(exc).__name__}: {exc}"))
                    continue
                for (_, future), result in zip(items, results):
                    if not future.done():
                        future.set_result(result)

    def prompt_text(self, request: Request) -> str:
        """The chat rendered by the model's template, thinking off, generation prompt on."""
        return self.tokenizer.apply_chat_template(
            list(request.messages), tokenize=False, add_generation_prompt=True, enable_thinking=False
        )

    def generate_batch(self, requests: list[Request], sampling: Sampling) -> list[Completion]:
        """One `generate` call for requests sharing a sampling setting (adapters may differ)."""
        torch = self._torch
        start = time.perf_counter()
        encoded = self.tokenizer(
            [self.prompt_text(r) for r in requests], return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self.device)
        prompt_length = encoded["input_ids"].shape[1]
        options = dict(
            max_new_tokens=sampling.max_tokens, pad_token_id=self.tokenizer.pad_token_id, eos_token_id=self.eos_ids
        )
        if sampling.temperature > 0:
            options.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k)
        else:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if sampling.presence_penalty:
            from transformers import LogitsProcessorList

            options["logits_processor"] = LogitsProcessorList(
                [presence_penalty_processor(sampling.presence_penalty, prompt_length)]
            )
        if self.adapters:
            options["adapter_names"] = [r.model for r in requests]
        with torch.inference_mode():
            output = self.model.generate(**encoded, **options)  # (B, prompt_length + T_new)
        latency = time.perf_counter() - start
        completions = []
        for row, request in enumerate(requests):
            tokens = output[row, prompt_length:].tolist()
            ends = [i for i, t in enumerate(tokens) if t in self.eos_ids]
            length = ends[0] + 1 if ends else len(tokens)
            completions.append(
                Completion(
                    text=self.tokenizer.decode(tokens[:length], skip_special_tokens=True),
                    prompt_tokens=int(encoded["attention_mask"][row].sum()),
                    completion_tokens=length,
                    latency_s=latency,
                    model=request.model,
                    finish_reason="stop" if ends else "length",
                    revision=self.revision,
                )
            )
        return completions
