"""``python -m scenarist``: the same as the ``scenarist`` console script."""

from scenarist.cli._entry import main

raise SystemExit(main())
