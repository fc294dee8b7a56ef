"""Rules-dump ingestion: Comprehensive Rules and FAQ dumps to one canonical dataset."""

__version__ = "0.1.0"
