package policy

import "errors"

var (
	// ErrNotPending is returned by Guard.Answer when the approval was already
	// answered, timed out or never existed: the first answer wins.
	ErrNotPending = errors.New("no such pending approval (already answered or timed out)")
	// ErrInvalidRule is returned for a rule with an unknown class or action,
	// or a malformed site pattern.
	ErrInvalidRule = errors.New("invalid policy rule")
	// ErrCorrupt is returned (wrapped, naming the file) when policy.json
	// cannot be read; the file is then never overwritten.
	ErrCorrupt = errors.New("policy file is corrupt")
)
