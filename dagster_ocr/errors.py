"""Error hierarchy: bad input (the document's fault) versus engine defects (ours or the host's).

Bad input is recorded on the document (status + reason) and never retried; an ``EngineError``
is a transient or internal failure that a retry may fix.
"""

from __future__ import annotations


class DagsterOcrError(Exception):
    """Base class of every error this package raises on purpose."""


class BadInputError(DagsterOcrError):
    """The document itself cannot be parsed. ``code`` is a stable machine-readable reason."""

    code = "bad_input"
    #: the status a document with this error ends in (see ``model.DocStatus``)
    status = "failed"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    @property
    def reason(self) -> str:
        """``code: message``, the text stored in ``documents.error``."""
        return f"{self.code}: {self.message}"


class EmptyInputError(BadInputError):
    code = "empty_file"


class CorruptInputError(BadInputError):
    code = "corrupt"


class EncryptedInputError(BadInputError):
    code = "encrypted"


class UnsupportedInputError(BadInputError):
    code = "unsupported_type"


class OverLimitError(BadInputError):
    code = "over_limit"


class EngineError(DagsterOcrError):
    """A failure of an engine (OCR model, database) rather than of the document: may be retried."""
