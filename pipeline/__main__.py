"""``python -m pipeline``."""

from pipeline.cli import main

main()
