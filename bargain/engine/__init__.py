"""The pure engine: trials, scenarios, the rules, outcomes, the prompts and reading replies.

No I/O beyond reading the bundled data, no clock, no global randomness: a seed in, the same
trials and games out. Nothing here imports any other part of the project.
"""
