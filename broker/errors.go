package broker

import (
	"errors"
	"fmt"

	"github.com/tether-browser/tether/protocol"
)

// Sentinel errors. Each message tells the agent or the user what to do next;
// callers wrap them with %w and may test them with errors.Is.
var (
	// ErrNoProfile: no extension is connected at all.
	ErrNoProfile = errors.New("no browser is connected to Tether: open Chrome with the Tether extension loaded (or run `tether browser`), then retry")
	// ErrUnknownProfile: the named profile matches no connected profile.
	ErrUnknownProfile = errors.New("unknown browser profile")
	// ErrAlreadyPaired: the pairing code or id to approve is of a profile
	// already paired (approved twice, or an old listing).
	ErrAlreadyPaired = errors.New("browser profile already paired")
	// ErrAmbiguousProfile: the name matches more than one profile.
	ErrAmbiguousProfile = errors.New("ambiguous browser profile")
	// ErrProfileDisconnected: the named profile is known but not connected.
	ErrProfileDisconnected = errors.New("browser profile is disconnected")
	// ErrDisconnected: the extension's socket closed while the call was in flight.
	// Call adds what the agent should do next: retry (nothing was sent, or
	// the call only read), or look before retrying (an action may have run).
	ErrDisconnected = errors.New("the browser extension disconnected during the call (Chrome closed, the extension reloaded, its offscreen document died, or the network link to this Tether dropped)")
	// ErrTimeout: the extension did not answer in time (Call adds, as for
	// ErrDisconnected, whether an action may have run).
	ErrTimeout = errors.New("the browser extension did not answer in time")
	// ErrSlowLink: the extension did not answer in time and its link to
	// the daemon is slow (a round trip of SlowLinkRTT or more): a remote
	// broker's network, not the page (Call adds, as for ErrTimeout, whether
	// an action may have run).
	ErrSlowLink = errors.New("the browser's link to Tether is slow")
	// ErrClosed: the broker is shutting down.
	ErrClosed = errors.New("tether is shutting down")
)

// RemoteError is an error the extension answered a request with.
type RemoteError struct {
	Code    protocol.ErrorCode
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}
