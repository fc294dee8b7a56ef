"""The static site of a published dataset: ``build`` (the command: staging and swap),
``data`` (the published folder as the site reads it), ``index`` (anchors, names and
changes worked out once), ``pages`` (every page), ``report`` (the run report),
``scripts`` (the data the pages' scripts load), ``changes`` (what changed between two
releases, as the pages show it), ``html``, ``urls`` and ``chart`` (rendering helpers),
``templates/`` (Jinja templates, CSS and the two scripts)."""
