"""Reading one source at a time: raw bytes to a ``Source`` and its ``Element`` list.

In the order a file meets them: ``decode`` (encoding, newlines, repairs), ``markup``
(HTML and markdown dumps to text), ``parse`` (the Lark grammar types each line),
``layout`` (a document's regions and hard wrap), ``assemble`` (typed lines to
elements), ``describe`` (format, effective date, era), ``checks`` (the self-checks
of one source and of a release). Nothing here needs another source: the job runs
this stage in parallel, one file per task, and caches it.
"""
