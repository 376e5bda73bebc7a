// Package mcptoken keeps the named tokens that MCP clients on other
// machines authenticate with in remote mode (docs/remote.md, issue 19):
// `tether token add NAME` issues one and prints it once; only its SHA-256
// hash is stored, in tokens.json in the config dir. Each token has its own
// rate limit on tool calls (Limiter).
package mcptoken

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tether-browser/tether/config"
)

// Prefix starts every named token, so that one found in a log or a
// config file is recognisable (and told apart from the local MCP token).
const Prefix = "tt_"

// FileName is the store's file in the config dir.
const FileName = "tokens.json"

// FlushInterval is how often last-use times are written to the file
// (never once per call).
const FlushInterval = time.Minute

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// ValidName reports whether name is a token name: 1 to 63 lower-case
// letters, digits, '.', '_' or '-', starting with a letter or digit.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Errors; each message says what to do.
var (
	ErrBadName = errors.New("a token name is 1 to 63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. laptop-agent)")
	ErrExists  = errors.New("a token with this name exists; revoke it first (tether token revoke NAME) or pick another name")
	ErrNoToken = errors.New("no token has this name (tether token list shows them)")
)

// Info is what is known of a token, without its secret.
type Info struct {
	// Name is the token's name, shown on the timeline next to the client's.
	Name string `json:"name"`
	// Created is when it was issued.
	Created time.Time `json:"created"`
	// LastUsed is its last authenticated request (zero: never), to the
	// minute (FlushInterval) across daemon restarts.
	LastUsed time.Time `json:"lastUsed,omitzero"`
}

// record is one token in the file.
type record struct {
	Info
	// SHA256 is the hex SHA-256 of the token: the token itself is never
	// stored.
	SHA256 string `json:"sha256"`
}

// file is tokens.json.
type file struct {
	Tokens []record `json:"tokens"`
}

// Store is the named tokens of one config dir. A daemon keeps one open; a
// command with no daemon running opens its own, changes it and closes it.
// Its methods are safe for concurrent use.
type Store struct {
	path string
	now  func() time.Time

	mu     sync.Mutex
	recs   []record
	byHash map[string]int // SHA-256 hex → index in recs
	dirty  bool           // last-use times not yet written
	// revoked has a channel per token someone waits on (Revoked), closed
	// when that token is revoked.
	revoked map[string]chan struct{}
}

// Open reads dir's tokens.json (none: no tokens). A file that does not
// parse is an error naming it; it is never rewritten.
func Open(p config.Paths) (*Store, error) {
	s := &Store{path: p.Dir + string(os.PathSeparator) + FileName, now: time.Now}
	b, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", s.path, err)
	}
	if err == nil {
		var f file
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("token file %s is damaged (%v); Tether will not overwrite it: fix it, or move it away to drop every named token and issue new ones with tether token add", s.path, err)
		}
		names, hashes := map[string]bool{}, map[string]bool{}
		for _, r := range f.Tokens {
			if !ValidName(r.Name) || len(r.SHA256) != 64 {
				return nil, fmt.Errorf("token file %s is damaged (entry %q); Tether will not overwrite it: fix it, or move it away and issue new tokens", s.path, r.Name)
			}
			// A name twice would survive its revocation (Revoke removes
			// one entry); a hash twice is one secret under two names.
			if names[r.Name] || hashes[r.SHA256] {
				return nil, fmt.Errorf("token file %s is damaged (entry %q appears twice, or shares its hash with another); Tether will not overwrite it: keep one entry per token, or move the file away and issue new tokens", s.path, r.Name)
			}
			names[r.Name], hashes[r.SHA256] = true, true
		}
		s.recs = f.Tokens
	}
	s.index()
	return s, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

func (s *Store) index() {
	s.byHash = make(map[string]int, len(s.recs))
	for i, r := range s.recs {
		s.byHash[r.SHA256] = i
	}
}

func hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// Add issues a token named name and returns it: the only time it is seen
// (ErrBadName, ErrExists, or the file's write error).
func (s *Store) Add(name string) (string, Info, error) {
	if !ValidName(name) {
		return "", Info{}, fmt.Errorf("%q: %w", name, ErrBadName)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", Info{}, err
	}
	secret := Prefix + base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.recs, func(r record) bool { return r.Name == name }) {
		return "", Info{}, fmt.Errorf("%q: %w", name, ErrExists)
	}
	info := Info{Name: name, Created: s.now().UTC().Truncate(time.Second)}
	recs := append(slices.Clone(s.recs), record{Info: info, SHA256: hash(secret)})
	if err := s.write(recs); err != nil {
		return "", Info{}, err
	}
	s.recs = recs
	s.index()
	return secret, info, nil
}

// Revoke removes the token named name (ErrNoToken): its next request is
// refused with 401.
func (s *Store) Revoke(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.recs, func(r record) bool { return r.Name == name })
	if i < 0 {
		return fmt.Errorf("%q: %w", name, ErrNoToken)
	}
	recs := slices.Delete(slices.Clone(s.recs), i, i+1)
	if err := s.write(recs); err != nil {
		return err
	}
	s.recs = recs
	s.index()
	if c, ok := s.revoked[name]; ok {
		close(c)
		delete(s.revoked, name)
	}
	return nil
}

// Revoked returns a channel closed when the token named name is revoked
// (at once when no token has this name): what lasts past the request that
// authenticated, such as an MCP event stream, ends with it.
func (s *Store) Revoked(name string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.recs, func(r record) bool { return r.Name == name }) {
		c := make(chan struct{})
		close(c)
		return c
	}
	if s.revoked == nil {
		s.revoked = map[string]chan struct{}{}
	}
	c, ok := s.revoked[name]
	if !ok {
		c = make(chan struct{})
		s.revoked[name] = c
	}
	return c
}

// List returns every token's Info, by name.
func (s *Store) List() []Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Info, len(s.recs))
	for i, r := range s.recs {
		out[i] = r.Info
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the name of the token secret, and records its use in
// memory (Flush writes it). A wrong or revoked token: false.
func (s *Store) Lookup(secret string) (string, bool) {
	if !strings.HasPrefix(secret, Prefix) {
		return "", false
	}
	h := hash(secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byHash[h]
	if !ok {
		return "", false
	}
	now := s.now().UTC()
	if now.Sub(s.recs[i].LastUsed) >= time.Second {
		s.recs[i].LastUsed = now.Truncate(time.Second)
		s.dirty = true
	}
	return s.recs[i].Name, true
}

// Flush writes last-use times changed since the last write (the daemon
// calls it every FlushInterval and when it stops).
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty {
		return nil
	}
	if err := s.write(s.recs); err != nil {
		return err
	}
	s.dirty = false
	return nil
}

// write replaces the file with recs (atomically, mode 0600). Called with
// s.mu held.
func (s *Store) write(recs []record) error {
	if recs == nil {
		recs = []record{}
	}
	b, err := json.MarshalIndent(file{Tokens: recs}, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteFileAtomic(s.path, append(b, '\n'), 0o600); err != nil {
		return err
	}
	s.dirty = false
	return nil
}
