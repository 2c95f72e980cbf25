"""Model adapters: Bedrock ConverseStream, OpenAI-compatible, and the offline answerer."""
