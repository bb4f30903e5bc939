"""The embedded demo: a private PostgreSQL, a load generator, a worker pool and chaos controls."""
