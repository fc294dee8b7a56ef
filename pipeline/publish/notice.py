"""The data notice and the licences: one wording, used by the dataset card,
``datapackage.json`` and the site's footer (the contract's "data notice")."""

from __future__ import annotations

# Whose the rules text is, and on what terms this project republishes it.
NOTICE = (
    "The Magic: The Gathering Comprehensive Rules text is Wizards of the Coast's, "
    "used under its Fan Content Policy. This project is not affiliated with or "
    "endorsed by Wizards of the Coast."
)
FAN_CONTENT_POLICY = "https://company.wizards.com/en/legal/fancontentpolicy"

# The project's own code (pipeline/, grammars/, tests/): the LICENSE file at the root.
CODE_LICENSE = "MIT"
