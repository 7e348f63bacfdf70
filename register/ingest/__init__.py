"""Data in and out: file checks, readers, validation, import batches, quarantine, revisions, exports."""
