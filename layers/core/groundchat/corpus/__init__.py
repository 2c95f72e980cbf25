"""Sources to chunks: converters for WCAG 2.2, the EAA and the project's docs."""
from groundchat.corpus.chunk import SOURCES, Chunk, chunk_id, make_chunk

__all__ = ["SOURCES", "Chunk", "chunk_id", "make_chunk"]
