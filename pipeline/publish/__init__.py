"""Publishing: derive the rows of every table once, then write them; writers only serialise.

``rows`` derives every table of the contract (``tables``) from a built corpus
(``keywords`` the keywords table's); ``emit`` hands each table's rows to the
writers, ``csv``, ``parquet`` and ``sqlite`` (and ``json`` for ``rules.json``),
with what the files say of themselves (``meta``), then writes the dataset card
(``card``) and Datasette's metadata (``datasette``); ``datapackage`` describes
what was written, and ``checksums`` lists every file's sha256; ``notice`` holds
the data notice and licences; ``folder`` keeps the output folder safe (marker,
lock, staging, swap).
Nothing here imports the composer, the job, the queries, the site or the tools.
"""
