"""The chat function's app fixtures, for checks seen through the endpoint."""
from tests.chat_function.conftest import make_env  # noqa: F401
