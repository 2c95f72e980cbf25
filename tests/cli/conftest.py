"""The CLI's tests use the fixtures of the wings whose commands they drive."""
from tests.benchmark.conftest import sample_lines  # noqa: F401
from tests.chat_function.conftest import make_env  # noqa: F401
from tests.spending.conftest import budget_settings, prices_file  # noqa: F401
