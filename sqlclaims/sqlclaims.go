// Package sqlclaims is a [mcpadapter.ClaimStore] over database/sql, for
// PostgreSQL, MySQL (and MariaDB) and SQLite: the store that replicas of a
// service share so that each stored state (an interrupt, an approval, a
// paused run) is applied at most once across them
// ([mcpadapter.StateOptions.Claims]).
//
// A claim is one row of a table keyed by the state's ID. Claiming inserts
// the row, ignoring a duplicate key; a row that exists but has expired is
// taken over with a conditional UPDATE, so that exactly one claimant wins
// it. Only a row that exists and has not expired makes Claim return
// [mcpadapter.ErrClaimedState]; any error of the database (down, the table
// missing, a closed *sql.DB) is returned as it is, and the resume that
// asked fails and can be tried again.
//
// The package brings no driver: open the *sql.DB with the driver of your
// database (for example github.com/jackc/pgx/v5/stdlib or github.com/lib/pq,
// github.com/go-sql-driver/mysql, modernc.org/sqlite). For SQLite shared by
// several processes, set a busy timeout (modernc.org/sqlite:
// "?_pragma=busy_timeout(10000)"), so that a writer waits for another
// instead of failing with "database is locked".
package sqlclaims

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// A Dialect names the SQL spoken by the database.
type Dialect string

// The dialects a [Store] speaks.
const (
	Postgres Dialect = "postgres" // PostgreSQL 9.5 or later
	MySQL    Dialect = "mysql"    // MySQL 5.7 or later, MariaDB
	SQLite   Dialect = "sqlite"   // SQLite 3.24 or later
)

// DefaultTable is the table of a [Store] whose [Options] name none.
const DefaultTable = "mcpadapter_claims"

// DefaultPurgeInterval is how often a [Store] whose [Options] set no
// PurgeInterval removes expired records while claiming.
const DefaultPurgeInterval = time.Minute

// purgeBatch bounds the expired records removed by one claim.
const purgeBatch = 100

// maxIDBytes is the size of the id column; the IDs mcpadapter makes are 32
// hex digits.
const maxIDBytes = 64

// Options configures a [Store]. The zero value detects the dialect and
// uses [DefaultTable] and [DefaultPurgeInterval].
type Options struct {
	// Dialect is the database's SQL; empty detects it ([Detect]).
	Dialect Dialect

	// Table is the claims table; empty means [DefaultTable]. It may be
	// qualified by a schema ("app.claims"). Letters, digits, _ and . only.
	Table string

	// PurgeInterval is how often a claim first removes expired records
	// (at most 100 of them); zero means [DefaultPurgeInterval], a
	// negative value never (call [Store.Purge] yourself then).
	PurgeInterval time.Duration
}

// A Store records claims in a table of a SQL database. It implements
// [mcpadapter.ClaimStore] and is safe for concurrent use, by any number of
// processes that share the database.
type Store struct {
	db            *sql.DB
	dialect       Dialect
	table         string
	purgeInterval time.Duration
	nextPurge     atomic.Int64 // Unix nanoseconds before which a claim does not purge

	insert, takeOver, purgeSome, purgeAll string
}

var _ mcpadapter.ClaimStore = (*Store)(nil)

// tableName matches the table names a Store accepts (they are written
// into its statements).
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// New returns a store of claims in db. With no dialect in opts, it is
// detected (which may query db, within ctx). New does not create the
// table: call [Store.CreateTable], or run [Store.Schema] with your
// migrations.
func New(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlclaims: no database")
	}
	table := opts.Table
	if table == "" {
		table = DefaultTable
	}
	if !tableName.MatchString(table) {
		return nil, fmt.Errorf("sqlclaims: table name %q: want letters, digits and _, optionally schema-qualified", table)
	}
	dialect := opts.Dialect
	if dialect == "" {
		var err error
		if dialect, err = Detect(ctx, db); err != nil {
			return nil, err
		}
	}
	s := &Store{db: db, dialect: dialect, table: table, purgeInterval: opts.PurgeInterval}
	if s.purgeInterval == 0 {
		s.purgeInterval = DefaultPurgeInterval
	}
	// The statements. Expiry is Unix milliseconds, NULL for never; each
	// dialect ignores a duplicate key (and nothing else) its own way.
	q := func(n int) string { // the n-th placeholder
		if dialect == Postgres {
			return fmt.Sprintf("$%d", n)
		}
		return "?"
	}
	expired := fmt.Sprintf("expires_at IS NOT NULL AND expires_at <= %s", q(1))
	switch dialect {
	case Postgres, SQLite:
		s.insert = fmt.Sprintf("INSERT INTO %s (id, expires_at) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING", table, q(1), q(2))
		s.purgeSome = fmt.Sprintf("DELETE FROM %s WHERE id IN (SELECT id FROM %s WHERE %s LIMIT %d)", table, table, expired, purgeBatch)
	case MySQL:
		// INSERT IGNORE would also turn a too long id into a warning;
		// Claim refuses those first.
		s.insert = fmt.Sprintf("INSERT IGNORE INTO %s (id, expires_at) VALUES (?, ?)", table)
		s.purgeSome = fmt.Sprintf("DELETE FROM %s WHERE %s LIMIT %d", table, expired, purgeBatch)
	default:
		return nil, fmt.Errorf("sqlclaims: unknown dialect %q (want %q, %q or %q)", dialect, Postgres, MySQL, SQLite)
	}
	s.takeOver = fmt.Sprintf("UPDATE %s SET expires_at = %s WHERE id = %s AND expires_at IS NOT NULL AND expires_at <= %s", table, q(1), q(2), q(3))
	s.purgeAll = fmt.Sprintf("DELETE FROM %s WHERE %s", table, expired)
	return s, nil
}

// Dialect returns the store's dialect, given or detected.
func (s *Store) Dialect() Dialect { return s.dialect }

// Schema returns the statements that create the store's table and its
// index on the expiry, for migrations; each does nothing when what it
// creates exists.
func (s *Store) Schema() []string {
	schema, name, qualified := strings.Cut(s.table, ".")
	if !qualified {
		schema, name = "", s.table
	}
	index := name + "_expires_at"
	table := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (id VARCHAR(%d) NOT NULL PRIMARY KEY, expires_at BIGINT NULL", s.table, maxIDBytes)
	switch {
	case s.dialect == MySQL: // no CREATE INDEX IF NOT EXISTS: the index is declared with the table
		return []string{fmt.Sprintf("%s, INDEX %s (expires_at))", table, index)}
	case s.dialect == SQLite && qualified: // SQLite qualifies the index, not its table
		return []string{table + ")", fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s.%s ON %s (expires_at)", schema, index, name)}
	}
	return []string{table + ")", fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (expires_at)", index, s.table)}
}

// CreateTable creates the store's table and index ([Store.Schema]) unless
// they exist.
func (s *Store) CreateTable(ctx context.Context) error {
	for _, stmt := range s.Schema() {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("sqlclaims: creating table %s: %w", s.table, err)
		}
	}
	return nil
}

// Claim records id until expires (the zero time: for ever). It returns nil
// when id had no record or an expired one, an error wrapping
// [mcpadapter.ErrClaimedState] when it has a record that has not expired,
// and the database's error, wrapped, when it cannot tell. Expiry is
// compared with the clock of the process that claims. Every
// PurgeInterval, a claim first removes up to 100 expired records.
func (s *Store) Claim(ctx context.Context, id string, expires time.Time) error {
	if id == "" || len(id) > maxIDBytes {
		return fmt.Errorf("sqlclaims: claim id of %d bytes: want 1 to %d", len(id), maxIDBytes)
	}
	now := time.Now()
	if err := s.purgeDue(ctx, now); err != nil {
		return err
	}
	var exp sql.NullInt64
	if !expires.IsZero() {
		exp = sql.NullInt64{Int64: expires.UnixMilli(), Valid: true}
	}
	// Two rounds: a record that expired and was purged between the INSERT
	// and the UPDATE of the first is inserted by the second.
	for range 2 {
		if ok, err := s.exec(ctx, s.insert, id, exp); err != nil || ok {
			return err
		}
		if ok, err := s.exec(ctx, s.takeOver, exp, id, now.UnixMilli()); err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("%w (id %s)", mcpadapter.ErrClaimedState, id)
}

// exec runs the statement query and reports whether it changed a row.
func (s *Store) exec(ctx context.Context, query string, args ...any) (bool, error) {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("sqlclaims: claiming in %s: %w", s.table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlclaims: claiming in %s: %w", s.table, err)
	}
	return n > 0, nil
}

// purgeDue removes a batch of expired records when the purge interval has
// passed since the last; of concurrent claims, one does it.
func (s *Store) purgeDue(ctx context.Context, now time.Time) error {
	next := s.nextPurge.Load()
	if s.purgeInterval < 0 || now.UnixNano() < next ||
		!s.nextPurge.CompareAndSwap(next, now.Add(s.purgeInterval).UnixNano()) {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, s.purgeSome, now.UnixMilli()); err != nil {
		s.nextPurge.Store(next) // the next claim tries again
		return fmt.Errorf("sqlclaims: removing expired claims from %s: %w", s.table, err)
	}
	return nil
}

// Purge removes every expired record and returns how many it removed.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.purgeAll, time.Now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("sqlclaims: removing expired claims from %s: %w", s.table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlclaims: removing expired claims from %s: %w", s.table, err)
	}
	return n, nil
}

// Detect returns the dialect of db: from its driver's package when it is
// a known one (lib/pq, pgx, go-sql-driver/mysql, modernc.org/sqlite,
// mattn/go-sqlite3 …), else by asking the database (sqlite_version(),
// then version()).
func Detect(ctx context.Context, db *sql.DB) (Dialect, error) {
	if d, ok := driverDialect(db.Driver()); ok {
		return d, nil
	}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err == nil {
		return SQLite, nil
	}
	err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	switch {
	case err != nil:
		return "", fmt.Errorf("sqlclaims: detecting the dialect (set Options.Dialect): %w", err)
	case strings.Contains(v, "PostgreSQL"):
		return Postgres, nil
	case strings.Contains(strings.ToLower(v), "mariadb"), mysqlVersion.MatchString(v):
		return MySQL, nil
	}
	return "", fmt.Errorf("sqlclaims: cannot tell the dialect of a database whose version is %q (set Options.Dialect)", v)
}

// mysqlVersion matches what MySQL's version() returns ("8.0.36",
// "8.4.0-log").
var mysqlVersion = regexp.MustCompile(`^\d+\.\d+\.\d+`)

// driverDialect returns the dialect of a driver by the import path of its
// type's package.
func driverDialect(drv driver.Driver) (Dialect, bool) {
	t := reflect.TypeOf(drv)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	path := strings.ToLower(t.PkgPath())
	switch {
	case strings.Contains(path, "pgx"), strings.HasSuffix(path, "/pq"):
		return Postgres, true
	case strings.Contains(path, "mysql"):
		return MySQL, true
	case strings.Contains(path, "sqlite"):
		return SQLite, true
	}
	return "", false
}
