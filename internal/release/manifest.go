package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// ManifestFormat identifies the manifest layout; it changes when the layout does.
const ManifestFormat = "dynabench-release/1"

// Manifest describes a release: what it holds, where it came from, and the hash of every file.
type Manifest struct {
	Format    string    `json:"format"`
	Task      string    `json:"task"`
	Round     int       `json:"round"`
	Version   string    `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// ConfigVersion and ConfigSHA256 identify the task config the examples were collected under.
	ConfigVersion int          `json:"config_version"`
	ConfigSHA256  string       `json:"config_sha256"`
	Models        []ModelRef   `json:"models_in_the_loop"`
	Ratios        Ratios       `json:"ratios"`
	License       string       `json:"license"`
	Canary        string       `json:"canary"`
	Examples      int          `json:"examples"`
	Splits        []SplitStats `json:"splits"`
	// Collection is how the round went, for the datasheet; zero when unknown (imports).
	Collection Collection  `json:"collection"`
	Files      []FileEntry `json:"files"`
}

// ModelRef names a model that was in the loop.
type ModelRef struct {
	ID   int64  `json:"id,omitempty"`
	Name string `json:"name"`
}

// SplitStats counts one split, in total and per label (when the task has a label field).
type SplitStats struct {
	Name     string         `json:"name"`
	Examples int            `json:"examples"`
	Labels   map[string]int `json:"labels,omitempty"`
	Fooled   int            `json:"model_wrong"`
}

// Collection is the round's annotation record: counts of examples collected, fooling the model, and
// verified fooling (vMER = VerifiedFooled / Collected), and the validations needed to verify.
type Collection struct {
	Collected         int `json:"collected"`
	Fooled            int `json:"fooled"`
	VerifiedFooled    int `json:"verified_fooled"`
	Annotators        int `json:"annotators"`
	Validators        int `json:"validators"`
	MatchingValidates int `json:"matching_validations"`
}

// FileEntry is one file of the release, its path relative to the release folder with forward slashes.
type FileEntry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Split returns a split's stats.
func (m *Manifest) Split(name string) SplitStats {
	for _, s := range m.Splits {
		if s.Name == name {
			return s
		}
	}
	return SplitStats{Name: name}
}

// Digest is the release's content hash: the sha256 of its manifest as written (manifest.json), which
// covers every other file's hash.
func (m *Manifest) Digest() (string, error) {
	b, err := m.encode()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func (m *Manifest) encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("release: manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// ReadManifest decodes a manifest.json.
func ReadManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("release: manifest: %w", err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("release: manifest format %q, want %q", m.Format, ManifestFormat)
	}
	return &m, nil
}
