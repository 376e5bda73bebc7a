package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
)

// Control calls the running daemon's local API with the control token, for
// tests that send what localclient never would (malformed bodies): method
// and path, body as JSON (nil: none), the answer decoded into out (may be
// nil). An error answer's message (apitype.Error) is the error.
func Control(ctx context.Context, p config.Paths, method, path string, body, out any) error {
	rec, err := p.ReadDaemonRecord()
	if err != nil {
		return err
	}
	token, err := p.ReadControlToken()
	if err != nil {
		return err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, rec.URL()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var ce apitype.Error
		if json.NewDecoder(resp.Body).Decode(&ce) == nil && ce.Error != "" {
			return errors.New(ce.Error)
		}
		return fmt.Errorf("daemon answered %s", resp.Status)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}
