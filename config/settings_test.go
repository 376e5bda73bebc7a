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
		s, ok := loadSettingsCase(t, tc.file, tc.wantErr)
		if !ok {
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
		s, ok := loadSettingsCase(t, tc.file, tc.wantErr)
		if ok && !slices.Equal(s.ExtensionIDs, tc.want) {
			t.Errorf("%s: %v, want %v", tc.file, s.ExtensionIDs, tc.want)
		}
	}
}

// loadSettingsCase loads file ("": no file) as settings.json. With wantErr,
// it checks that loading fails with an error naming the file and saying
// wantErr, and returns false; otherwise it reports an error and returns
// whether loading succeeded.
func loadSettingsCase(t *testing.T, file, wantErr string) (Settings, bool) {
	t.Helper()
	p := Paths{Dir: t.TempDir()}
	if file != "" {
		if err := os.WriteFile(p.SettingsFile(), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.LoadSettings()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), p.SettingsFile()) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", file, err, wantErr)
		}
		return s, false
	}
	if err != nil {
		t.Errorf("%s: %v", file, err)
		return s, false
	}
	return s, true
}

func TestRemoteSetting(t *testing.T) {
	for _, tc := range []struct {
		file    string
		hosts   []string
		calls   int
		wantErr string
	}{
		{`{}`, nil, DefaultCallsPerMinute, ""},
		{`{"remote": {"hosts": ["Tether.Example.org"]}}`, []string{"tether.example.org"}, DefaultCallsPerMinute, ""},
		{`{"remote": {"hosts": ["a.example", "b.example"], "callsPerMinute": 5}}`, []string{"a.example", "b.example"}, 5, ""},
		{`{"remote": {"hosts": []}}`, nil, 0, "remote.hosts is empty"},
		{`{"remote": {"hosts": ["tether.example.org:443"]}}`, nil, 0, "is not a host name"},
		{`{"remote": {"hosts": ["https://tether.example.org"]}}`, nil, 0, "is not a host name"},
		{`{"remote": {"hosts": ["localhost"]}}`, nil, 0, "is not a host name"},
		{`{"remote": {"hosts": ["10.0.0.1"]}}`, nil, 0, "is not a host name"},
		{`{"remote": {"hosts": ["-bad.example"]}}`, nil, 0, "is not a host name"},
		{`{"remote": {"hosts": ["a.example"], "callsPerMinute": 0}}`, nil, 0, "callsPerMinute must be from 1 to 6000"},
		{`{"remote": {"hosts": ["a.example"], "callsPerMinute": 6001}}`, nil, 0, "callsPerMinute must be from 1 to 6000"},
		{`{"remote": {"hosts": ["a.example"], "port": 1}}`, nil, 0, "is invalid"},
	} {
		s, ok := loadSettingsCase(t, tc.file, tc.wantErr)
		if !ok {
			continue
		}
		if !slices.Equal(s.RemoteHosts(), tc.hosts) || s.CallsPerMinute() != tc.calls {
			t.Errorf("%s: hosts %v calls %d, want %v %d", tc.file, s.RemoteHosts(), s.CallsPerMinute(), tc.hosts, tc.calls)
		}
	}
}
