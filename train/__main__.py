"""`python -m train --config CONFIG [--field value ...] [--resume DIR]`, `python -m train best RUN_DIR`, or
`python -m train plan --config CONFIG [--steps N] [--field value ...]` (the groups and validation games, no model).

Multi-GPU (data parallel): `accelerate launch -m train --config ...`.
"""

from __future__ import annotations

import argparse
import sys

from train import config as configuration


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plan"]:
        from train.plan import main as plan

        return plan(argv[1:])
    if argv[:1] == ["best"]:
        from train.best import best

        parser = argparse.ArgumentParser(
            prog="python -m train best",
            description="The checkpoint the reference would pick: the step with the "
            "highest validation reward of the trained side over its training conditions (ALL rows of "
            "validation.csv); for joint runs the seller's, as the released joint adapters were chosen.",
        )
        parser.add_argument("run_dir")
        parser.add_argument(
            "--metric",
            default="reward",
            help="another column of validation.csv to rank by, e.g. "
            "deal_rate or buyer_reward (default: reward, the judged side's)",
        )
        args = parser.parse_args(argv[1:])
        try:
            step, path, value, top = best(args.run_dir, args.metric)
        except (FileNotFoundError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(top.to_string(float_format=lambda x: f"{x:.4f}"))
        print(f"best step {step}: {args.metric} {value:.4f}\n{path}")
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m train",
        description="Train a bargaining adapter with GRPO or CISPO "
        "(docs/TRAINING.md). Every config field can be overridden by its flag.",
    )
    parser.add_argument(
        "--config", help="a YAML file, or a preset by name (buyer-grpo, ..., joint-cispo: train/configs/NAME.yaml)"
    )
    parser.add_argument("--resume", help="a run directory or checkpoint to continue from")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    configuration.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        cfg = configuration.load(args.config, configuration.overrides_from(args))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from bargain.agents.backends import BackendError
    from train.trainer import LayoutError, ModelError, run

    try:
        result = run(cfg, resume=args.resume, progress=not args.quiet)
    except (ModelError, LayoutError, BackendError, FileNotFoundError) as exc:  # a missing server, model or checkpoint
        print(f"error: {exc}", file=sys.stderr)
        return 2
    last = result.metrics[-1] if result.metrics else {}
    print(f"{len(result.metrics)} steps in {result.directory}; last reward {last.get('reward', float('nan')):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
