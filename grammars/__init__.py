"""The Lark grammars: a top-level folder of the checkout, shipped in the wheel as
``pipeline.grammars`` (pyproject.toml maps it) and read with ``importlib.resources``."""
