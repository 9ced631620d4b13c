"""PostgreSQL as Django's own backend gives it, with a health check that costs no round trip
while the connection is idle and healthy (config.db.base)."""
