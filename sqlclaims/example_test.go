package sqlclaims_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/sqlclaims"
)

// A service's replicas share one claim store, in a database they all
// reach: each stored state is then resumed or decided once, by whichever
// replica gets there first; the others get ErrClaimedState.
func Example() {
	ctx := context.Background()
	// In production: PostgreSQL, MySQL or a SQLite file every replica
	// opens, with its driver (lib/pq or pgx, go-sql-driver/mysql,
	// modernc.org/sqlite).
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: one in-memory database

	store, err := sqlclaims.New(ctx, db, sqlclaims.Options{}) // the dialect is detected
	if err != nil {
		log.Fatal(err)
	}
	if err := store.CreateTable(ctx); err != nil { // or run store.Schema() with your migrations
		log.Fatal(err)
	}
	a, err := mcpadapter.New(mcpadapter.Service(mcpadapter.Config{
		State: mcpadapter.StateOptions{
			Key:    bytes.Repeat([]byte("k"), 32), // in production: 32 random bytes, the same on every replica
			Claims: store,
		},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	// What the Adapter does when a stored state is resumed:
	id, expires := "4f1c2b7a9e0d4c3b8a6f5e4d3c2b1a09", time.Now().Add(time.Hour)
	fmt.Println(store.Dialect(), store.Claim(ctx, id, expires))
	err = store.Claim(ctx, id, expires) // another replica, the same state
	fmt.Println(errors.Is(err, mcpadapter.ErrClaimedState))
	// Output:
	// sqlite <nil>
	// true
}
