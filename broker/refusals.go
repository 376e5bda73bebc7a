// Refused browsers: the refusals after which a browser's extension stops
// asking until someone acts (the extension's HALTING_CODES:
// pairing_denied, unauthorized, protocol_mismatch). Without this list such
// a browser was visible only in the daemon's log; `tether profiles` and
// GET /api/profiles show it, with what to do next.
//
// The extension keeps its halt in chrome.storage.session, which Chrome
// empties when the browser restarts (and when the extension is reloaded):
// so the popup's Reconnect, a reload at chrome://extensions, or a restart
// of the browser (for `tether browser --headless`, which has no popup:
// stop it and run it again) makes it ask again. Nothing the daemon does
// reaches a halted extension: it has no socket open.
//
// Entries are what sockets claimed (any local program can claim an id and
// a label), so they only inform; they decide nothing. A denial is the
// user's own act and a flood of forged hellos must not hide it, so forged
// refusals push out other refusals first (see noteRefusalLocked).

package broker

import (
	"fmt"
	"slices"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// MaxRefusals is the most refused browsers remembered; past it, the oldest
// that is not a denial is forgotten first (a denial only when all are).
const MaxRefusals = 16

// RefusalTTL is how long a refused browser is listed after its last refusal.
const RefusalTTL = time.Hour

// RefusedProfile is a browser refused recently in a way its extension does
// not recover from by itself: it stopped asking until its popup's Reconnect
// or a restart of the browser.
type RefusedProfile struct {
	// ID is the full profile id the socket claimed (not verified).
	ID string
	// Label is the cleaned label it claimed.
	Label string
	// Code is the refusal: protocol.CodePairingDenied,
	// protocol.CodeUnauthorized or protocol.CodeProtocolMismatch.
	Code protocol.ErrorCode
	// Slug is the paired profile an unauthorized hello claimed to be.
	Slug string
	// Reason says why, in one sentence; NextStep what the user does now.
	Reason, NextStep string
	// At is the last refusal; Count how many came in a row with this Code
	// (each within RefusalTTL of the one before).
	At    time.Time
	Count int
}

type refusal struct {
	label, slug string
	code        protocol.ErrorCode
	// extProtocol is the protocol a protocol_mismatch hello spoke.
	extProtocol int
	at          time.Time
	count       int
}

// halting reports whether code makes the extension stop asking until the
// user acts (extension/src/shared/messages.ts HALTING_CODES).
func halting(code protocol.ErrorCode) bool {
	return code == protocol.CodePairingDenied || code == protocol.CodeUnauthorized || code == protocol.CodeProtocolMismatch
}

// noteRefusalLocked remembers that the profile id (label as claimed) was
// refused with the halting code; slug is the paired profile an
// unauthorized hello claimed, extProtocol a mismatched hello's protocol.
// An id that is not valid (protocol.ValidProfileID) is not listed.
func (b *Broker) noteRefusalLocked(id, label string, code protocol.ErrorCode, slug string, extProtocol int) {
	if !protocol.ValidProfileID(id) || !halting(code) {
		return
	}
	if rec := b.records[id]; code == protocol.CodeProtocolMismatch && rec != nil && rec.conn != nil {
		return // that profile is connected, proving its key: not it
	}
	now := b.cfg.Now()
	b.pruneRefusalsLocked(now)
	r := b.refused[id]
	if r == nil {
		r = &refusal{}
		b.refused[id] = r
	}
	count := r.count
	if r.code != code {
		count = 0
	}
	*r = refusal{label: cleanLabel(label), slug: slug, code: code, extProtocol: extProtocol, at: now, count: count + 1}
	for len(b.refused) > MaxRefusals {
		oldest := ""
		for k, v := range b.refused {
			if oldest == "" || evictBefore(v, b.refused[oldest]) {
				oldest = k
			}
		}
		delete(b.refused, oldest)
	}
	// The window shows this list: its state event (coalesced, as for a
	// flood of waiting hellos) follows.
	b.notifyLocked()
}

// evictBefore reports whether x goes before y when the list is full: a
// refusal that is not a denial before a denial, then the older first.
func evictBefore(x, y *refusal) bool {
	xd, yd := x.code == protocol.CodePairingDenied, y.code == protocol.CodePairingDenied
	if xd != yd {
		return yd
	}
	return x.at.Before(y.at)
}

// clearRefusalLocked forgets id's refusal: it asked again (it waits for
// approval, or connected).
func (b *Broker) clearRefusalLocked(id string) {
	if _, ok := b.refused[id]; ok {
		delete(b.refused, id)
		b.notifyLocked()
	}
}

func (b *Broker) pruneRefusalsLocked(now time.Time) {
	for id, r := range b.refused {
		if !now.Before(r.at.Add(RefusalTTL)) {
			delete(b.refused, id)
		}
	}
}

// Refused lists the browsers refused within RefusalTTL that stopped asking
// (see RefusedProfile), the most recent first, each with why and the next
// step.
func (b *Broker) Refused() []RefusedProfile {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pruneRefusalsLocked(b.cfg.Now())
	out := make([]RefusedProfile, 0, len(b.refused))
	for id, r := range b.refused {
		v := RefusedProfile{ID: id, Label: r.label, Code: r.code, Slug: r.slug, At: r.at, Count: r.count}
		v.Reason, v.NextStep = b.adviceLocked(id, r)
		out = append(out, v)
	}
	slices.SortFunc(out, func(x, y RefusedProfile) int { return y.At.Compare(x.At) })
	return out
}

// restartStep is how a halted extension is made to ask again, for every
// kind of browser.
const restartStep = "press Reconnect in that browser's Tether popup, or restart the browser " +
	"(quit it completely and start it again; a `tether browser --headless` one has no popup: stop it and run the same command again)"

// adviceLocked is r's reason and next step, as of now: whether the profile
// an unauthorized hello claimed is connected tells a forgery from a
// browser that lost its pairing.
func (b *Broker) adviceLocked(id string, r *refusal) (reason, next string) {
	switch r.code {
	case protocol.CodePairingDenied:
		return "you denied it",
			"to pair it after all, " + restartStep + "; it then waits for approval here with its code (`tether profiles approve CODE`). " +
				"To keep it out, do nothing: it asks again only when restarted or when Reconnect is pressed"
	case protocol.CodeUnauthorized:
		if rec := b.records[id]; rec != nil && rec.conn != nil {
			return fmt.Sprintf("it claimed to be the paired profile %q without proving it holds its secret", r.slug),
				fmt.Sprintf("nothing: %q is connected now and proved its secret, so this was another program claiming its id", r.slug)
		}
		if b.records[id] == nil {
			return fmt.Sprintf("it claimed to be the paired profile %q without proving it holds its secret", r.slug),
				"that profile has been forgotten since: " + restartStep + ", and approve it when it asks to pair"
		}
		return fmt.Sprintf("it claimed to be the paired profile %q without proving it holds its secret", r.slug),
			fmt.Sprintf("if you reinstalled the extension or cleared its data there, run `tether profiles forget %s`, then %s, and approve it when it asks to pair; "+
				"if you did not, another program may be claiming that browser's id: ignore it", r.slug, restartStep)
	default: // protocol_mismatch
		return fmt.Sprintf("its extension speaks protocol %d and this Tether speaks protocol %d", r.extProtocol, protocol.Version),
			"update both to the same release; for an unpacked extension, open chrome://extensions in that browser and press the reload button on Tether (Chrome does not reload changed files by itself); it then connects by itself"
	}
}
