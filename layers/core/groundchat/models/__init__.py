"""The models an answer calls: the messages every adapter speaks, the adapter table, Bedrock
ConverseStream and OpenAI-compatible adapters, failures and retry (the offline answerer: offline/)."""
