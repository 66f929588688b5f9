"""`python -m tilesmith_client`: the same as the `tilesmith-client` command."""

import sys

from .cli import main

sys.exit(main())
