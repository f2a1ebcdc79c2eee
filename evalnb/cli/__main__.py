"""``python -m evalnb.cli``: the ``evalnb`` command."""

import sys

from evalnb.cli import main

sys.exit(main())
