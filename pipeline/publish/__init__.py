"""Publishing: derive the rows of every table once, then write them; writers only serialise.

``rows`` derives every table of the contract (``tables``) from a built corpus;
``emit`` hands each table's rows to the writers, ``csv``, ``parquet`` and
``sqlite`` (and ``json`` for ``rules.json``); ``datapackage`` describes what was
written; ``folder`` keeps the output folder safe (marker, lock, staging, swap).
Nothing here imports the composer, the job, the queries, the site or the tools.
"""
