package protocol

import (
	"encoding/json"
	"fmt"

	"github.com/invopop/jsonschema"
)

// frameTypes lists every type that appears on the wire, in the order their
// definitions are emitted. Add a type here when you add it to the protocol.
var frameTypes = []any{
	Hello{}, Challenge{}, HelloAck{}, Pairing{}, TabsChanged{}, Refused{}, Request{}, Response{}, Error{},
	TabParams{}, NavigateParams{}, ClickParams{}, TypeParams{}, TabsListParams{}, TabNewParams{},
	SnapshotOptions{}, SnapshotParams{}, DialogEvent{}, RefParams{}, FindParams{}, FindMatch{}, FindResult{},
	ReadResult{}, ReadURLParams{}, ConsoleParams{}, ConsoleMessage{}, ConsoleResult{}, SelectOptionParams{},
	Point{}, HoverParams{}, DragParams{}, PressKeyParams{}, UploadFile{}, FileUploadParams{}, WaitForParams{}, HandleDialogParams{},
	DialogArmResult{}, HistoryParams{}, ScreenshotParams{}, ScreenshotResult{}, ScreenshotGeometry{}, EvaluateParams{}, EvaluateResult{},
	PageResult{}, TabInfo{}, TabsListResult{}, ScrollParams{}, ScrollReport{}, TabOwner{}, TabOwnerParams{},
	NetworkParams{}, Header{}, NetRequest{}, NetworkResult{}, Download{}, DownloadsResult{},
	DownloadEvent{}, DownloadDecideParams{}, InstallMarker{}, Reload{},
}

// Schema returns the JSON Schema (draft 2020-12) of every protocol type, as
// indented JSON with a trailing newline. Its $defs hold one entry per type;
// the root additionally records the protocol Version as "x-protocol-version".
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{
		DoNotReference:            false,
		ExpandedStruct:            false,
		AllowAdditionalProperties: false,
	}
	// Doc comments become schema descriptions, and so TSDoc in the generated
	// TypeScript. AddGoComments reads ./protocol relative to the working
	// directory, so Schema must be called from the module root.
	if err := r.AddGoComments("github.com/tether-browser/tether", "./protocol"); err != nil {
		return nil, fmt.Errorf("read protocol doc comments (run from the module root): %w", err)
	}
	root := &jsonschema.Schema{
		Version:     jsonschema.Version,
		ID:          "https://tether.invalid/protocol.schema.json",
		Title:       "TetherProtocol",
		Description: "Frames between the Tether daemon and its extension. Generated from protocol/protocol.go; do not edit.",
		Definitions: jsonschema.Definitions{},
		Extras:      map[string]any{"x-protocol-version": Version},
	}
	for _, t := range frameTypes {
		s := r.Reflect(t)
		for name, def := range s.Definitions {
			root.Definitions[name] = def
		}
	}
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
