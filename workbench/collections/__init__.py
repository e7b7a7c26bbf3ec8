"""The shared domain's reads and writes: collections, topics, documents, runs, their files and imports."""
