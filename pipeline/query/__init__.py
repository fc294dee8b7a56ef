"""Reading a published ``out/``: ``dataset`` is its one reader (the tables as
DataFrames for users; ``Published``, the handle on ``rules.sqlite`` the
commands use), and ``trace`` (trace, resolve), ``diff`` and ``search`` answer
from it. Nothing here imports the stages that made the dataset."""
