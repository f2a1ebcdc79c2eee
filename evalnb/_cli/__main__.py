"""``python -m evalnb._cli``: the ``evalnb`` command."""

import sys

from evalnb._cli import main

sys.exit(main())
