"""The typed IR: nodes, the intrinsic table, a printer and a validator."""

from .nodes import *  # noqa: F401,F403
