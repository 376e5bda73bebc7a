package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestResolveHonoursEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvConfigDir, dir)
	p, err := Resolve()
	if err != nil || p.Dir != dir {
		t.Fatalf("Resolve() = %v, %v; want %s", p, err, dir)
	}
}

func TestTokenCreatedOnceWithMode0600(t *testing.T) {
	p := Paths{Dir: filepath.Join(t.TempDir(), "cfg")}
	a, err := p.LoadOrCreateToken()
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.LoadOrCreateToken()
	if err != nil || a != b || len(a) != 64 {
		t.Fatalf("second load %q (%v), first %q", b, err, a)
	}
	info, err := os.Stat(p.Token())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token mode %v (%v), want 0600", info.Mode(), err)
	}
	dirInfo, _ := os.Stat(p.Dir)
	if dirInfo.Mode().Perm() != 0o700 {
		t.Fatalf("config dir mode %v, want 0700", dirInfo.Mode())
	}
}

func TestCorruptTokenIsNotReplaced(t *testing.T) {
	p := Paths{Dir: t.TempDir()}
	if err := os.WriteFile(p.Token(), []byte("not a token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := p.LoadOrCreateToken()
	if err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("got %v, want an error saying what to do", err)
	}
	if b, _ := os.ReadFile(p.Token()); string(b) != "not a token\n" {
		t.Fatalf("the token file was changed: %q", b)
	}
}

func TestControlTokenIsSeparateWithMode0600(t *testing.T) {
	p := Paths{Dir: t.TempDir()}
	mcpTok, err := p.LoadOrCreateToken()
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := p.LoadOrCreateControlToken()
	if err != nil {
		t.Fatal(err)
	}
	if ctl == mcpTok || len(ctl) != 64 {
		t.Fatalf("control token %q; want 64 hex characters, not the MCP token", ctl)
	}
	if again, err := p.ReadControlToken(); err != nil || again != ctl {
		t.Fatalf("ReadControlToken = %q, %v; want %q", again, err, ctl)
	}
	info, err := os.Stat(p.ControlToken())
	if err != nil || info.Mode().Perm() != 0o600 || filepath.Base(p.ControlToken()) != "control-token" {
		t.Fatalf("control token file %s mode %v (%v); want control-token, 0600", p.ControlToken(), info.Mode(), err)
	}
	if err := os.WriteFile(p.ControlToken(), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadOrCreateControlToken(); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("corrupt control token: got %v, want an error saying what to do", err)
	}
}

func TestDaemonRecordRoundTrip(t *testing.T) {
	p := Paths{Dir: t.TempDir()}
	want := DaemonRecord{PID: 42, Port: 47615, Version: "0.1.0+abc", Flags: []string{"--enable-tools=browser_evaluate"}}
	if err := p.WriteDaemonRecord(want); err != nil {
		t.Fatal(err)
	}
	got, err := p.ReadDaemonRecord()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if got.URL() != "http://127.0.0.1:47615" {
		t.Fatalf("URL %s", got.URL())
	}
	p.RemoveDaemonRecord(7) // another pid: kept
	if _, err := p.ReadDaemonRecord(); err != nil {
		t.Fatal("record of pid 42 removed by pid 7")
	}
	p.RemoveDaemonRecord(42)
	if _, err := p.ReadDaemonRecord(); !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("record still there: %v", err)
	}
	if err := os.WriteFile(p.Daemon(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadDaemonRecord(); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt record: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// A secret file that is a symbolic link to a missing file reads as missing
// and cannot be created (O_EXCL): each secret says so and what to do, and
// the link is left as it is. (Before, the daemon recursed until its stack
// overflowed.)
func TestDanglingSymlinkSecretSaysWhatToDo(t *testing.T) {
	p := Paths{Dir: t.TempDir()}
	for _, c := range []struct {
		path string
		load func() (string, error)
	}{{p.Token(), p.LoadOrCreateToken}, {p.ControlToken(), p.LoadOrCreateControlToken}, {p.PairingKey(), p.LoadOrCreatePairingKey}} {
		missing := filepath.Join(p.Dir, "gone", filepath.Base(c.path))
		if err := os.Symlink(missing, c.path); err != nil {
			t.Fatal(err)
		}
		_, err := c.load()
		if err == nil || !strings.Contains(err.Error(), "symbolic link to "+missing) || !strings.Contains(err.Error(), "remove the link") {
			t.Fatalf("%s: got %v, want an error naming the missing target and what to do", c.path, err)
		}
		if got, _ := os.Readlink(c.path); got != missing {
			t.Fatalf("%s: the link was changed to %q", c.path, got)
		}
	}
}

// WriteFileAtomic on a symbolic link replaces the file it points to and
// keeps the link (a policy.json kept in a dotfiles repository); a link to
// a missing file is an error and stays a link.
func TestWriteFileAtomicKeepsSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "policy.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "policy.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new\n" {
		t.Fatalf("the target holds %q, want the new content", b)
	}
	dangling := filepath.Join(dir, "settings.json")
	if err := os.Symlink(filepath.Join(dir, "gone", "settings.json"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dangling, []byte("x"), 0o600); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("writing through a dangling link: %v, want an error", err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the dangling link was replaced")
	}
}

// A permission error says what to fix; other errors get no hint.
func TestPermissionHint(t *testing.T) {
	if h := PermissionHint(&fs.PathError{Op: "open", Path: "token", Err: fs.ErrPermission}); !strings.Contains(h, "chown") || !strings.Contains(h, "chmod") {
		t.Fatalf("hint %q", h)
	}
	if h := PermissionHint(fs.ErrNotExist); h != "" {
		t.Fatalf("hint for a missing file: %q", h)
	}
}
