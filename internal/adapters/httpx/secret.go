package httpx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxKeyBytes bounds an API key read from a file, so a mistaken path cannot load a huge file.
const maxKeyBytes = 4096

var errKeyTooLarge = errors.New("too large for an API key")

// readAPIKey reads the model's API key from the environment variable named by api_key_env or the
// file named by api_key_file, at construction. Problems name the variable or the path, never the key.
// The key is returned to be captured in a closure (see Client.auth): it is never a struct field, so
// no %v of a client can print it, and it is never stored anywhere but memory.
func readAPIKey(o *Opts, d Options) string {
	env, hasEnv := o.Raw("api_key_env")
	file, hasFile := o.Raw("api_key_file")
	switch {
	case hasEnv && hasFile:
		o.Problem("options.api_key_file", "give api_key_env or api_key_file, not both")
		return ""
	case hasEnv:
		return keyFromEnv(o, env, d)
	case hasFile:
		return keyFromFile(o, file, d)
	}
	return ""
}

func keyFromEnv(o *Opts, v any, d Options) string {
	name, ok := v.(string)
	switch {
	case !ok || name == "":
		o.Problem("options.api_key_env", "must name an environment variable")
		return ""
	case !strings.HasPrefix(name, d.SecretEnvPrefix):
		o.Problem("options.api_key_env", "must name a variable starting with %s (this server only hands those to models)", d.SecretEnvPrefix)
		return ""
	}
	key, set := d.LookupEnv(name)
	if !set {
		o.Problem("options.api_key_env", "the environment variable %s is not set on this server", name)
		return ""
	}
	return checkKey(o, "options.api_key_env", key)
}

func keyFromFile(o *Opts, v any, d Options) string {
	path, ok := v.(string)
	switch {
	case !ok || path == "":
		o.Problem("options.api_key_file", "must name a file")
		return ""
	case d.SecretDir == "":
		o.Problem("options.api_key_file", "this server reads no API key files (no secret directory is configured)")
		return ""
	}
	rel := path
	if filepath.IsAbs(path) {
		r, err := filepath.Rel(d.SecretDir, path)
		if err != nil {
			rel = path
		} else {
			rel = r
		}
	}
	if !filepath.IsLocal(rel) {
		o.Problem("options.api_key_file", "must be a file in the server's secret directory")
		return ""
	}
	data, err := readInRoot(d.SecretDir, rel)
	if err != nil {
		o.Problem("options.api_key_file", "cannot read %s: %s", path, fileProblem(err))
		return ""
	}
	return checkKey(o, "options.api_key_file", string(data))
}

// readInRoot reads a file inside dir without following anything out of it (os.Root).
func readInRoot(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxKeyBytes {
		return nil, errKeyTooLarge
	}
	return data, nil
}

// fileProblem describes a file error without the OS's message, which could quote content.
func fileProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, errKeyTooLarge):
		return "too large for an API key"
	}
	return "not a readable file"
}

func checkKey(o *Opts, field, key string) string {
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		o.Problem(field, "the API key is empty")
		return ""
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		o.Problem(field, "the API key must be one line of printable text")
		return ""
	}
	return key
}
