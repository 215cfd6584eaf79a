"""`python -m pyshader_tx FILE.py ...`: the command line (see `pyshader_tx.cli`).

`main` is also the `pyshader-tx` console script's entry point.
"""

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
