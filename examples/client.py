#!/usr/bin/env python3
"""The tilesmith client from a checkout, without installing it: a thin use of clients/python.

    examples/client.py [--url URL] [--token-file F] query FILE [--target T] [--tune]
    examples/client.py [--url URL] tune FILE [--target T] [--budget N] [--strategy S] [--wait S]
    examples/client.py [--url URL] batch FILE... [--target T]
    examples/client.py [--url URL] jobs ID... [--wait S] [--cancel]
    examples/client.py [--url URL] kernels [--target T]
    examples/client.py [--url URL] devices

The same as the `tilesmith-client` command that `pip install clients/python` installs
(`tilesmith-client --help`); the library is `tilesmith_client.Client`.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients",
                                "python", "src"))

from tilesmith_client.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
