"""The RL trainer that produces bargaining adapters (docs/TRAINING.md): GRPO or CISPO on LoRA, rollouts
played by bargain's own engine and agents. `python -m train --config train/configs/<variant>.yaml`."""
