// The mutual proof of protocol 4: the daemon proves it is the Tether the
// extension paired with (or, for a new profile, the one that wrote its
// folder) before the extension says anything that matters, and the
// extension proves it holds its profile's secret without sending it.
//
// Both proofs are HMAC-SHA256 (RFC 2104, FIPS 198-1) over the same fields
// with a different first line, so a proof of one side is never one of the
// other's:
//
//	"tether-4 daemon" or "tether-4 extension"
//	endpoint     what the extension dialled (Endpoint)
//	profile id   the id the handshake named, "" when none
//	extension nonce, daemon nonce
//
// joined with "\n". The nonces make each proof good for one socket; the
// endpoint makes a daemon's proof good only for the address the extension
// dialled, so a program on another port cannot relay the handshake to the
// real daemon and act on what follows. The key is ProfileKey(secret) for a
// paired profile (the daemon stores only that hash) or the daemon's
// pairing key (Challenge.PairingProof).

package protocol

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// NonceHexLength is the length of a nonce in hex digits (32 bytes).
const NonceHexLength = 64

// KeyHexLength is the length of a pairing key or secret in hex digits (32 bytes).
const KeyHexLength = 64

// NewNonce returns 32 random bytes as 64 lowercase hex digits.
func NewNonce() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// ValidNonce reports whether s is 64 lowercase hex digits.
func ValidNonce(s string) bool { return isLowerHex(s, NonceHexLength) }

// ParseKey decodes a pairing key (64 lowercase hex digits); ok is false
// for anything else.
func ParseKey(s string) (key []byte, ok bool) {
	if !isLowerHex(s, KeyHexLength) {
		return nil, false
	}
	b, _ := hex.DecodeString(s)
	return b, true
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ProfileKey is the key of a paired profile's proofs: SHA-256 of its
// secret (as the extension holds it, the hex string's bytes).
func ProfileKey(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// LocalEndpoint is the endpoint of the local daemon on port: what the
// extension dials is ws://127.0.0.1:<port>/extension.
func LocalEndpoint(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// RemoteEndpoint is the endpoint of a remote broker: the host (and port,
// when not 443) the extension dialled, lower case, as the URL standard's
// host serializes it and as the request's Host header carries it.
func RemoteEndpoint(host string) string { return strings.ToLower(host) }

// DaemonProof is the daemon's proof (64 hex digits) for one socket.
func DaemonProof(key []byte, endpoint, profileID, extNonce, daemonNonce string) string {
	return proof(key, "tether-4 daemon", endpoint, profileID, extNonce, daemonNonce)
}

// ExtensionProof is the extension's proof (64 hex digits) for one socket.
func ExtensionProof(key []byte, endpoint, profileID, extNonce, daemonNonce string) string {
	return proof(key, "tether-4 extension", endpoint, profileID, extNonce, daemonNonce)
}

// NamedProof is the proof (64 hex digits) a paired extension puts in its
// profile subprotocol (ProfileSubprotocolPrefix + "<id>.<proof>"), before
// the daemon has said anything: it lets the daemon keep that socket out of
// the bound on sockets that have not said hello, which nobody without the
// profile's key can claim. It covers the extension's nonce only, so the
// daemon accepts each nonce once.
func NamedProof(key []byte, endpoint, profileID, extNonce string) string {
	return proof(key, "tether-4 named", endpoint, profileID, extNonce)
}

// HealthProof is the daemon's answer (64 hex digits) to GET
// /health?nonce=<nonce> on endpoint (LocalEndpoint of its port), keyed on
// its pairing key, which every local client of the same user can read in
// the config dir (config.Paths.PairingKey): a client sends its token only
// to a daemon that proved it is the one of its config dir.
func HealthProof(key []byte, endpoint, nonce string) string {
	return proof(key, "tether-4 health", endpoint, nonce)
}

// ProofMatches compares a received proof with the expected one in
// constant time.
func ProofMatches(got, want string) bool {
	return len(got) == len(want) && hmac.Equal([]byte(got), []byte(want))
}

func proof(key []byte, fields ...string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(strings.Join(fields, "\n")))
	return hex.EncodeToString(mac.Sum(nil))
}
