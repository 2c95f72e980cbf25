"""What the Lambda-shaped tests share: a context object with the attributes Lambda passes and
Powertools' Logger reads."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LambdaContext:
    function_name: str = "groundchat-test"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:groundchat-test"
    aws_request_id: str = "5d1c7a9e-0000-4000-8000-000000000001"
