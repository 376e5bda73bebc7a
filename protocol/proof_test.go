package protocol

import (
	"encoding/hex"
	"strings"
	"testing"
)

// A fixed test vector of protocol 4's proofs. The extension's TypeScript
// test of shared/proof.ts checks the same vector, so both sides compute
// the same proofs: change neither without the other.
//
//	key          0x00, 0x01, …, 0x1f (32 bytes)
//	endpoint     "127.0.0.1:8765"
//	profile id   "p1"
//	ext nonce    "aa…a" (64 × 'a'), daemon nonce "bb…b" (64 × 'b')
const (
	vectorDaemonProof    = "ae19ed35ea793242a55b02b6f5cfe4062282510d48da3cd716bcefaef9202295"
	vectorExtensionProof = "97b3062330757e01eb073fb66d87c6514e8a3c81553bd648e80b98198c4c680e"
)

func vectorKey() []byte {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	return key
}

func TestProofTestVector(t *testing.T) {
	key := vectorKey()
	extNonce, daemonNonce := strings.Repeat("a", 64), strings.Repeat("b", 64)
	if got := DaemonProof(key, "127.0.0.1:8765", "p1", extNonce, daemonNonce); got != vectorDaemonProof {
		t.Errorf("DaemonProof = %s, want %s", got, vectorDaemonProof)
	}
	if got := ExtensionProof(key, "127.0.0.1:8765", "p1", extNonce, daemonNonce); got != vectorExtensionProof {
		t.Errorf("ExtensionProof = %s, want %s", got, vectorExtensionProof)
	}
}

// Every field the proofs cover changes them: the key, the endpoint, the
// profile id, each nonce, and the side (a daemon's proof is never an
// extension's).
func TestProofCoversEveryField(t *testing.T) {
	key := vectorKey()
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	other := vectorKey()
	other[31] ^= 1
	seen := map[string]string{vectorDaemonProof: "the vector's daemon proof", vectorExtensionProof: "the vector's extension proof"}
	for name, p := range map[string]string{
		"another key":          DaemonProof(other, "127.0.0.1:8765", "p1", a, b),
		"another endpoint":     DaemonProof(key, "127.0.0.1:8766", "p1", a, b),
		"another profile id":   DaemonProof(key, "127.0.0.1:8765", "p2", a, b),
		"no profile id":        DaemonProof(key, "127.0.0.1:8765", "", a, b),
		"another ext nonce":    DaemonProof(key, "127.0.0.1:8765", "p1", b, b),
		"another daemon nonce": DaemonProof(key, "127.0.0.1:8765", "p1", a, a),
		"nonces swapped":       DaemonProof(key, "127.0.0.1:8765", "p1", b, a),
		// The fields are joined with "\n": moving text across a boundary changes the proof.
		"a field boundary moved": DaemonProof(key, "127.0.0.1:8765\np1", "", a, b),
	} {
		if !ValidNonce(p) {
			t.Errorf("%s: proof %q is not 64 lowercase hex digits", name, p)
		}
		if was, ok := seen[p]; ok {
			t.Errorf("%s gives the same proof as %s", name, was)
		}
		seen[p] = name
	}
}

func TestProofMatches(t *testing.T) {
	if !ProofMatches(vectorDaemonProof, vectorDaemonProof) {
		t.Fatal("a proof does not match itself")
	}
	for _, got := range []string{"", vectorExtensionProof, vectorDaemonProof[:63], vectorDaemonProof + "0", strings.ToUpper(vectorDaemonProof)} {
		if ProofMatches(got, vectorDaemonProof) {
			t.Errorf("%q matches the daemon proof", got)
		}
	}
}

// ProfileKey is SHA-256 of the secret's bytes (FIPS 180-4's "abc" vector).
func TestProfileKey(t *testing.T) {
	if got := hex.EncodeToString(ProfileKey("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("ProfileKey(abc) = %s", got)
	}
}

func TestNoncesAndKeys(t *testing.T) {
	n1, n2 := NewNonce(), NewNonce()
	if !ValidNonce(n1) || !ValidNonce(n2) || n1 == n2 {
		t.Fatalf("nonces %q %q: want two different ones of 64 lowercase hex digits", n1, n2)
	}
	for _, bad := range []string{"", strings.Repeat("a", 63), strings.Repeat("a", 65), strings.Repeat("A", 64), strings.Repeat("g", 64), " " + strings.Repeat("a", 63)} {
		if ValidNonce(bad) {
			t.Errorf("ValidNonce(%q)", bad)
		}
		if _, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	key, ok := ParseKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if !ok || string(key) != string(vectorKey()) {
		t.Fatalf("ParseKey = %x, %v", key, ok)
	}
	if got := LocalEndpoint(8765); got != "127.0.0.1:8765" {
		t.Errorf("LocalEndpoint(8765) = %q", got)
	}
	if got := RemoteEndpoint("Tether.Example.ORG:8443"); got != "tether.example.org:8443" {
		t.Errorf("RemoteEndpoint = %q", got)
	}
}
