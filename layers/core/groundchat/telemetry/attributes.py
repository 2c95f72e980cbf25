"""Attribute, span and metric names: the GenAI semantic conventions' (Development status, as
published with semantic-conventions v1.41) and groundchat's own under `groundchat.*`."""
from __future__ import annotations

# GenAI: every span
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
CONVERSATION = "gen_ai.conversation.id"
ERROR_TYPE = "error.type"
# operations
OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
OP_RETRIEVAL = "retrieval"
# the agent (the answer)
AGENT_NAME = "gen_ai.agent.name"
# a model step
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
# content: opt-in only (telemetry/content.py)
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
# a tool call
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
# a retrieval (our search)
DATA_SOURCE = "gen_ai.data_source.id"
RETRIEVAL_QUERY = "gen_ai.retrieval.query.text"
# metrics
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
TOKEN_TYPE = "gen_ai.token.type"

# groundchat's own
RUN_ID = "groundchat.run.id"
ANSWER_OUTCOME = "groundchat.answer.outcome"
ANSWER_COST = "groundchat.answer.cost_usd"
STEP = "groundchat.step"
STEP_COST = "groundchat.step.cost_usd"
TOOL_OUTCOME = "groundchat.tool.outcome"
SEARCH_OUTCOME = "groundchat.search.outcome"
SEARCH_REASON = "groundchat.search.reason"
SEARCH_LEG = "groundchat.search.leg"
SEARCH_HITS = "groundchat.search.hits"
SEARCH_PASSAGES = "groundchat.search.passages"
SPEND_PHASE = "groundchat.spend.phase"
SPEND_AMOUNT = "groundchat.spend.amount_usd"
SPEND_OUTCOME = "groundchat.spend.outcome"
REFUSAL_CODE = "groundchat.refusal.code"
FEEDBACK_RATING = "groundchat.feedback.rating"
FEEDBACK_REASON = "groundchat.feedback.reason"
