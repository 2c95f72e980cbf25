"""The scheduled functions as Lambda runs them: the packaged handler under the runtime interface
client (awslambdaric) from /var/task with the core layer in /opt, behind the real emulator, invoked
with the event EventBridge sends on their `Schedule`."""
from __future__ import annotations

import time
from decimal import Decimal

import pytest

from groundchat_testkit.local_lambda import invoke, load_template
from tests.lambda_shape.local_stack import build_package, chat_env, local_dynamo, require_local_lambda, start_function
from tests.spending.helpers import first_request, registry
from tests.spending.test_sweep_handler import SCHEDULED_EVENT


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tools = require_local_lambda()
    template = load_template()
    root = tmp_path_factory.mktemp("scheduled")
    build = build_package(root, tools)
    with local_dynamo() as db:
        sweep = start_function(template, "SweepFunction", build, root / "sweep", chat_env(db.endpoint, root / "home"))
        try:
            yield {"sweep": sweep, "db": db, "template": template}
        finally:
            sweep.stop()


async def test_the_sweep_releases_an_expired_reservation_from_its_scheduled_event(stack, settings):
    from groundchat.spending.budget_guard import BudgetGuard
    from groundchat.store.dynamo import Dynamo

    settings = settings.model_copy(update={"dynamodb_endpoint": stack["db"].endpoint})
    dynamo = Dynamo(settings)
    request = await first_request(registry(), "ann", "q", settings.max_output_tokens)
    crashed = BudgetGuard(dynamo, settings, "ann", "c1", "r1", "scripted", reservation_ttl_seconds=600,
                          clock=lambda: time.time() - 3600)
    stale = await crashed.reserve(request, 0)

    result = invoke(stack["sweep"], SCHEDULED_EVENT)

    assert result["count"] == 1, stack["sweep"].log()
    [released] = result["released"]
    assert released["reservation_id"] == stale.id and released["caller"] == "ann"
    assert Decimal(result["amount"]) == stale.amount
    # A second run finds nothing left to release.
    assert invoke(stack["sweep"], SCHEDULED_EVENT)["count"] == 0


def test_the_sweep_ran_under_the_runtime_interface_client_with_the_templates_handler(stack):
    sweep = stack["sweep"]
    assert sweep.config.handler == stack["template"]["Resources"]["SweepFunction"]["Properties"]["Handler"]
    assert not sweep.config.adapter_layer
    assert sweep.environment()["AWS_LAMBDA_FUNCTION_TIMEOUT"] == "300"
    assert any("REPORT RequestId" in line for line in sweep.output)
