"""Helpers only tests and benches use (tiny models, text metrics); not shipped with the package."""
