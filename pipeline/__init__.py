"""Rules-dump ingestion: Comprehensive Rules and FAQ dumps to one canonical dataset.

For downstream code, ``pipeline.load("out")`` returns the published tables as
pandas DataFrames typed by ``out/datapackage.json`` (numbers and ids are
strings); pandas is imported only when it is called.
"""

__version__ = "0.1.0"

from pipeline.errors import DatasetError  # noqa: E402  (standard library only)
from pipeline.query.frames import Tables, load  # noqa: E402  (light: pandas loads on first use)

__all__ = ["DatasetError", "Tables", "__version__", "load"]
