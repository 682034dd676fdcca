"""amber.pg against a real PostgreSQL server: COPY, fetch, objects in bytea, transactions."""
