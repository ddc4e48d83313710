"""`python -m bargain`: see bargain.cli."""

import sys

from bargain.cli import main

sys.exit(main())
