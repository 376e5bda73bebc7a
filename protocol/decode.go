package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the daemon's decoder of what the extension sends: its hello,
// the frames that follow (response, tabs_changed) and the result of each
// method. Everything here comes from a socket that any local process may
// open, so a frame is accepted only when the value decoded from it fits its
// schema (the JSON Schema that Schema() derives from protocol.go: types,
// enums, result objects, required lists), and a refusal is a short,
// one-line DecodeError that quotes none of the frame's content (logs never
// hold page content). As with encoding/json, unknown fields are ignored (a
// newer extension may add some) and keys match case-insensitively.
// FuzzDecode checks both promises.

// MaxDecodeErrorLen bounds the length of a DecodeError's text, in bytes.
const MaxDecodeErrorLen = 200

// DecodeError says why a frame or result was refused: What names it
// ("hello", "response", "tabs_changed", "frame", or "<method> result") and
// Reason is one line without control characters, at most
// MaxDecodeErrorLen bytes with What.
type DecodeError struct {
	What   string
	Reason string
}

func (e *DecodeError) Error() string { return e.What + ": " + e.Reason }

// decodeErr builds a DecodeError whose Reason is reason made safe for a log
// line: control and invalid UTF-8 characters escaped, cut to fit.
func decodeErr(what, reason string) *DecodeError {
	var b strings.Builder
	for i, r := range reason {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(reason[i:]); size == 1 {
				b.WriteString(`\ufffd`)
				continue
			}
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	if limit := MaxDecodeErrorLen - len(what) - 2; len(s) > limit {
		cut := limit - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return &DecodeError{What: what, Reason: s}
}

// unmarshal decodes data into v, refusing anything but a JSON object.
func unmarshal(what string, data []byte, v any) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return decodeErr(what, "not a JSON object")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return decodeErr(what, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// MaxProfileIDLen is the longest profile id a hello may claim, in bytes.
const MaxProfileIDLen = 128

// ValidProfileID reports whether id is 1 to MaxProfileIDLen ASCII letters,
// digits, '-' and '_' (the extension's ids are crypto.randomUUID()s). Any
// local process may claim an id, and ids are printed in terminals and
// logs: nothing else (no escape sequences, control or bidirectional
// characters, spaces) may reach them.
func ValidProfileID(id string) bool {
	if id == "" || len(id) > MaxProfileIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// DecodeHello decodes the first frame of a connection. It checks the
// frame's type, that profileId is valid (ValidProfileID), and the shared tabs;
// the protocol version is left to the caller, which names both versions
// when they differ. Tabs is never nil in an accepted hello.
func DecodeHello(data []byte) (Hello, error) {
	var h Hello
	if err := unmarshal("hello", data, &h); err != nil {
		return Hello{}, err
	}
	if h.Type != TypeHello {
		return Hello{}, decodeErr("hello", "the first frame must be a hello")
	}
	if !ValidProfileID(h.ProfileID) {
		return Hello{}, decodeErr("hello", "needs a profileId of 1 to 128 ASCII letters, digits, '-' or '_'")
	}
	if h.Tabs == nil {
		h.Tabs = []TabInfo{}
	}
	return h, nil
}

// checkResponse accepts a decoded response: an id and exactly one of
// result (a JSON object) and error (with a known code).
func checkResponse(r Response) (any, error) {
	if r.ID == "" {
		return nil, decodeErr("response", "no id")
	}
	hasResult := len(r.Result) > 0 && string(r.Result) != "null"
	switch {
	case hasResult && r.Error != nil:
		return nil, decodeErr("response", "has both result and error")
	case !hasResult && r.Error == nil:
		return nil, decodeErr("response", "has neither result nor error")
	case hasResult && r.Result[0] != '{':
		return nil, decodeErr("response", "result is not a JSON object")
	case r.Error != nil && !knownCode(r.Error.Code):
		return nil, decodeErr("response", fmt.Sprintf("unknown error code %.40q", string(r.Error.Code)))
	}
	if !hasResult {
		r.Result = nil
	}
	return &r, nil
}

// peekType is the frame's type when it is the object's first member, read
// without scanning the rest of the frame; "" otherwise.
func peekType(data []byte) FrameType {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	if k, err := dec.Token(); err != nil || k != "type" {
		return ""
	}
	v, err := dec.Token()
	if err != nil {
		return ""
	}
	s, _ := v.(string)
	return FrameType(s)
}

// DecodeFrame decodes a frame the extension sends after hello: a
// *Response, a *TabsChanged or a *DownloadEvent. A response must carry an id and exactly one
// of result (a JSON object) and error (with a known code); a tabs_changed
// must name a known change. TabsChanged.Tabs is never nil once accepted.
func DecodeFrame(data []byte) (any, error) {
	// A response (a snapshot's can be megabytes) that names its type first,
	// as the extension writes it, is decoded once: the envelope's own pass
	// over the whole frame was a third of the daemon's work on it. Anything
	// else, or a response that decodes otherwise, goes the full way below.
	if peekType(data) == TypeResponse {
		var r Response
		if err := json.Unmarshal(data, &r); err == nil && r.Type == TypeResponse {
			return checkResponse(r)
		}
	}
	var env Envelope
	if err := unmarshal("frame", data, &env); err != nil {
		return nil, err
	}
	switch env.Type {
	case TypeResponse:
		var r Response
		if err := unmarshal("response", data, &r); err != nil {
			return nil, err
		}
		return checkResponse(r)
	case TypeTabsChanged:
		var tc TabsChanged
		if err := unmarshal("tabs_changed", data, &tc); err != nil {
			return nil, err
		}
		switch tc.Change {
		case TabOpened, TabClosed, TabNavigated, TabTitle, TabShared, TabUnshared, TabActivated, TabOwnerChanged:
		default:
			return nil, decodeErr("tabs_changed", fmt.Sprintf("unknown change %.40q", string(tc.Change)))
		}
		if tc.Tabs == nil {
			tc.Tabs = []TabInfo{}
		}
		return &tc, nil
	case TypeDownload:
		var ev DownloadEvent
		if err := unmarshal("download", data, &ev); err != nil {
			return nil, err
		}
		switch {
		case ev.Event != DownloadStarted && ev.Event != DownloadEnded:
			return nil, decodeErr("download", fmt.Sprintf("unknown event %.40q", string(ev.Event)))
		case ev.Download.ID < 0 || ev.Download.Tab <= 0:
			return nil, decodeErr("download", "needs a download id and a tab number")
		}
		return &ev, nil
	}
	return nil, decodeErr("frame", fmt.Sprintf("unexpected type %.40q", string(env.Type)))
}

// knownCode reports whether c is one of ErrorCodes.
func knownCode(c ErrorCode) bool {
	return slices.Contains(ErrorCodes, c)
}

// NewResult returns a pointer to a new value of method's result type
// (see the Method constants), or nil for an unknown method.
func NewResult(method Method) any {
	switch method {
	case MethodNavigate, MethodSnapshot, MethodClick, MethodType, MethodTabNew, MethodSelectOption, MethodHover,
		MethodDrag, MethodPressKey, MethodFileUpload, MethodWaitFor, MethodHistory, MethodScroll:
		return &PageResult{}
	case MethodTabsList, MethodTabClose, MethodTabSelect:
		return &TabsListResult{}
	case MethodFind:
		return &FindResult{}
	case MethodRead, MethodReadURL:
		return &ReadResult{}
	case MethodConsole:
		return &ConsoleResult{}
	case MethodHandleDialog:
		return &DialogArmResult{}
	case MethodScreenshot:
		return &ScreenshotResult{}
	case MethodEvaluate:
		return &EvaluateResult{}
	case MethodTabOwner:
		return &TabInfo{}
	case MethodNetwork:
		return &NetworkResult{}
	case MethodDownloads:
		return &DownloadsResult{}
	case MethodDownloadDecide:
		return &Download{}
	}
	return nil
}

// DecodeResult decodes raw, the result of a method call, into a new value
// of the method's result type (a pointer, as NewResult gives) and checks
// what Go's decoder does not: dialog kinds, and that lists the schema
// requires are present (nil lists are made empty).
func DecodeResult(method Method, raw json.RawMessage) (any, error) {
	what := fmt.Sprintf("%.40s result", string(method))
	v := NewResult(method)
	if v == nil {
		return nil, decodeErr(what, "unknown method")
	}
	if err := unmarshal(what, raw, v); err != nil {
		return nil, err
	}
	checkDialogs := func(ds []DialogEvent) error {
		for _, d := range ds {
			switch d.Kind {
			case "alert", "confirm", "prompt", "beforeunload":
			default:
				return decodeErr(what, fmt.Sprintf("unknown dialog kind %.40q", d.Kind))
			}
		}
		return nil
	}
	switch r := v.(type) {
	case *PageResult:
		if err := checkDialogs(r.Dialogs); err != nil {
			return nil, err
		}
		if err := unpackSnapshot(r); err != nil {
			return nil, decodeErr(what, err.Error())
		}
	case *DialogArmResult:
		if err := checkDialogs(r.Dialogs); err != nil {
			return nil, err
		}
	case *TabsListResult:
		if r.Tabs == nil {
			r.Tabs = []TabInfo{}
		}
	case *FindResult:
		if r.Matches == nil {
			r.Matches = []FindMatch{}
		}
	case *ConsoleResult:
		if r.Messages == nil {
			r.Messages = []ConsoleMessage{}
		}
	case *NetworkResult:
		if r.Requests == nil {
			r.Requests = []NetRequest{}
		}
	case *DownloadsResult:
		if r.Downloads == nil {
			r.Downloads = []Download{}
		}
	}
	return v, nil
}

// unpackSnapshot moves a packed snapshot (PageResult.SnapshotGzip) into
// Snapshot. Errors: both set, not base64, not gzip, more than
// MaxUnpackedSnapshot bytes. Invalid UTF-8 is replaced (U+FFFD), as the JSON
// decoder does with a string.
func unpackSnapshot(r *PageResult) error {
	if r.SnapshotGzip == "" {
		return nil
	}
	if r.Snapshot != "" {
		return errors.New("has both snapshot and snapshotGzip")
	}
	packed, err := base64.StdEncoding.DecodeString(r.SnapshotGzip)
	if err != nil {
		return errors.New("snapshotGzip is not base64")
	}
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return errors.New("snapshotGzip is not gzip")
	}
	var sb strings.Builder
	sb.Grow(unpackedSizeHint(packed))
	n, err := io.Copy(&sb, io.LimitReader(zr, MaxUnpackedSnapshot+1))
	switch {
	case err != nil:
		return fmt.Errorf("snapshotGzip does not unpack: %v", err)
	case n > MaxUnpackedSnapshot:
		return fmt.Errorf("snapshotGzip unpacks to more than %d MiB", MaxUnpackedSnapshot>>20)
	}
	r.Snapshot, r.SnapshotGzip = strings.ToValidUTF8(sb.String(), "\uFFFD"), ""
	return nil
}

// maxPackRatio is the most deflate (RFC 1951) can shrink its input: a
// 258-byte match per code of about 2 bits, some 1032 to 1. A trailer claiming
// more than this many times its member's length is not believed.
const maxPackRatio = 1032

// unpackedSizeHint is the size a gzip member says it unpacks to (ISIZE, its
// last four bytes: RFC 1952, section 2.3.1), so that the text is unpacked
// into one buffer of that size instead of one grown by doubling, which
// copied a large snapshot's megabytes several times over. 0 (no hint) when
// the claim is more than maxPackRatio times packed's length or more than
// MaxUnpackedSnapshot: the claim is only a hint (gzip checks it at the end),
// and a frame cannot make the daemon set aside more memory than a true member
// of its length could unpack to.
func unpackedSizeHint(packed []byte) int {
	if len(packed) < 4 {
		return 0
	}
	size := int64(binary.LittleEndian.Uint32(packed[len(packed)-4:]))
	if size > MaxUnpackedSnapshot || size > int64(len(packed))*maxPackRatio {
		return 0
	}
	return int(size)
}
