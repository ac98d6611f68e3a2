package store

import (
	"database/sql"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// Open connects to PostgreSQL.
func Open(dsn string) (*sql.DB, error) { return sql.Open("pgx", dsn) }
