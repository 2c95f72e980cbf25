"""The chat function: FastAPI app serving /api/chat (SSE), conversations, traces and the page."""
