package config

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestApprovalTimeoutSetting(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    time.Duration
		wantErr string
	}{
		{"", DefaultApprovalTimeout, ""},
		{`{}`, DefaultApprovalTimeout, ""},
		{`{"approvalTimeoutSeconds": 5}`, 5 * time.Second, ""},
		{`{"approvalTimeoutSeconds": 3600}`, time.Hour, ""},
		{`{"approvalTimeoutSeconds": -1}`, 0, "approvalTimeoutSeconds must be from 1 to 3600"},
		{`{"approvalTimeoutSeconds": 3601}`, 0, "approvalTimeoutSeconds must be from 1 to 3600"},
		{`{"approvalTimeoutSeconds": "5"}`, 0, "is invalid"},
	} {
		p := Paths{Dir: t.TempDir()}
		if tc.file != "" {
			if err := os.WriteFile(p.SettingsFile(), []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		s, err := p.LoadSettings()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), p.SettingsFile()) {
				t.Errorf("%s: error %v, want one naming the file and saying %q", tc.file, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got := s.ApprovalTimeout(); got != tc.want {
			t.Errorf("%s: ApprovalTimeout %v, want %v", tc.file, got, tc.want)
		}
	}
}

func TestExtensionIDsSetting(t *testing.T) {
	const store = "abcdefghijklmnopabcdefghijklmnop"
	for _, tc := range []struct {
		file    string
		want    []string
		wantErr string
	}{
		{`{}`, nil, ""},
		{`{"extensionIds": ["` + store + `"]}`, []string{store}, ""},
		{`{"extensionIds": ["abc"]}`, nil, `extensionIds: "abc" is not an extension id`},
		{`{"extensionIds": ["ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP"]}`, nil, "is not an extension id"},
		{`{"extensionIds": ["abcdefghijklmnopabcdefghijklmnoz"]}`, nil, "is not an extension id"},
	} {
		p := Paths{Dir: t.TempDir()}
		if err := os.WriteFile(p.SettingsFile(), []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := p.LoadSettings()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), p.SettingsFile()) {
				t.Errorf("%s: error %v, want one naming the file and saying %q", tc.file, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(s.ExtensionIDs, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.file, s.ExtensionIDs, err, tc.want)
		}
	}
}
