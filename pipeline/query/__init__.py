"""Reading a published ``out/``: ``frames`` (the tables as DataFrames for users)
and ``dataset`` (its CSV records, and ``Published``, the handle on
``rules.sqlite`` the commands use) are its one reader; ``trace`` (trace,
resolve), ``diff`` and ``search`` answer from it. Nothing here imports the
stages that made the dataset."""
