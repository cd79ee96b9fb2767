"""Import-only stand-in for PyMuPDF on a GPU machine without it (bench/gpu_speculative.sh):
the speculative-decoding bench never opens a PDF, it only imports modules that name pymupdf at import
time. Any attribute is a permissive dummy; calling into it for real would be a bug in the bench."""


class _Any:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Any()

    def __getattr__(self, name):
        return _Any()

    def __getitem__(self, key):
        return _Any()

    def __or__(self, other):
        return 0

    __ror__ = __or__

    def __class_getitem__(cls, key):
        return cls


def __getattr__(name):
    if name.isupper():
        return 0
    return _Any


VersionBind = "2.0"
