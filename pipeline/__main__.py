"""``python -m pipeline``; Ctrl-C even while the modules load exits 130 without a traceback."""

import sys

try:
    from pipeline.cli import main

    main()
except KeyboardInterrupt:
    sys.stderr.write("Error: interrupted\n")
    sys.exit(130)
