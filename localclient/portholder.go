package localclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/tether-browser/tether/config"
)

// OtherProgramError is returned when a program that is not this config
// dir's Tether answers on Tether's port: its /health answer is not
// Tether's (a status other than 200, or no JSON naming "tether"), it gave
// no HTTP answer at all, or (CheckPort, no daemon record) it answers like
// Tether without the config dir's proof. Nothing was sent to it but
// /health?nonce= (no token). It wraps ErrNotRunning, since this config
// dir's Tether does not run there: commands with an offline fallback
// (listing the saved registry, pausing in policy.json) keep it, and name
// the program in what they print.
type OtherProgramError struct {
	// Port is the port on 127.0.0.1 the program holds.
	Port int
	// Holder names the process listening there, "pid 4242, python3"
	// (PortHolder), or "" where the OS does not say.
	Holder string
	// Answer is what it answered, e.g. "/health answered 404 Not Found".
	Answer string
	// LikeTether: it answers /health like Tether, without this config
	// dir's proof (a Tether of another config dir, or a program posing as
	// one), so the text says "not this config dir's Tether".
	LikeTether bool
}

// OtherProgramPrefix starts the text of every *OtherProgramError, for
// those that hold only the text (View.Err).
const OtherProgramPrefix = "Tether is not running: another program"

// Error says what answers, that nothing was sent, and what to do: free
// the port, or run Tether on another one ($TETHER_PORT) and write the
// extension folder again from its window, whose tether.json gives the
// extension its port.
func (e *OtherProgramError) Error() string {
	who := ""
	if e.Holder != "" {
		who = " (" + e.Holder + ")"
	}
	what := "not Tether"
	if e.LikeTether {
		what = "not this config dir's Tether"
	}
	other := e.Port + 1
	if e.Port >= 65535 {
		other = e.Port - 1
	}
	return fmt.Sprintf(OtherProgramPrefix+"%s, %s, answers on 127.0.0.1:%d, Tether's port (%s); nothing was sent to it. "+
		"Quit that program, then start Tether (tether, or tether serve). Or run Tether on another port: TETHER_PORT=%d tether, "+
		"then write the extension from its window (Extension → Write the extension) so the browser dials that port",
		who, what, e.Port, e.Answer, other)
}

// Unwrap makes errors.Is(err, ErrNotRunning) hold.
func (e *OtherProgramError) Unwrap() error { return ErrNotRunning }

// otherProgram is the *OtherProgramError for port with answer, naming the
// process that holds the port where the OS says (PortHolder).
func otherProgram(port int, answer string) *OtherProgramError {
	return &OtherProgramError{Port: port, Holder: PortHolder(port), Answer: answer}
}

// CheckPort asks what answers on 127.0.0.1:port when this config dir's
// daemon record is missing (Tether is not running, or has not written it
// yet). It returns nil when nothing listens (connection refused), when
// port is 0 (a daemon that picks a free port), or when the answer proves
// p's pairing key (this config dir's Tether, starting up); otherwise an
// *OtherProgramError naming what answers: another program, or one that
// answers like Tether but without this config dir's proof (a Tether of
// another config dir, or a program posing as one). It sends only
// /health?nonce= (proveConn), never a token, and waits at most 2 s.
func CheckPort(ctx context.Context, p config.Paths, port int) error {
	if port <= 0 || port > 65535 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil // nothing listens: Tether is simply not running
	}
	defer conn.Close()
	_, err = proveConn(ctx, conn, p, addr)
	var op *OtherProgramError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &op):
		return op
	case errors.Is(err, ErrNotThisTether):
		op := otherProgram(port, "it answers /health like Tether but cannot prove it holds the pairing key of "+p.Dir+": a Tether of another config dir, or a program posing as one")
		op.LikeTether = true
		return op
	default:
		return otherProgram(port, err.Error())
	}
}
