"""Reading games after the fact: per-cell metrics, the paper's published cells and judge, the
claim checker, figures, and the study's models (design, reml, models, marginal). Pure
computations over the engine's records; storage, reports over stored games and the command
line sit above.
"""
