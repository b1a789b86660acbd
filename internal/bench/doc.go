// Package bench measures the example-submit path under load: many concurrent clients POST examples
// to a running server, with the built-in model in the loop, on SQLite or PostgreSQL, and — in the
// same run, on the same database — to a bare baseline (a minimal net/http handler doing one INSERT),
// so that the server's cost can be read as a ratio to the cheapest possible write over HTTP.
//
// The load generator is closed-loop (each client sends its next request when the previous one has
// answered), bounded in time and in count, talks only to loopback addresses, and keeps every
// latency sample so that percentiles are exact.
package bench
