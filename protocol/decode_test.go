package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// methods lists every Method, in the order FuzzDecode's selector picks them.
var methods = []Method{
	MethodNavigate, MethodSnapshot, MethodClick, MethodType, MethodTabsList, MethodTabNew, MethodTabClose,
	MethodTabSelect, MethodFind, MethodRead, MethodConsole, MethodSelectOption, MethodHover, MethodDrag,
	MethodPressKey, MethodFileUpload, MethodWaitFor, MethodHandleDialog, MethodHistory, MethodScreenshot,
	MethodEvaluate, MethodReadURL, MethodNetwork, MethodDownloads, MethodDownloadDecide,
}

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
	schemaErr  error
)

// schemaFor returns the compiled definition name of the generated schema
// (extension/src/protocol.schema.json, kept current by TestSchemaIsCurrent):
// the oracle the decoder's accepted values are checked against.
func schemaFor(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		f, err := os.Open("../extension/src/protocol.schema.json")
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		const url = "https://tether.invalid/protocol.schema.json"
		c := jsonschema.NewCompiler()
		if schemaErr = c.AddResource(url, doc); schemaErr != nil {
			return
		}
		schemas = map[string]*jsonschema.Schema{}
		for _, n := range []string{"Hello", "Response", "TabsChanged", "PageResult", "TabsListResult", "FindResult",
			"ReadResult", "ConsoleResult", "DialogArmResult", "ScreenshotResult", "EvaluateResult", "NetworkResult", "DownloadsResult", "Download", "DownloadEvent"} {
			s, err := c.Compile(url + "#/$defs/" + n)
			if err != nil {
				schemaErr = err
				return
			}
			schemas[n] = s
		}
	})
	if schemaErr != nil {
		t.Fatalf("compile the protocol schema: %v", schemaErr)
	}
	return schemas[name]
}

// mustFitSchema fails unless v, marshalled, fits the schema definition name.
func mustFitSchema(t testing.TB, name string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("accepted %s does not marshal: %v", name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemaFor(t, name).Validate(inst); err != nil {
		t.Fatalf("accepted %s does not fit its schema: %v\nvalue: %.500s", name, err, b)
	}
}

// mustBeClear fails unless err is a *DecodeError about what, one short
// line without control characters (it is logged).
func mustBeClear(t testing.TB, err error, what ...string) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
	ok := false
	for _, w := range what {
		ok = ok || de.What == w
	}
	msg := err.Error()
	switch {
	case !ok:
		t.Fatalf("error %q is about %q, want one of %q", msg, de.What, what)
	case de.Reason == "":
		t.Fatalf("error %q has no reason", msg)
	case len(msg) > MaxDecodeErrorLen:
		t.Fatalf("error is %d bytes, more than %d: %q", len(msg), MaxDecodeErrorLen, msg)
	case !utf8.ValidString(msg):
		t.Fatalf("error is not valid UTF-8: %q", msg)
	case strings.IndexFunc(msg, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0:
		t.Fatalf("error holds a control or format character: %q", msg)
	}
}

// roundTrip fails unless the accepted value, marshalled and decoded again
// by decode, is accepted and encodes the same: accepted values are stable
// (compared as JSON, where an empty optional list and none are the same).
func roundTrip[T any](t testing.TB, v T, decode func([]byte) (T, error)) {
	t.Helper()
	b, _ := json.Marshal(v)
	again, err := decode(b)
	if err != nil {
		t.Fatalf("accepted value refused once re-encoded: %v\n%.500s", err, b)
	}
	if b2, _ := json.Marshal(again); !bytes.Equal(b, b2) {
		t.Fatalf("accepted value changed through a round trip:\n%.500s\n%.500s", b, b2)
	}
}

// FuzzDecode feeds the daemon's wire decoder what a hostile socket could
// send. sel picks the path: even, the data is a hello (DecodeHello); odd,
// a later frame (DecodeFrame), whose result, for a response, is also
// decoded as the result of methods[sel/2 % len(methods)] (DecodeResult).
// Invariants: no panic; a refusal is a clear *DecodeError (one line, no
// control characters, at most MaxDecodeErrorLen bytes); an accepted value
// fits its JSON Schema definition and survives a round trip unchanged.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), []byte(`{"type":"hello","protocol":4,"profileId":"0721cbc6-1f7e-4f3b-9a52-0a7a2d4c9e11","label":"Work","extVersion":"0.2.0","tabs":[]}`))
	f.Add(uint8(0), []byte(`{"type":"hello","protocol":4,"profileId":"0721cbc6-1f7e-4f3b-9a52-0a7a2d4c9e11","label":"Work","extVersion":"0.2.0","slug":"work","proof":"97b3062330757e01eb073fb66d87c6514e8a3c81553bd648e80b98198c4c680e","tabs":[]}`))
	// A hello of protocol 3 still carries its secret: decoded (the caller
	// then refuses the version), the secret dropped.
	f.Add(uint8(0), []byte(`{"type":"hello","protocol":3,"profileId":"0721cbc6-1f7e-4f3b-9a52-0a7a2d4c9e11","label":"Work","extVersion":"0.2.0","secret":"s3cr3t","tabs":[]}`))
	f.Add(uint8(1), []byte(`{"type":"response","id":"7","result":{"tab":1,"url":"https://example.com/","title":"Example","snapshot":"- heading \"Example\" [ref=e1]"}}`))
	f.Add(uint8(1), []byte(`{"type":"response","id":"8","error":{"code":"stale_ref","message":"take a new snapshot"}}`))
	f.Add(uint8(1), []byte(`{"type":"download","event":"started","download":{"id":3,"tab":1,"url":"https://a.test/f.pdf","filename":"","state":"in_progress","received":0,"total":-1,"start":1},"site":"https://a.test","paused":true}`))
	f.Add(uint8(1), []byte(`{"type":"tabs_changed","change":"opened","tab":2,"tabs":[{"tab":2,"url":"about:blank","title":"","active":true,"current":true}]}`))
	schemaFor(f, "Hello") // fail at once if the oracle is missing
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		if sel%2 == 0 {
			h, err := DecodeHello(data)
			if err != nil {
				mustBeClear(t, err, "hello")
				return
			}
			// The id's charset, written out again rather than trusting ValidProfileID.
			if h.Type != TypeHello || h.ProfileID == "" || strings.ContainsFunc(h.ProfileID, func(r rune) bool {
				return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
			}) || len(h.ProfileID) > 128 {
				t.Fatalf("accepted hello %+v", h)
			}
			mustFitSchema(t, "Hello", h)
			roundTrip(t, h, DecodeHello)
			return
		}
		frame, err := DecodeFrame(data)
		if err != nil {
			mustBeClear(t, err, "frame", "response", "tabs_changed", "download")
			return
		}
		switch fr := frame.(type) {
		case *DownloadEvent:
			if fr.Download.Tab <= 0 || (fr.Event != DownloadStarted && fr.Event != DownloadEnded) {
				t.Fatalf("accepted download %+v", fr)
			}
			mustFitSchema(t, "DownloadEvent", fr)
		case *TabsChanged:
			mustFitSchema(t, "TabsChanged", fr)
			roundTrip(t, fr, func(b []byte) (*TabsChanged, error) {
				v, err := DecodeFrame(b)
				tc, _ := v.(*TabsChanged)
				return tc, err
			})
		case *Response:
			if fr.ID == "" || (fr.Result == nil) == (fr.Error == nil) {
				t.Fatalf("accepted response %+v: want an id and exactly one of result and error", fr)
			}
			mustFitSchema(t, "Response", fr)
			if fr.Result == nil {
				return
			}
			m := methods[int(sel/2)%len(methods)]
			res, err := DecodeResult(m, fr.Result)
			if err != nil {
				mustBeClear(t, err, string(m)+" result")
				return
			}
			name := reflect.TypeOf(res).Elem().Name()
			if reflect.TypeOf(res) != reflect.TypeOf(NewResult(m)) {
				t.Fatalf("%s result decoded as %T", m, res)
			}
			mustFitSchema(t, name, res)
			roundTrip(t, res, func(b []byte) (any, error) { return DecodeResult(m, b) })
		default:
			t.Fatalf("DecodeFrame returned %T", frame)
		}
	})
}

// Every method has a result type, and an unknown one is refused clearly.
func TestDecodeResultCoversEveryMethod(t *testing.T) {
	for _, m := range methods {
		if NewResult(m) == nil {
			t.Errorf("%s has no result type", m)
		}
	}
	_, err := DecodeResult("bogus", json.RawMessage(`{}`))
	mustBeClear(t, err, "bogus result")
}

// TestValidProfileID: the extension's ids and the id charset pass; anything
// that could move a terminal's cursor, recolor it or flip a line does not.
func TestValidProfileID(t *testing.T) {
	for _, id := range []string{"0721cbc6-1f7e-4f3b-9a52-0a7a2d4c9e11", "a", "A_b-9", strings.Repeat("z", 128)} {
		if !ValidProfileID(id) {
			t.Errorf("ValidProfileID(%q) = false", id)
		}
	}
	for _, id := range []string{"", strings.Repeat("z", 129), "a\x1b[1A", "a\x1b]0;t\x07", "a\rb", "a\nb", "a\u202eb", "a b", "a.b", "a/b", "é", "a\x00"} {
		if ValidProfileID(id) {
			t.Errorf("ValidProfileID(%q) = true", id)
		}
	}
}

// Refusals a hostile socket meets, each with its reason.
func TestDecodeRefusals(t *testing.T) {
	long := strings.Repeat("9", 5000)
	for _, tc := range []struct {
		hello bool
		data  string
		want  string
	}{
		{true, `[]`, "hello: not a JSON object"},
		{true, `{"type":"response","profileId":"x"}`, "hello: the first frame must be a hello"},
		{true, `{"type":"hello","profileId":""}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"` + strings.Repeat("a", 129) + `"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"0721cbc6\u001b[1A\u001b[2K"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"0721cbc6\u001b]0;pwned\u0007"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"0721cbc6\r\nabc"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"0721cbc6\u202eabc"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"0721 cbc6"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"0721cbc6é"}`, "hello: needs a profileId of 1 to 128 ASCII letters"},
		{true, `{"type":"hello","profileId":"x","protocol":` + long + `}`, "hello: cannot unmarshal number"},
		{false, `{"type":"response","result":{}}`, "response: no id"},
		{false, `{"type":"response","id":"1"}`, "response: has neither result nor error"},
		{false, `{"type":"response","id":"1","result":null}`, "response: has neither result nor error"},
		{false, `{"type":"response","id":"1","result":{},"error":{"code":"internal","message":""}}`, "response: has both result and error"},
		{false, `{"type":"response","id":"1","result":[1]}`, "response: result is not a JSON object"},
		{false, `{"type":"response","id":"1","error":{"code":"bogus\u0007"}}`, `response: unknown error code "bogus\a"`},
		{false, `{"type":"tabs_changed","change":"moved"}`, `tabs_changed: unknown change "moved"`},
		{false, `{"type":"download","event":"paused","download":{"tab":1}}`, `download: unknown event "paused"`},
		{false, `{"type":"download","event":"started","download":{"id":3}}`, "download: needs a download id and a tab number"},
		{false, `{"type":"download","event":"started","download":"x"}`, "download: cannot unmarshal"},
		{false, `{"type":"hello\u001b[31m"}`, `frame: unexpected type "hello\x1b[31m"`},
	} {
		var err error
		if tc.hello {
			_, err = DecodeHello([]byte(tc.data))
		} else {
			_, err = DecodeFrame([]byte(tc.data))
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%.80s: %v; want %q", tc.data, err, tc.want)
			continue
		}
		mustBeClear(t, err, "hello", "frame", "response", "tabs_changed", "download")
	}
	_, err := DecodeResult(MethodSnapshot, json.RawMessage(`{"tab":1,"dialogs":[{"kind":"popup"}]}`))
	if err == nil || err.Error() != `snapshot result: unknown dialog kind "popup"` {
		t.Errorf("unknown dialog kind: %v", err)
	}
}

// TestErrorCodesMatchSchema: the codes the decoder accepts are the codes
// the schema (and so the extension's generated types) allows, so a code the
// extension sends is never dropped as malformed (it was, for "duplicate").
func TestErrorCodesMatchSchema(t *testing.T) {
	f, _ := reflect.TypeOf(Error{}).FieldByName("Code")
	var schema []string
	for _, part := range strings.Split(f.Tag.Get("jsonschema"), ",") {
		if v, ok := strings.CutPrefix(part, "enum="); ok {
			schema = append(schema, v)
		}
	}
	var codes []string
	for _, c := range ErrorCodes {
		codes = append(codes, string(c))
	}
	slices.Sort(schema)
	slices.Sort(codes)
	if !slices.Equal(schema, codes) {
		t.Fatalf("Error.Code's schema enum %v, ErrorCodes %v: list every code in both", schema, codes)
	}
	for _, c := range ErrorCodes {
		frame := fmt.Sprintf(`{"type":"response","id":"1","error":{"code":%q,"message":"m"}}`, c)
		if _, err := DecodeFrame([]byte(frame)); err != nil {
			t.Errorf("a response with error code %q is refused: %v", c, err)
		}
	}
}

// TestDecodeFrameTypeFirst: a response that names its type first is decoded
// in one pass (peekType); whatever the order of its members, duplicates or
// damage, DecodeFrame answers as decoding the envelope first would.
func TestDecodeFrameTypeFirst(t *testing.T) {
	for _, data := range []string{
		`{"type":"response","id":"1","result":{"tab":2}}`,
		`{"id":"1","result":{"tab":2},"type":"response"}`,
		` {"type" : "response", "id":"1","error":{"code":"internal","message":"x"}}`,
		`{"type":"response","id":"1","result":{"tab":2},"type":"tabs_changed","change":"opened","tabs":[]}`,
		`{"type":"tabs_changed","change":"opened","tabs":[],"type":"response","id":"1","result":{}}`,
		`{"type":"response","id":"1","result":{"tab":2}`,
		`{"type":"response","id":1,"result":{}}`,
		`{"type":"response","ID":"1","Result":{}}`,
		`{"type":"response","result":{}}`,
	} {
		got, err := DecodeFrame([]byte(data))
		want, wantErr := decodeFrameEnvelopeFirst([]byte(data))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, %v; want %#v, %v", data, got, err, want, wantErr)
		}
	}
}

// decodeFrameEnvelopeFirst is DecodeFrame without the one-pass path.
func decodeFrameEnvelopeFirst(data []byte) (any, error) {
	var env Envelope
	if err := unmarshal("frame", data, &env); err != nil {
		return nil, err
	}
	if env.Type != TypeResponse {
		// Not a response: DecodeFrame takes the same path for it.
		return DecodeFrame(data)
	}
	var r Response
	if err := unmarshal("response", data, &r); err != nil {
		return nil, err
	}
	return checkResponse(r)
}

// packed is text gzip-compressed, in base64: a PageResult.SnapshotGzip.
func packed(t *testing.T, text []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(text); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestDecodeResultUnpacksSnapshot(t *testing.T) {
	text := strings.Repeat("- link \"Open row ✓\" [ref=e12]\n", 5000)
	raw, _ := json.Marshal(map[string]any{"tab": 1, "url": "https://example.com/", "title": "T", "snapshot": "", "snapshotGzip": packed(t, []byte(text))})
	res, err := DecodeResult(MethodSnapshot, raw)
	if err != nil {
		t.Fatal(err)
	}
	p := res.(*PageResult)
	if p.Snapshot != text || p.SnapshotGzip != "" {
		t.Fatalf("unpacked %d bytes (want %d), SnapshotGzip %q left", len(p.Snapshot), len(text), p.SnapshotGzip)
	}
	// Invalid UTF-8 inside is replaced, as a JSON string's would be.
	raw, _ = json.Marshal(map[string]any{"tab": 1, "snapshotGzip": packed(t, []byte("a\xffb"))})
	if res, err := DecodeResult(MethodClick, raw); err != nil || res.(*PageResult).Snapshot != "a\uFFFDb" {
		t.Fatalf("invalid UTF-8: %v, %+v", err, res)
	}

	bomb := make([]byte, MaxUnpackedSnapshot+1)
	for _, c := range []struct{ name, result, want string }{
		{"both", `{"tab":1,"snapshot":"x","snapshotGzip":"` + packed(t, []byte("y")) + `"}`, "both snapshot and snapshotGzip"},
		{"not base64", `{"tab":1,"snapshotGzip":"%%%"}`, "not base64"},
		{"not gzip", `{"tab":1,"snapshotGzip":"` + base64.StdEncoding.EncodeToString([]byte("plain text")) + `"}`, "not gzip"},
		{"cut short", `{"tab":1,"snapshotGzip":"` + packed(t, []byte(text))[:200] + `"}`, "does not unpack"},
		{"too large", `{"tab":1,"snapshotGzip":"` + packed(t, bomb) + `"}`, "unpacks to more than 64 MiB"},
	} {
		_, err := DecodeResult(MethodSnapshot, json.RawMessage(c.result))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to say %q", c.name, err, c.want)
		}
	}
}

// The gzip trailer's size sizes the unpacking buffer only when it is
// believable: a frame that claims more is unpacked as if it claimed nothing,
// and a wrong claim changes only the buffer, never the text.
func TestUnpackedSizeHint(t *testing.T) {
	text := []byte(strings.Repeat("- row \"Open row ✓\" [ref=e12]\n", 2000))
	gz, _ := base64.StdEncoding.DecodeString(packed(t, text))
	if got := unpackedSizeHint(gz); got != len(text) {
		t.Errorf("hint %d, want the text's %d bytes", got, len(text))
	}
	claim := func(size uint32) []byte {
		b := bytes.Clone(gz)
		binary.LittleEndian.PutUint32(b[len(b)-4:], size)
		return b
	}
	for _, c := range []struct {
		name   string
		packed []byte
		want   int
	}{
		{"shorter than a trailer", []byte{1, 2, 3}, 0},
		{"over the ratio", claim(uint32(len(gz)*maxPackRatio + 1)), 0},
		{"over the cap", claim(MaxUnpackedSnapshot + 1), 0},
		{"the most a frame may claim", claim(uint32(len(gz) * maxPackRatio)), len(gz) * maxPackRatio},
	} {
		if got := unpackedSizeHint(c.packed); got != c.want {
			t.Errorf("%s: hint %d, want %d", c.name, got, c.want)
		}
	}
	// A trailer that claims too little: gzip's own check refuses the member.
	raw, _ := json.Marshal(map[string]any{"tab": 1, "snapshotGzip": base64.StdEncoding.EncodeToString(claim(10))})
	if _, err := DecodeResult(MethodSnapshot, raw); err == nil || !strings.Contains(err.Error(), "does not unpack") {
		t.Errorf("a trailer claiming 10 bytes: err %v, want it not to unpack", err)
	}
}
