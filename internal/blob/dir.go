package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"
)

// Dir is a Store in a directory of the local disk: the blob "models/ab.dbm" is the file
// <root>/models/ab.dbm. Every file operation goes through an os.Root, so not even a symbolic link
// planted inside the directory can make a key reach outside it.
//
// A Put writes a temporary file under <root>/.tmp, fsyncs it, renames it over the key and fsyncs the
// key's directory: after a crash the key holds the old blob or the whole new one, and once Put has
// returned the new one survives a power loss. (gocloud.dev's fileblob does neither fsync and by
// default writes its temporary file in os.TempDir, which may be another filesystem, so we keep this
// small store of our own and leave gocloud for S3 later.)
type Dir struct {
	root *os.Root
}

var _ Store = (*Dir)(nil)

const (
	tmpDir = ".tmp"
	// staleTemp is how old a temporary file must be before NewDir removes it as a crash leftover;
	// another process may be writing younger ones right now.
	staleTemp = time.Hour
)

// NewDir opens (creating it if needed) the directory store at dir and removes temporary files left
// by writers that crashed more than an hour ago. Close releases it.
func NewDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if err := root.MkdirAll(tmpDir, 0o755); err != nil {
		root.Close()
		return nil, fmt.Errorf("blob: %w", err)
	}
	d := &Dir{root: root}
	d.removeStaleTemps(time.Now().Add(-staleTemp))
	return d, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// removeStaleTemps deletes temporary files modified before cutoff; failures only leave litter.
func (d *Dir) removeStaleTemps(cutoff time.Time) {
	entries, err := fs.ReadDir(d.root.FS(), tmpDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().Before(cutoff) {
			d.root.Remove(path.Join(tmpDir, e.Name()))
		}
	}
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader) (Info, error) {
	if err := ValidateKey(key); err != nil {
		return Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	tmp, f, err := d.createTemp()
	if err != nil {
		return Info{}, err
	}
	info, err := d.fill(ctx, f, r)
	if err == nil {
		err = d.publish(tmp, key)
	}
	if err != nil {
		d.root.Remove(tmp) // after a successful rename there is nothing left to remove
		return Info{}, err
	}
	info.Key = key
	return info, nil
}

// createTemp creates a new, empty temporary file under .tmp.
func (d *Dir) createTemp() (string, *os.File, error) {
	b := make([]byte, 12)
	rand.Read(b)
	name := path.Join(tmpDir, hex.EncodeToString(b))
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, fmt.Errorf("blob: create temporary file: %w", err)
	}
	return name, f, nil
}

// fill copies r into f, hashing it, checks ctx between reads, and syncs and closes f.
func (d *Dir) fill(ctx context.Context, f *os.File, r io.Reader) (Info, error) {
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("blob: write: %w", err)
	}
	return Info{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// publish renames the finished temporary file to the key and makes the rename durable.
func (d *Dir) publish(tmp, key string) error {
	dir := path.Dir(key)
	if err := d.root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	if err := d.root.Rename(tmp, key); err != nil {
		return fmt.Errorf("blob: rename: %w", err)
	}
	return d.syncDir(dir)
}

// syncDir fsyncs a directory, so that a rename into it survives a power loss.
func (d *Dir) syncDir(dir string) error {
	f, err := d.root.Open(dir)
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("blob: sync directory: %w", err)
	}
	return nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := d.root.Open(key)
	if err != nil {
		return nil, d.notFound(key, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("blob %q: %w", key, ErrNotFound) // a directory is not a blob
	}
	return f, nil
}

// Delete implements Store.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if st, err := d.root.Lstat(key); err != nil {
		return d.notFound(key, err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("blob %q: %w", key, ErrNotFound)
	}
	if err := d.root.Remove(key); err != nil {
		return d.notFound(key, err)
	}
	return d.syncDir(path.Dir(key))
}

// notFound maps a missing file, or a key running through a file ("a/b" when "a" is a blob), to
// ErrNotFound. Anything else — a symbolic link out of the directory, say — stays an internal error.
func (d *Dir) notFound(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("blob %q: %w", key, ErrNotFound)
	}
	return fmt.Errorf("blob %q: %w", key, err)
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
