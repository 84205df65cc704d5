"""The ``scenarist`` command line (Typer, from the ``cli`` extra); see ``scenarist --help``.

Nothing here is imported by ``import scenarist``; the console script enters through
:func:`main`, which says what to install when Typer is missing.
"""

from scenarist.cli._entry import main

__all__ = ["main"]
