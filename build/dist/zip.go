package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"
)

// buildExtensionZip writes out/tether-extension-<version>.zip from the
// built extension in ext: every file as it is, except manifest.json, whose
// "key" member is removed (the rest of its text is kept as written). It
// fails when the manifest has no key, or its version is not version (the
// zip would not be the build it is named after).
func buildExtensionZip(version, ext, out string) (string, error) {
	manifest, err := os.ReadFile(filepath.Join(ext, "manifest.json"))
	if err != nil {
		return "", err
	}
	stripped, err := stripKey(manifest)
	if err != nil {
		return "", err
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(stripped, &m); err != nil {
		return "", fmt.Errorf("manifest.json: %w", err)
	}
	if m.Version != version {
		return "", fmt.Errorf("%s/manifest.json has version %q, not %q: rebuild the extension", ext, m.Version, version)
	}
	path := filepath.Join(out, fmt.Sprintf("tether-extension-%s.zip", version))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err = fs.WalkDir(os.DirFS(ext), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data := stripped
		if name != "manifest.json" {
			if data, err = os.ReadFile(filepath.Join(ext, name)); err != nil {
				return err
			}
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}

// stripKey returns the manifest without its top-level "key" member; an
// error when it has none or does not parse.
func stripKey(manifest []byte) ([]byte, error) {
	v, err := hujson.Parse(manifest)
	if err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("manifest.json is not an object")
	}
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == "key" {
			obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
			return v.Pack(), nil
		}
	}
	return nil, fmt.Errorf("manifest.json has no \"key\" to strip")
}
