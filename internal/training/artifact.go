package training

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/blob"
	"github.com/dynabench-go/dynabench/internal/builtin"
)

// An artifact file (".dbm") is a small envelope around the built-in model's own encoding:
//
//	"dynabench/training.Artifact\n"   magic
//	uvarint                           FormatVersion
//	uvarint length, bytes             kind ("classifier" or "span")
//	uvarint length, bytes             the manifest, JSON
//	uvarint length, bytes             the model, as builtin's MarshalBinary wrote it
//
// and nothing after. The manifest carries the model bytes' SHA-256, which Load checks.

// FormatVersion is the version of the artifact envelope this code writes and reads.
const FormatVersion = 1

const artifactMagic = "dynabench/training.Artifact\n"

// Limits on what Load accepts.
const (
	MaxManifestBytes = 1 << 20
	MaxArtifactBytes = 256 << 20 // a built-in classifier is at most 64 MiB of weights
)

// Artifact is a trained model with its manifest.
type Artifact struct {
	Manifest Manifest
	// Model is the built-in model's encoding, identical for identical trainings.
	Model     []byte
	predictor dynabench.Predictor
}

// Predictor returns the trained model, ready to call.
func (a *Artifact) Predictor() dynabench.Predictor { return a.predictor }

// MarshalBinary encodes the artifact file.
func (a *Artifact) MarshalBinary() ([]byte, error) {
	manifest, err := json.Marshal(a.Manifest)
	if err != nil {
		return nil, fmt.Errorf("training: encode manifest: %w", err)
	}
	buf := append([]byte(nil), artifactMagic...)
	buf = binary.AppendUvarint(buf, FormatVersion)
	for _, part := range [][]byte{[]byte(a.Manifest.Kind), manifest, a.Model} {
		buf = binary.AppendUvarint(buf, uint64(len(part)))
		buf = append(buf, part...)
	}
	return buf, nil
}

// corrupt is the EINVALID error for data that is not a readable artifact; its message always starts
// "not a valid model artifact: ".
func corrupt(format string, args ...any) error {
	return &dynabench.Error{Code: dynabench.EINVALID, Message: "not a valid model artifact: " + fmt.Sprintf(format, args...)}
}

// Load decodes an artifact file into a callable model and its manifest. Whatever the bytes, it returns
// an error rather than panicking or allocating more than the data could describe: EINVALID for
// anything that is not an intact artifact of a version this code reads.
func Load(data []byte) (dynabench.Predictor, *Manifest, error) {
	if len(data) > MaxArtifactBytes {
		return nil, nil, corrupt("%d bytes, more than %d", len(data), MaxArtifactBytes)
	}
	rest, ok := bytes.CutPrefix(data, []byte(artifactMagic))
	if !ok {
		return nil, nil, corrupt("no artifact header")
	}
	version, n := binary.Uvarint(rest)
	if n <= 0 {
		return nil, nil, corrupt("bad format version")
	}
	if version != FormatVersion {
		return nil, nil, corrupt("format version %d; this build reads %d", version, FormatVersion)
	}
	rest = rest[n:]
	var parts [3][]byte
	for i := range parts {
		if parts[i], rest, ok = lengthPrefixed(rest); !ok {
			return nil, nil, corrupt("truncated")
		}
	}
	if len(rest) != 0 {
		return nil, nil, corrupt("%d trailing bytes", len(rest))
	}
	kind, manifestJSON, model := string(parts[0]), parts[1], parts[2]
	m, err := decodeManifest(kind, manifestJSON, model)
	if err != nil {
		return nil, nil, err
	}
	p, err := decodeModel(kind, model)
	if err != nil {
		return nil, nil, err
	}
	return p, m, nil
}

// lengthPrefixed splits a uvarint-length-prefixed part off b.
func lengthPrefixed(b []byte) (part, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	b = b[k:]
	return b[:n], b[n:], true
}

func decodeManifest(kind string, data, model []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, corrupt("manifest of %d bytes", len(data))
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, corrupt("manifest: %v", err)
	}
	sum := sha256.Sum256(model)
	switch {
	case m.Kind != kind:
		return nil, corrupt("manifest kind %q, envelope kind %q", m.Kind, kind)
	case m.FormatVersion != FormatVersion:
		return nil, corrupt("manifest format version %d", m.FormatVersion)
	case m.ModelSHA256 != hex.EncodeToString(sum[:]):
		return nil, corrupt("the model bytes do not match the manifest's SHA-256")
	}
	return &m, nil
}

func decodeModel(kind string, data []byte) (dynabench.Predictor, error) {
	var p dynabench.Predictor
	var err error
	switch kind {
	case KindClassifier:
		p, err = builtin.UnmarshalClassifier(data)
	case KindSpan:
		p, err = builtin.UnmarshalSpanModel(data)
	default:
		return nil, corrupt("unknown model kind %q", kind)
	}
	if err != nil {
		return nil, corrupt("%v", err)
	}
	return p, nil
}

// LoadBlob reads the artifact stored under key, checks it against wantSHA256 (the hex hash recorded
// when it was registered; "" skips the check) and loads it. ENOTFOUND when there is no such blob,
// EINVALID when it is not the artifact that was registered.
func LoadBlob(ctx context.Context, store blob.Store, key, wantSHA256 string) (dynabench.Predictor, *Manifest, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxArtifactBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("training: read blob %q: %w", key, err)
	}
	if wantSHA256 != "" {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != wantSHA256 {
			return nil, nil, corrupt("blob %q does not have the registered SHA-256", key)
		}
	}
	return Load(data)
}
