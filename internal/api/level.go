package api

import "log/slog"

// slogLevel logs server errors as errors and everything else at the given base level.
func slogLevel(base int, status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.Level(base)
}
