"""The runs tests' fixtures (the sample, a writer and the queries over moto), for the store's tests."""
from tests.benchmark.conftest import queries, sample_lines, writer  # noqa: F401
