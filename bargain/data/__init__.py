"""Data shipped with the package: the paper's scenarios (MIT, see LICENSE.scenarios) and its published per-cell
outcomes (paper_reference_cells.csv)."""
