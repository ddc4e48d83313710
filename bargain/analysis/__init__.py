"""Reading games after the fact: per-cell metrics, the paper's published cells and judge, the
claim checker, figures. Pure computations over the engine's records; storage, reports over
stored games and the command line sit above.
"""
