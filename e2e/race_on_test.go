//go:build race

package e2e

// raceEnabled builds the server binary with -race too when the tests run with -race.
const raceEnabled = true
