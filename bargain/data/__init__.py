"""Data shipped with the package: the paper's scenarios (MIT, see LICENSE.scenarios)."""
